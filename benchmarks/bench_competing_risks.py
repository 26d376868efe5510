"""Competing-risk forests (issue 62): ForestSurvival(target="competing_risks") beside
today's survival forest on the same rows, side by side in one run, each fit in a fresh
process.

    python benchmarks/bench_competing_risks.py [--n 20000] [--trees 100] [--jobs 2]
        [--predict 50000]

Data: n x 20 standard normal features; two causes with cause-specific hazards
exp(0.8 x0 - 0.5 x1) and exp(0.6 x2), an exponential censoring time (about 30% censored),
times rounded to 200 distinct values; the survival forest is fitted on any event. Per
forest: fit wall and CPU time, peak memory (the process's, data included), and the wall
time and peak memory of predicting ``--predict`` rows: the survival forest's survival
curves on the training grid, the competing-risk forest's incidence of cause 1 on the
training grid (an n x times array, the one the call returns: no rows x times x causes
array is made).
"""

from __future__ import annotations

import argparse
import json
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
    kind, n, trees, jobs, n_predict = sys.argv[1], *map(int, sys.argv[2:])
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n + n_predict, 20))
    first = rng.exponential(np.exp(-(0.8 * X[:, 0] - 0.5 * X[:, 1])))
    second = rng.exponential(np.exp(-0.6 * X[:, 2]))
    censor = rng.exponential(2.0, len(X))
    end = np.minimum(np.minimum(first, second), censor)
    code = np.where(end == censor, 0, np.where(end == first, 1, 2))
    grid = np.quantile(end, np.linspace(0, 1, 201)[1:])
    t = grid[np.minimum(np.searchsorted(grid, end), 199)]
    X_new, X, t, code = X[n:], X[:n], t[:n], code[:n]
    from treekit_core import ForestSurvival
    warm = slice(0, 300)
    if kind == "survival":
        y = np.column_stack([t, code > 0])
        make = lambda k: ForestSurvival(n_estimators=k, n_jobs=jobs, random_state=0,
                                        min_samples_leaf=10)
        predict = lambda f, Z: f.predict_survival_function(Z, return_array=True)
    else:
        y = np.column_stack([t, code])
        make = lambda k: ForestSurvival(n_estimators=k, n_jobs=jobs, random_state=0,
                                        min_samples_leaf=10, target="competing_risks")
        predict = lambda f, Z: f.predict_cumulative_incidence(Z, cause=1, return_array=True)
    predict(make(2).fit(X[warm], y[warm]), X_new[:10])  # kernels from the cache
    wall, cpu = time.perf_counter(), time.process_time()
    forest = make(trees).fit(X, y)
    fit_wall, fit_cpu = time.perf_counter() - wall, time.process_time() - cpu
    fit_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    wall = time.perf_counter()
    curves = predict(forest, X_new)
    predict_wall = time.perf_counter() - wall
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"fit_wall": fit_wall, "fit_cpu": fit_cpu, "fit_peak_mb": fit_peak,
                      "predict_wall": predict_wall, "peak_mb": peak,
                      "curves_mb": curves.nbytes / 2**20, "shape": list(curves.shape)}))
""")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--predict", type=int, default=50_000)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    print(machine_line(ROOT), flush=True)
    results = {}
    for kind in ("survival", "competing_risks"):
        found = run_in_fresh_process(
            WORKER, [kind, args.n, args.trees, args.jobs, args.predict], ROOT
        )
        results[kind] = found
        print(
            f"{kind:16s}: fit {found['fit_wall']:7.2f} s wall {found['fit_cpu']:7.2f} s CPU | "
            f"peak after fit {found['fit_peak_mb']:6.0f} MB | predict {args.predict} rows "
            f"{found['predict_wall']:6.2f} s, curves {found['shape']} "
            f"({found['curves_mb']:.0f} MB), peak {found['peak_mb']:6.0f} MB",
            flush=True,
        )
    ratio = results["competing_risks"]["fit_wall"] / results["survival"]["fit_wall"]
    print(f"competing risks / survival forest fit wall: x{ratio:.2f}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=1)


if __name__ == "__main__":
    main()
