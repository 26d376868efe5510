"""Nominal columns against the same columns ordinal-coded as numbers (issue 40), side by side
in one run.

    python benchmarks/bench_nominal.py                 # every bundled set with nominal columns
    python benchmarks/bench_nominal.py --loops 5 --sets vote soybean

For each data set with nominal columns (they hold NaN), the whole ``fit`` is timed (input
checks and category encoding included) on the data as a pandas frame with ``category``
columns, and on the same frame with those columns replaced by their category codes as
floats (NaN kept): a default ``TreeClassifier()`` and ``ForestClassifier(n_estimators=50,
random_state=0)``. Each contestant runs in a fresh process: one warm-up fit (kernels load
from the cache), then the best of ``--loops`` fits, CPU and wall; the process's peak memory.
scikit-learn 1.9's random forest has no categorical support: it runs on the coded columns
(NaN natively), and its histogram gradient boosting, which has, on the categories
(``categorical_features="from_dtype"``, 50 iterations) as the native-categorical reference.
Treekit runs on one thread and on every thread (``NUMBA_NUM_THREADS``), the forest with
``n_jobs=1`` and ``n_jobs=-1`` alike. ``--models multiway`` adds a tree asking multi-way
questions (``splitter_params={"nominal_split": "multiway"}``; on the coded columns the
same estimator asks thresholds).
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
    import pandas as pd
    from treekit_core.datasets import load_dataset

    name, columns, model, loops, jobs = sys.argv[1:6]
    loops, jobs = int(loops), int(jobs)
    data = load_dataset(name)
    frame = pd.DataFrame(data.X, columns=data.feature_names)
    if columns == "nominal":
        for j in np.flatnonzero(data.categorical):
            column = data.feature_names[j]
            levels = data.categories[column]
            codes = frame[column].to_numpy()
            frame[column] = pd.Categorical.from_codes(
                np.where(np.isnan(codes), -1, codes).astype(int), categories=levels
            )
    y = data.y
    if model == "tree":
        from treekit_core import TreeClassifier
        make = lambda: TreeClassifier()
    elif model == "multiway":
        from treekit_core import TreeClassifier
        make = lambda: TreeClassifier(splitter_params={"nominal_split": "multiway"})
    elif model == "forest":
        from treekit_core import ForestClassifier
        make = lambda: ForestClassifier(n_estimators=50, random_state=0, n_jobs=jobs)
    elif model == "sklearn_forest":
        from sklearn.ensemble import RandomForestClassifier
        make = lambda: RandomForestClassifier(n_estimators=50, random_state=0, n_jobs=jobs)
    else:
        from sklearn.ensemble import HistGradientBoostingClassifier
        make = lambda: HistGradientBoostingClassifier(
            max_iter=50, categorical_features="from_dtype", early_stopping=False, random_state=0
        )
    make().fit(frame, y)  # warm-up: kernels load from numba's cache
    best_cpu = best_wall = float("inf")
    for _ in range(loops):
        wall, cpu = time.perf_counter(), time.process_time()
        make().fit(frame, y)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"wall": best_wall, "cpu": best_cpu, "peak_mb": peak}))
""")

SETS = ("vote", "soybean", "labor", "lenses")


def measure(name, columns, model, loops, threads, jobs):
    return run_in_fresh_process(
        WORKER, [name, columns, model, loops, jobs], ROOT, threads, plugins=False
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="*", default=list(SETS))
    parser.add_argument("--loops", type=int, default=5)
    parser.add_argument(
        "--models", nargs="*", default=["tree", "forest"], choices=["tree", "forest", "multiway"]
    )
    parser.add_argument("--no-sklearn", action="store_true", help="skip scikit-learn's models")
    args = parser.parse_args(argv)
    print(machine_line(ROOT, "sklearn", "pandas"), flush=True)
    for name in args.sets:
        for model in args.models:
            for threads, jobs in ((1, 1), (None, -1)):
                coded = measure(name, "coded", model, args.loops, threads, jobs)
                nominal = measure(name, "nominal", model, args.loops, threads, jobs)
                label = "1 thread" if threads == 1 else "all threads"
                print(
                    f"{name:>8} {model:>8} {label:>11}: nominal {nominal['wall'] * 1e3:8.1f} ms "
                    f"wall {nominal['cpu'] * 1e3:8.1f} ms CPU | coded {coded['wall'] * 1e3:8.1f} "
                    f"ms wall {coded['cpu'] * 1e3:8.1f} ms CPU | nominal/coded wall "
                    f"x{nominal['wall'] / coded['wall']:.2f} CPU "
                    f"x{nominal['cpu'] / coded['cpu']:.2f}"
                    f" | peak {nominal['peak_mb']:.0f} / {coded['peak_mb']:.0f} MB",
                    flush=True,
                )
        for threads, jobs in ((1, 1), (None, -1)) if not args.no_sklearn else ():
            forest = measure(name, "coded", "sklearn_forest", args.loops, threads, jobs)
            boosting = measure(name, "nominal", "sklearn_boosting", args.loops, threads, jobs)
            label = "1 thread" if threads == 1 else "all threads"
            print(
                f"{name:>8} scikit-learn {label:>11}: random forest (coded) "
                f"{forest['wall'] * 1e3:8.1f} ms wall {forest['cpu'] * 1e3:8.1f} ms CPU, "
                f"peak {forest['peak_mb']:.0f} MB | gradient boosting (categories) "
                f"{boosting['wall'] * 1e3:8.1f} ms wall {boosting['cpu'] * 1e3:8.1f} ms CPU, "
                f"peak {boosting['peak_mb']:.0f} MB",
                flush=True,
            )


if __name__ == "__main__":
    main()
