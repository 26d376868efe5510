"""Issue 56: edited model files of the regression, survival, constrained and quantile
estimators that loaded and then misbehaved are refused at load, naming the field (or the
value is derived instead of read). Each edit is checked with the kernels compiled and, in
a subprocess, under NUMBA_DISABLE_JIT=1 (where numpy checks every index)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from treekit_core import ModelFileError, SurvivalTree, TreeRegressor
from treekit_core.datasets import load_dataset


def _regressor():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    return TreeRegressor(max_depth=3).fit(X, X[:, 0] + rng.normal(size=200)), X


def _constrained():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 2))
    model = TreeRegressor(monotonic_cst=[1, 0], max_depth=3).fit(X, X[:, 0] + rng.normal(size=200))
    return model, X


def _survival(criterion="logrank"):
    data = load_dataset("veteran")
    params = dict(criterion=criterion, max_depth=2)
    if criterion == "exponential":
        params.update(pruner="cost_complexity", pruner_params={"alpha": 0.05})
    return SurvivalTree(**params).fit(data.X, data.y), data.X


def _surrogates():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3))
    X[:, 1] = X[:, 0] + 0.1 * rng.normal(size=200)
    y = X[:, 2] + X[:, 0]
    X[rng.random(X.shape) < 0.1] = np.nan
    model = TreeRegressor(max_depth=2, propagator="surrogate", evaluator="surrogate")
    return model.fit(X, y), np.nan_to_num(X)


def _leaf(payload, field="value_lower"):
    tree = payload["tree"]
    if "children_left" in tree:  # tree format 4: a binary tree's links
        return tree["children_left"].index(-1)
    starts = tree["child_start"]
    return next(i for i in range(len(starts) - 1) if starts[i] == starts[i + 1])


EDITS = {
    "monotonic bound +inf at a leaf": (
        _constrained,
        lambda p: [
            p["tree"]["node_fields"][bound].__setitem__(_leaf(p), "inf")
            for bound in ("value_lower", "value_upper")
        ],
        "'value_lower' is \\+inf",
    ),
    "regression statistics of 1e308": (
        _regressor,
        lambda p: p["tree"]["statistics"].__setitem__(_leaf(p), [1e308, 1e308]),
        "weighted sum of y is 1e\\+308",
    ),
    "survival hazard of 1e308": (
        _survival,
        lambda p: p["tree"]["component_state"]["target"]["hazard"].__setitem__(-1, 1e308),
        "target.hazard holds 1e\\+308",
    ),
    "survival target state emptied": (
        _survival,
        lambda p: p["tree"]["component_state"].__setitem__("target", {}),
        "target state is missing",
    ),
    "a SurvivalTree naming the target mean": (
        _survival,
        lambda p: p["params"].__setitem__("target", "mean"),
        "'params': SurvivalTree predicts from censored follow-up",
    ),
    "a TreeRegressor given classes": (
        _regressor,
        lambda p: p.update(classes=[0, 1], classes_dtype="<i8"),
        "'classes' must be null",
    ),
    "survival above exp(-hazard)": (
        _survival,
        lambda p: p["tree"]["component_state"]["target"].update(
            survival=[1.0] * len(p["tree"]["component_state"]["target"]["survival"])
        ),
        "survival is above exp\\(-hazard\\)",
    ),
    "surrogate_below = inf": (
        _surrogates,
        lambda p: p["tree"]["node_fields"]["surrogate_below"][0].__setitem__(0, "inf"),
        "'surrogate_below' must hold branches 0 or 1",
    ),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edited_file_is_refused_naming_the_field(edit):
    make, change, message = EDITS[edit]
    model, X = make()
    payload = json.loads(model.to_json())
    type(model).from_json(json.dumps(payload))  # as written: loads
    change(payload)
    with pytest.raises(ModelFileError, match=message):
        type(model).from_json(json.dumps(payload))


def test_an_exponential_trees_grown_tree_takes_the_trees_rescaling():
    """Its grown tree's table_hazard reversed, or its table all NaN, made prune(cp=0)
    give rising or NaN survival: the grown tree's target state (rpart's rescaling of time,
    not per node) is now the checked tree's, whatever the file says."""
    model, X = _survival("exponential")
    payload = json.loads(model.to_json())
    assert "grown_tree" in payload
    state = payload["grown_tree"]["component_state"].setdefault("target", {})
    state["table_hazard"] = list(reversed(model.tree_.component_state["target"]["table_hazard"]))
    state["table"] = ["nan"] * len(state["table_hazard"])
    loaded = SurvivalTree.from_json(json.dumps(payload))
    pruned = loaded.prune(cp=0.0)
    curves = pruned.predict_survival_function(X, return_array=True)
    assert np.isfinite(curves).all() and (np.diff(curves, axis=1) <= 1e-12).all()


SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import test_crafted_model_files_56 as cases
from treekit_core import ModelFileError
failed = []
for name, (make, change, message) in sorted(cases.EDITS.items()):
    model, X = make()
    payload = json.loads(model.to_json())
    change(payload)
    try:
        type(model).from_json(json.dumps(payload))
        failed.append(name)
    except ModelFileError:
        pass
print(json.dumps(failed))
"""


def test_the_same_refusals_without_the_jit():
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    run = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", SCRIPT, os.path.dirname(__file__)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout.strip().splitlines()[-1]) == []
