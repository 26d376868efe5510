"""Two treekit checkouts side by side: wall time, CPU time and peak memory, one thread and
all threads.

    python benchmarks/bench_versions.py --before /path/to/old/checkout [--after .]
        [--n 100000] [--repeats 3]

Each measurement runs in a fresh process (PYTHONPATH = the checkout) after one warm-up fit
in that process (kernels come from numba's cache); runs alternate before / after so drift
hits both, and the median is reported. Workloads:

* ``fit numeric``: n x 20 synthetic numbers (gini, grown out: the fused builder);
* ``predict``: the same data through the fitted tree (threshold-only routing);
* ``proba NaN``: predict_proba with 5% missing values (the mixture kernel);
* ``fit nominal``: n/10 rows, two 6-category nominal features and 4 numbers with 5%
  missing values (node-by-node growth with subset questions);
* ``proba nominal``: predict_proba on that data (routing through subset questions).

CPU time is the process's user + system time for the measured call; peak memory is the
process's maximum resident set size at the end of the run (so it includes the warm-up).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import run_in_fresh_process  # noqa: E402

WORKER = textwrap.dedent("""
    import json, resource, sys, time
    import numpy as np
    from treekit_core import TreeClassifier

    n = int(sys.argv[1])
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 20)); X[:, :10] += rng.integers(0, 2, (n, 1)) * 0.7
    y = (X[:, :10].sum(axis=1) + rng.normal(0, 2, n) > 3.5).astype(int)
    X_nan = X.copy(); X_nan[rng.random(X.shape) < 0.05] = np.nan
    m = n // 10
    nominal = np.column_stack([rng.integers(0, 6, (m, 2)), rng.normal(size=(m, 4))])
    y_nominal = ((nominal[:, 0] % 2 == 0) ^ (nominal[:, 2] > 0)).astype(int)
    y_nominal = np.where(rng.random(m) < 0.1, 1 - y_nominal, y_nominal)
    nominal[:, 2:][rng.random((m, 4)) < 0.05] = np.nan

    def measure(call):
        wall, cpu = time.perf_counter(), time.process_time()
        result = call()
        return result, time.perf_counter() - wall, time.process_time() - cpu

    # warm-up: load (or compile) every kernel the measured calls use
    small = TreeClassifier().fit(X[:2000], y[:2000]); small.predict(X[:100])
    small.predict_proba(X_nan[:100])
    warm = TreeClassifier(categorical_features=[0, 1]).fit(nominal[:2000], y_nominal[:2000])
    warm.predict_proba(nominal[:100])

    out = {}
    model, out["fit numeric wall"], out["fit numeric cpu"] = measure(
        lambda: TreeClassifier().fit(X, y))
    _, out["predict wall"], out["predict cpu"] = measure(lambda: model.predict(X))
    _, out["proba NaN wall"], out["proba NaN cpu"] = measure(lambda: model.predict_proba(X_nan))
    nominal_model, out["fit nominal wall"], out["fit nominal cpu"] = measure(
        lambda: TreeClassifier(categorical_features=[0, 1]).fit(nominal, y_nominal))
    _, out["proba nominal wall"], out["proba nominal cpu"] = measure(
        lambda: nominal_model.predict_proba(nominal))
    out["leaves"] = model.get_n_leaves()
    out["leaves nominal"] = nominal_model.get_n_leaves()
    out["peak MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))
""")


def run(checkout: str, n: int, threads: int | None) -> dict:
    # the core alone: installed plugins are written for one of the two versions
    return run_in_fresh_process(WORKER, [n], checkout, threads, plugins=False)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="path of the older checkout")
    parser.add_argument("--after", default=os.path.dirname(os.path.dirname(__file__)) or ".")
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"n = {args.n}, {os.cpu_count()} cores, median of {args.repeats} fresh processes")
    for side in ("before", "after"):  # fill numba's cache first: no run measures compiling
        run(getattr(args, side), 20_000, None)
    for threads, label in ((1, "1 thread"), (None, f"all {os.cpu_count()} threads")):
        results = {"before": [], "after": []}
        for _ in range(args.repeats):
            for side in ("before", "after"):
                results[side].append(run(getattr(args, side), args.n, threads))
        print(f"\n{label}")
        for key in results["before"][0]:
            before = statistics.median(r[key] for r in results["before"])
            after = statistics.median(r[key] for r in results["after"])
            ratio = after / before if before else float("nan")
            print(f"  {key:<20} before {before:10.4g}   after {after:10.4g}   ratio {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
