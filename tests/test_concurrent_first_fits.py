"""First fits of a process on several threads at once (issue 33).

Kernels are loaded or compiled the first time a process needs them. Several threads doing
that at once (a forest with ``n_jobs`` on joblib's thread backend, GridSearchCV on threads)
must all succeed, and so must every later fit, with an empty kernel cache and with a warm
one. Each run is a fresh subprocess, since a test process has long loaded its kernels.
"""

import json
import os
import subprocess
import sys

#: Compositions whose kernels are built on first use: the specialised split search (gini,
#: entropy, asymmetric, counterexample), the histogram and UDT kernels, surrogates.
COMPOSITIONS = {
    "gini": {},
    "entropy": {"criterion": "entropy"},
    "histogram": {"splitter": "histogram"},
    "udt": {"splitter": "udt", "propagator": "udt", "evaluator": "udt"},
    "surrogate": {"propagator": "surrogate", "evaluator": "surrogate"},
    "asymmetric": {"criterion": "asymmetric_entropy"},
    "counterexample": {"criterion": "counterexample_entropy", "labeler": "complementary"},
}

SCRIPT = r"""
import json, sys, threading
import numpy as np
from treekit_core import ForestClassifier, TreeClassifier
from treekit_core.registry import get_registry

compositions = json.loads(sys.argv[1])
criteria = get_registry().components("criterion")
splitters = get_registry().components("splitter")
rng = np.random.default_rng(0)
X = rng.normal(size=(240, 4))
y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
errors = {}

def fit(name, params):
    try:
        TreeClassifier(max_depth=4, **params).fit(X, y)
    except Exception as error:  # reported, not raised: the parent asserts on it
        errors.setdefault(name, repr(error))

usable = {
    name: params
    for name, params in compositions.items()
    if params.get("criterion", "gini") in criteria
    and params.get("splitter", "exhaustive") in splitters
}
threads = [
    threading.Thread(target=fit, args=(name, params))
    for name, params in usable.items() for _ in range(3)
]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
# a forest on joblib's default (thread) backend, GridSearchCV on threads, then serial
# fits of every composition
try:
    ForestClassifier(n_estimators=4, n_jobs=2, random_state=0).fit(X, y)
except Exception as error:
    errors["forest"] = repr(error)
try:
    import joblib
    from sklearn.model_selection import GridSearchCV

    with joblib.parallel_backend("threading", n_jobs=2):
        GridSearchCV(
            TreeClassifier(criterion="misclassification"), {"max_depth": [2, 3]}, cv=3
        ).fit(X, y)
except Exception as error:
    errors["grid search"] = repr(error)
for name, params in usable.items():
    fit(name + " (serial, after)", params)
print(json.dumps({"errors": errors, "fitted": sorted(usable)}))
"""


def test_first_fits_on_threads_succeed_with_an_empty_and_a_warm_kernel_cache(tmp_path):
    env = {
        **os.environ,
        "TREEKIT_KERNEL_DIR": str(tmp_path / "kernels"),
        "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
    }
    for cache in ("empty", "warm"):
        run = subprocess.run(
            [sys.executable, "-W", "ignore", "-c", SCRIPT, json.dumps(COMPOSITIONS)],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert run.returncode == 0, run.stderr[-3000:]
        result = json.loads(run.stdout.strip().splitlines()[-1])
        assert result["errors"] == {}, (cache, result["errors"])
        if os.environ.get("TREEKIT_REQUIRE_PLUGINS"):
            assert result["fitted"] == sorted(COMPOSITIONS)


#: First fits of every estimator family at once (issue 55): each family's fit path imports
#: joblib or numba lazily, and joblib's modules import each other in a cycle, so two threads
#: entering it at once raised ImportError or KeyError: 'joblib' in some runs.
FAMILIES_SCRIPT = r"""
import json, threading
import numpy as np
from treekit_core import (ForestClassifier, ForestRegressor, ForestSurvival, SurvivalTree,
    TreeClassifier, TreeRegressor)
from treekit_core.datasets import survival_array
rng = np.random.default_rng(0)
X = rng.normal(size=(200, 4))
labels = (X[:, 0] > 0).astype(int)
numbers = X[:, 0] + rng.normal(size=200)
counts = rng.poisson(np.exp(X[:, 0] / 2)).astype(float)
follow = survival_array(rng.random(200) < 0.7, rng.exponential(np.exp(-X[:, 0])) + 0.01)
families = {
    "classifier": lambda: TreeClassifier(max_depth=3).fit(X, labels),
    "regressor": lambda: TreeRegressor(max_depth=3).fit(X, numbers),
    "absolute_error": lambda: TreeRegressor(criterion="absolute_error").fit(X, numbers),
    "poisson": lambda: TreeRegressor(criterion="poisson", max_depth=3).fit(X, counts),
    "logrank": lambda: SurvivalTree(max_depth=3).fit(X, follow),
    "exponential": lambda: SurvivalTree(criterion="exponential", max_depth=3).fit(X, follow),
    "forest": lambda: ForestClassifier(n_estimators=3, n_jobs=2, random_state=0).fit(X, labels),
    "forest_regressor": lambda: ForestRegressor(n_estimators=3, n_jobs=2).fit(X, numbers),
    "forest_survival": lambda: ForestSurvival(n_estimators=3, n_jobs=2).fit(X, follow),
}
errors = {}
def fit(name):
    try:
        families[name]()
    except BaseException as error:
        errors.setdefault(name, repr(error))
threads = [threading.Thread(target=fit, args=(name,)) for name in families for _ in range(2)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(json.dumps({"errors": errors, "fitted": sorted(families)}))
"""


def test_first_fits_of_every_family_on_threads_in_fresh_processes():
    """Five fresh processes (the race failed one run in five here, and the first run of
    this test on the code before the fix), each starting
    first fits of every estimator family from two threads apiece."""
    for run_number in range(5):
        run = subprocess.run(
            [sys.executable, "-W", "ignore", "-c", FAMILIES_SCRIPT],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert run.returncode == 0, run.stderr[-3000:]
        result = json.loads(run.stdout.strip().splitlines()[-1])
        assert result["errors"] == {}, (run_number, result["errors"])
        assert len(result["fitted"]) == 9
