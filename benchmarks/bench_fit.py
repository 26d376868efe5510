"""Fit and predict speed: treekit against scikit-learn, side by side in one run.

    python benchmarks/bench_fit.py                 # n in 10k, 100k, 1M, satimage
    python benchmarks/bench_fit.py --sizes 10000 100000 --repeats 3

Both libraries fit the same data with the same settings (gini, best split over all
features, no pruning, grown out); runs alternate (treekit, sklearn, treekit, ...) so drift
hits both, and the median is reported. Also reported: a criterion written as a plain
Python function against built-in gini, the cost of ``import treekit_core``, the first fit in
a fresh process with a warm and with a cold numba cache, and the criterion ABI measured
both ways (first-class function value vs a dispatcher argument specialising the kernel).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
import time
import types as pytypes
from typing import ClassVar

import attrs
import numpy as np


def asymmetric_entropy(class_sums, total_weight, params):
    """Marcellin et al.'s asymmetric entropy, w_k = params[k], written as plain Python."""
    if total_weight <= 0.0:
        return 0.0
    h = 0.0
    for k in range(class_sums.shape[0]):
        p = class_sums[k] / total_weight
        w = params[k]
        h += p * (1.0 - p) / ((1.0 - 2.0 * w) * p + w * w)
    return h


def python_gini(class_sums, total_weight, params):
    if total_weight <= 0.0:
        return 0.0
    s = 0.0
    for k in range(class_sums.shape[0]):
        p = class_sums[k] / total_weight
        s += p * p
    return 1.0 - s


def _criteria():
    from treekit_core import Criterion

    @attrs.define(slots=False)
    class PythonGini(Criterion):
        name: ClassVar[str] = "bench_python_gini"
        impurity = staticmethod(python_gini)

    @attrs.define(slots=False)
    class Asymmetric(Criterion):
        name: ClassVar[str] = "bench_asymmetric"
        impurity = staticmethod(asymmetric_entropy)

        def impurity_params(self, n_classes):
            return np.full(n_classes, 0.3)

    return PythonGini(), Asymmetric()


def median_time(function, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def side_by_side(name, X, y, repeats):
    from sklearn.tree import DecisionTreeClassifier

    from treekit_core import TreeClassifier

    fit_tk, fit_sk, pred_tk, pred_sk = [], [], [], []
    for _ in range(repeats):
        start = time.perf_counter()
        ours = TreeClassifier(criterion="gini").fit(X, y)
        fit_tk.append(time.perf_counter() - start)
        start = time.perf_counter()
        theirs = DecisionTreeClassifier(criterion="gini", random_state=0).fit(X, y)
        fit_sk.append(time.perf_counter() - start)
        start = time.perf_counter()
        ours.predict(X)
        pred_tk.append(time.perf_counter() - start)
        start = time.perf_counter()
        theirs.predict(X)
        pred_sk.append(time.perf_counter() - start)
    row = {
        "data": name,
        "n": int(X.shape[0]),
        "d": int(X.shape[1]),
        "fit_treekit_s": float(np.median(fit_tk)),
        "fit_sklearn_s": float(np.median(fit_sk)),
        "predict_treekit_s": float(np.median(pred_tk)),
        "predict_sklearn_s": float(np.median(pred_sk)),
        "leaves_treekit": ours.get_n_leaves(),
        "leaves_sklearn": int(theirs.get_n_leaves()),
    }
    row["fit_ratio"] = row["fit_treekit_s"] / row["fit_sklearn_s"]
    row["predict_ratio"] = row["predict_treekit_s"] / row["predict_sklearn_s"]
    row["leaf_difference_pct"] = (
        100 * abs(row["leaves_treekit"] - row["leaves_sklearn"]) / row["leaves_sklearn"]
    )
    print(
        f"{name:>10} n={row['n']:>8}  fit {row['fit_treekit_s']:8.3f}s vs "
        f"{row['fit_sklearn_s']:8.3f}s "
        f"ratio {row['fit_ratio']:.2f} | predict {row['predict_treekit_s']:.4f}s vs "
        f"{row['predict_sklearn_s']:.4f}s ratio {row['predict_ratio']:.2f} | leaves "
        f"{row['leaves_treekit']} vs {row['leaves_sklearn']} ({row['leaf_difference_pct']:.2f}%)",
        flush=True,
    )
    return row


def criterion_costs(X, y, repeats):
    from treekit_core import TreeClassifier

    python_gini_criterion, asymmetric = _criteria()
    builtin = median_time(lambda: TreeClassifier(criterion="gini").fit(X, y), repeats)
    plain = median_time(lambda: TreeClassifier(criterion=python_gini_criterion).fit(X, y), repeats)
    asym = median_time(lambda: TreeClassifier(criterion=asymmetric).fit(X, y), repeats)
    row = {
        "n": int(X.shape[0]),
        "builtin_gini_s": builtin,
        "python_gini_s": plain,
        "python_asymmetric_s": asym,
        "python_gini_ratio": plain / builtin,
        "python_asymmetric_ratio": asym / builtin,
    }
    print(
        f"criterion  n={row['n']}: built-in gini {builtin:.3f}s, Python gini {plain:.3f}s "
        f"(x{row['python_gini_ratio']:.2f}), Python asymmetric entropy {asym:.3f}s "
        f"(x{row['python_asymmetric_ratio']:.2f})",
        flush=True,
    )
    return row


def abi_comparison(X, y, repeats):
    """The fused builder as shipped (criterion as a first-class function value: one
    compiled kernel for all criteria) against the same code specialised per criterion
    (criterion as a dispatcher argument: inlined, but compiled per criterion and never
    loaded from the on-disk cache in a new process)."""
    import numba

    from treekit_core import TrainingData, one_hot
    from treekit_core.builtins.criteria import Gini
    from treekit_core.engine.stopping import StoppingRules
    from treekit_core.kernels import builder, split_search

    encoded = np.unique(y, return_inverse=True)[1]
    data = TrainingData(
        np.asfortranarray(X, dtype=np.float64), one_hot(encoded, 2), np.ones(X.shape[0])
    )
    rules = StoppingRules().resolve(data.n_samples, float(data.n_samples))
    scan = numba.njit(nogil=True)(split_search.scan_sorted_feature.py_func)
    namespace = dict(builder.build_depth_first.py_func.__globals__, scan_sorted_feature=scan)
    source = builder.build_depth_first.py_func
    specialised = numba.njit(parallel=True, nogil=True)(
        pytypes.FunctionType(source.__code__, namespace, source.__name__, source.__defaults__)
    )
    impurity = Gini().compiled_impurity()
    weighted = np.ascontiguousarray(data.evidence)

    def run(kernel):
        order = builder.presort(data.X, numba.get_num_threads())
        return kernel(
            impurity,
            np.zeros(1),
            data.X,
            weighted,
            data.weight,
            order,
            rules.min_samples_leaf,
            rules.min_weight_leaf,
            rules.min_samples_split,
            rules.max_depth,
            0.0,
            np.nan,
            1e-12,
            rules.total_weight,
            data.n_features,
            0,
            numba.get_num_threads(),
            builder.PARALLEL_MIN_WORK,
        )

    start = time.perf_counter()
    run(specialised)
    compile_specialised = time.perf_counter() - start
    first_class = median_time(lambda: run(builder.build_depth_first), repeats)
    special = median_time(lambda: run(specialised), repeats)
    row = {
        "n": int(X.shape[0]),
        "function_value_s": first_class,
        "specialised_s": special,
        "specialised_first_call_s": compile_specialised,
        "ratio": first_class / special,
    }
    print(
        f"ABI        n={row['n']}: function value {first_class:.3f}s, specialised {special:.3f}s "
        f"(function value x{row['ratio']:.2f}); the specialised kernel's first call (compile) "
        f"took {compile_specialised:.1f}s, paid again in every new process",
        flush=True,
    )
    return row


PROBE = textwrap.dedent("""
    import time
    start = time.perf_counter()
    import treekit_core
    imported = time.perf_counter() - start
    import numpy as np
    from treekit_core import TreeClassifier
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10000, 20)); y = (X[:, 0] + X[:, 1] > 0).astype(int)
    times = []
    for _ in range(2):
        start = time.perf_counter()
        TreeClassifier().fit(X, y).predict(X)
        times.append(time.perf_counter() - start)
    first, second = times
    print(imported, first, second)
""")


def process_costs():
    imports, warm_first, warm_later = [], [], []
    subprocess.run([sys.executable, "-c", PROBE], check=True, capture_output=True)  # fill the cache
    for _ in range(5):
        out = subprocess.run(
            [sys.executable, "-c", PROBE], check=True, capture_output=True, text=True
        )
        imported, first, second = map(float, out.stdout.split())
        imports.append(imported)
        warm_first.append(first)
        warm_later.append(second)
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        out = subprocess.run(
            [sys.executable, "-c", PROBE], check=True, capture_output=True, text=True, env=env
        )
        _, cold_first, cold_later = map(float, out.stdout.split())
    row = {
        "import_s": float(np.median(imports)),
        "warm_first_fit_s": float(np.median(warm_first)),
        "warm_later_fit_s": float(np.median(warm_later)),
        "cold_first_fit_s": cold_first,
        "cold_later_fit_s": cold_later,
    }
    row["warm_first_fit_overhead_s"] = row["warm_first_fit_s"] - row["warm_later_fit_s"]
    print(
        f"process    import treekit_core {row['import_s']:.3f}s | first fit in a new process: "
        "warm cache "
        f"{row['warm_first_fit_s']:.3f}s (+{row['warm_first_fit_overhead_s']:.3f}s over a later "
        "fit "
        f"{row['warm_later_fit_s']:.3f}s), cold cache {cold_first:.1f}s",
        flush=True,
    )
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None, help="also write the results to this file")
    args = parser.parse_args(argv)

    import numba
    import sklearn
    from sklearn.datasets import make_classification

    import treekit_core
    from treekit_core.datasets import load_dataset

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, numba threads "
        f"{numba.get_num_threads()}; "
        f"python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}, "
        f"scikit-learn {sklearn.__version__}, treekit {treekit_core.__version__}",
        flush=True,
    )
    results = {"process": process_costs()}
    warm_X, warm_y = make_classification(
        n_samples=2000, n_features=20, n_informative=10, random_state=0
    )
    treekit_core.TreeClassifier().fit(warm_X, warm_y).predict(warm_X)  # load kernels before timing
    rows = []
    for n in args.sizes:
        X, y = make_classification(n_samples=n, n_features=20, n_informative=10, random_state=0)
        rows.append(
            side_by_side("synthetic", X, y, args.repeats if n < 1_000_000 else max(1, args.repeats))
        )
    satimage = load_dataset("satimage")
    rows.append(side_by_side("satimage", satimage.X, satimage.y, max(args.repeats, 5)))
    results["fit_predict"] = rows
    X, y = make_classification(n_samples=100_000, n_features=20, n_informative=10, random_state=0)
    results["criterion"] = criterion_costs(X, y, args.repeats)
    results["abi"] = abi_comparison(X, y, args.repeats)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
