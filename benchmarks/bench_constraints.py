"""Monotonic and interaction constraints (issue 43): what they cost, side by side in one run.

    python benchmarks/bench_constraints.py                  # 2 000 and 20 000 rows x 10
    python benchmarks/bench_constraints.py --rows 5000 --loops 3

On a synthetic regression and two-class problem whose signal rises with features 0 and 1
and falls with feature 2 (10 features, the others noise), the whole ``fit`` is timed for:
scikit-learn's ``DecisionTree*`` with and without ``monotonic_cst``, treekit's tree without
constraints (the presorted whole-tree builder), with ``monotonic_cst`` and with
``interaction_cst`` (both on the node-by-node loop, which holds each node's interval and
path), every tree grown out with ``min_samples_leaf=5``. Each contestant runs in a fresh
process: one warm-up fit (kernels load from the cache), then the best of ``--loops`` fits,
CPU and wall; the process's peak memory. treekit on one thread and on every thread
(``NUMBA_NUM_THREADS``).
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from common import machine_line, run_in_fresh_process  # noqa: E402

WORKER = textwrap.dedent("""
    import json, resource, sys, time
    import numpy as np

    task, contestant, rows, loops = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    rng = np.random.default_rng(0)
    X = rng.normal(size=(rows, 10)).astype(np.float32).astype(np.float64)
    signal = X[:, 0] + 0.5 * X[:, 1] - 0.5 * X[:, 2] + rng.normal(size=rows)
    y = signal if task == "regression" else (signal > 0).astype(int)
    cst = [1, 1, -1] + [0] * 7
    groups = [[0, 1, 2], [3, 4, 5, 6, 7, 8, 9]]
    if contestant.startswith("sklearn"):
        from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
        cls = DecisionTreeRegressor if task == "regression" else DecisionTreeClassifier
        extra = {"monotonic_cst": cst} if contestant == "sklearn_monotonic" else {}
        make = lambda: cls(min_samples_leaf=5, random_state=0, **extra)
    else:
        from treekit_core import TreeClassifier, TreeRegressor
        cls = TreeRegressor if task == "regression" else TreeClassifier
        extra = {
            "treekit": {},
            "treekit_monotonic": {"monotonic_cst": cst},
            "treekit_interaction": {"interaction_cst": groups},
        }[contestant]
        make = lambda: cls(min_samples_leaf=5, **extra)
    make().fit(X, y)  # warm-up: kernels load from numba's cache
    best_cpu = best_wall = float("inf")
    for _ in range(loops):
        wall, cpu = time.perf_counter(), time.process_time()
        model = make().fit(X, y)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    leaves = int(model.get_n_leaves())
    print(json.dumps({"wall": best_wall, "cpu": best_cpu, "peak_mb": peak, "leaves": leaves}))
""")

CONTESTANTS = (
    "sklearn",
    "sklearn_monotonic",
    "treekit",
    "treekit_monotonic",
    "treekit_interaction",
)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="*", type=int, default=[2000, 20000])
    parser.add_argument("--loops", type=int, default=3)
    args = parser.parse_args(argv)
    print(machine_line(ROOT, "sklearn"), flush=True)
    for task in ("classification", "regression"):
        for rows in args.rows:
            for contestant in CONTESTANTS:
                settings = ((1, "1 thread"),)
                if contestant.startswith("treekit"):
                    settings += ((None, "all threads"),)
                for threads, label in settings:
                    found = run_in_fresh_process(
                        WORKER,
                        [task, contestant, rows, args.loops],
                        ROOT,
                        threads,
                        plugins=False,
                    )
                    print(
                        f"{task:>14} {rows:>6} rows {contestant:>20} {label:>11}: "
                        f"{found['wall'] * 1e3:8.1f} ms wall {found['cpu'] * 1e3:8.1f} ms CPU, "
                        f"peak {found['peak_mb']:.0f} MB, {found['leaves']} leaves",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
