"""Causal forests (issue 65): treekit's CausalForest beside econml's
``econml.grf.CausalForest``, side by side in one run, each in a fresh process.

    python benchmarks/bench_causal_forest.py [--n 20000] [--jobs 1 2] [--repeats 3] [--json FILE]

Data: Wager & Athey's (2018) first heterogeneous design, n x 10 (X uniform, e = 0.5,
tau = s(x_1) s(x_2)). Both forests: 100 trees, max_samples 0.45, min_samples_leaf 5,
honest; econml's defaults otherwise (its trees do not centre y and the treatment, so
treekit's run once with ``orthogonalize=False``, the same estimator, and once with its
default, grf's centring on two out-of-bag regression forests it fits as well). Per
library and n_jobs: fit wall and CPU, predict of 10 000 new rows (wall, with intervals:
``predict_interval``), the process's peak memory, the pickle's size, the RMSE of the
effects on the new rows and the intervals' coverage.
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
    library, n, jobs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

    def design(n, seed):
        rng = np.random.default_rng(seed)
        X = rng.uniform(size=(n, 10))
        s = lambda x: 1 + 1 / (1 + np.exp(-20 * (x - 1 / 3)))
        tau = s(X[:, 0]) * s(X[:, 1])
        w = rng.binomial(1, 0.5, size=n)
        return X, (w - 0.5) * tau + rng.normal(size=n), w, tau

    X, y, w, _ = design(n, 0)
    X_new, _, _, truth = design(10_000, 1)
    if library == "econml":
        from econml.grf import CausalForest
        make = lambda trees: CausalForest(n_estimators=trees, n_jobs=jobs, random_state=0)
        fit = lambda model: model.fit(X, w, y)
        def predict(model):
            low, high = model.predict_interval(X_new, alpha=0.05)
            return model.predict(X_new).ravel(), low.ravel(), high.ravel()
    else:
        from treekit_core import CausalForest
        centred = library == "treekit"
        make = lambda trees: CausalForest(
            n_estimators=trees, n_jobs=jobs, orthogonalize=centred, random_state=0
        )
        fit = lambda model: model.fit(X, y, w)
        def predict(model):
            low, high = model.predict_interval(X_new, alpha=0.05).T
            return model.predict(X_new), low, high
    fit(make(4))  # warm: imports and (treekit) kernels loaded from the cache
    wall, cpu = time.perf_counter(), time.process_time()
    model = fit(make(100))
    fit_wall, fit_cpu = time.perf_counter() - wall, time.process_time() - cpu
    wall = time.perf_counter()
    effect, low, high = predict(model)
    predict_wall = time.perf_counter() - wall
    size = len(pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"fit_wall": fit_wall, "fit_cpu": fit_cpu, "predict_wall": predict_wall,
                      "peak_mb": peak, "pickle_mb": size / 2**20,
                      "rmse": float(np.sqrt(np.mean((effect - truth) ** 2))),
                      "coverage": float(np.mean((low <= truth) & (truth <= high)))}))
""")

LIBRARIES = ("econml", "treekit_raw", "treekit")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--jobs", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    print(machine_line(ROOT, "econml"), flush=True)
    results = []
    for jobs in args.jobs:
        row = {}
        for library in LIBRARIES:
            runs = [
                run_in_fresh_process(WORKER, [library, args.n, jobs], ROOT, jobs)
                for _ in range(args.repeats)
            ]
            row[library] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            r = row[library]
            timing = f"fit {r['fit_wall']:6.2f} s wall {r['fit_cpu']:6.2f} s CPU"
            predicting = f"predict+interval {r['predict_wall']:5.2f} s"
            sizes = f"peak {r['peak_mb']:5.0f} MB | pickle {r['pickle_mb']:6.2f} MB"
            quality = f"RMSE {r['rmse']:.4f} coverage {r['coverage']:.3f}"
            print(
                f"n_jobs={jobs} {library:11s}: {timing} | {predicting} | {sizes} | {quality}",
                flush=True,
            )
        theirs = row["econml"]
        for library in LIBRARIES[1:]:
            ours = row[library]
            ratios = ", ".join(
                f"{name} x{ours[key] / theirs[key]:.2f}"
                for name, key in (
                    ("fit", "fit_wall"),
                    ("predict", "predict_wall"),
                    ("peak", "peak_mb"),
                    ("pickle", "pickle_mb"),
                    ("RMSE", "rmse"),
                )
            )
            print(f"n_jobs={jobs} {library} / econml: {ratios}", flush=True)
        results.append({"n_jobs": jobs, **row})
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
