"""Forests at scale (issue 59): treekit's ForestClassifier / ForestRegressor beside
scikit-learn's RandomForestClassifier / RandomForestRegressor, default parameters, 100
trees on 50 000 x 20 synthetic rows, side by side in one run, each fit in a fresh process.

    python benchmarks/bench_forest_scale.py [--n 50000] [--trees 100] [--jobs 1 2]
        [--predict 500000] [--repeats 3] [--forest random|extra] [--json FILE]

``--forest extra``: extremely randomised trees (issue 64), treekit's ExtraTreesClassifier /
ExtraTreesRegressor beside scikit-learn's, default parameters of both.

Per library, task and n_jobs: fit wall and CPU time, the process's peak memory (max RSS,
the data included; threads only, so no worker processes), the pickle's size, and the wall
time of predicting ``--predict`` new rows (the forest's n_jobs threads). Kernels are loaded
from the cache by a small warm-up fit first (a first compile is not what is measured).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from common import machine_line, run_in_fresh_process  # noqa: E402

WORKER = textwrap.dedent("""
    import json, pickle, resource, sys, time
    import numpy as np
    library, task, kind = sys.argv[1], sys.argv[2], sys.argv[3]
    n, trees, jobs, n_predict = map(int, sys.argv[4:])
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n + n_predict, 20))
    signal = X[:, :10].sum(axis=1)
    if task == "classification":
        y = (signal + rng.normal(0, 2, len(X)) > 0).astype(int)
    else:
        y = signal + np.sin(3 * X[:, 10]) + rng.normal(0, 1, len(X))
    X_new, X, y_new, y = X[n:], X[:n], y[n:], y[:n]
    if library == "sklearn":
        from sklearn import ensemble
        prefix = "RandomForest" if kind == "random" else "ExtraTrees"
    else:
        import treekit_core as ensemble
        prefix = "Forest" if kind == "random" else "ExtraTrees"
    suffix = "Classifier" if task == "classification" else "Regressor"
    make = getattr(ensemble, prefix + suffix)
    model = lambda t: make(n_estimators=t, n_jobs=jobs, random_state=0)
    model(2).fit(X[:500], y[:500]).predict(X_new[:100])  # kernels from the cache
    wall, cpu = time.perf_counter(), time.process_time()
    forest = model(trees).fit(X, y)
    fit_wall, fit_cpu = time.perf_counter() - wall, time.process_time() - cpu
    size = len(pickle.dumps(forest, protocol=pickle.HIGHEST_PROTOCOL))
    wall = time.perf_counter()
    predicted = forest.predict(X_new)
    predict_wall = time.perf_counter() - wall
    if task == "classification":
        score = float(np.mean(predicted == y_new))
    else:
        score = float(1 - np.sum((predicted - y_new) ** 2) / np.sum((y_new - y_new.mean()) ** 2))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"fit_wall": fit_wall, "fit_cpu": fit_cpu, "peak_mb": peak,
                      "pickle_mb": size / 2**20, "predict_wall": predict_wall,
                      "score": score}))
""")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--jobs", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--predict", type=int, default=500_000)
    parser.add_argument("--tasks", nargs="*", default=["classification", "regression"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--forest", choices=("random", "extra"), default="random")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    print(machine_line(ROOT, "sklearn"), flush=True)
    results = []
    for task in args.tasks:
        for jobs in args.jobs:
            row = {}
            for library in ("sklearn", "treekit"):
                runs = [
                    run_in_fresh_process(
                        WORKER,
                        [library, task, args.forest, args.n, args.trees, jobs, args.predict],
                        ROOT,
                        jobs,
                    )
                    for _ in range(args.repeats)
                ]
                row[library] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            theirs, ours = row["sklearn"], row["treekit"]
            ratios = {k: ours[k] / theirs[k] for k in ("fit_wall", "peak_mb", "pickle_mb")}
            ratios["predict_wall"] = ours["predict_wall"] / theirs["predict_wall"]
            for library, r in row.items():
                print(
                    f"{task:14s} n_jobs={jobs} {library:8s}: fit {r['fit_wall']:6.2f} s wall "
                    f"{r['fit_cpu']:6.2f} s CPU | peak {r['peak_mb']:6.0f} MB | pickle "
                    f"{r['pickle_mb']:6.1f} MB | predict {args.predict} rows "
                    f"{r['predict_wall']:5.2f} s | score {r['score']:.4f}",
                    flush=True,
                )
            print(
                f"{task:14s} n_jobs={jobs} treekit / scikit-learn: fit wall "
                f"x{ratios['fit_wall']:.2f}, peak x{ratios['peak_mb']:.2f}, pickle "
                f"x{ratios['pickle_mb']:.2f}, predict wall x{ratios['predict_wall']:.2f}",
                flush=True,
            )
            results.append({"task": task, "n_jobs": jobs, **row, "ratios": ratios})
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
