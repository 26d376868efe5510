"""Isolation forests (issue 64): treekit's IsolationForest beside scikit-learn's, default
parameters (100 trees, 256 rows each), side by side in one run, each in a fresh process.

    python benchmarks/bench_isolation.py [--n 100000] [--jobs 1 2] [--repeats 3] [--json FILE]

Data: n x 20 rows, 1% planted outliers (N(0, 9 I) among N(0, I)). Per library and n_jobs:
fit wall and CPU, score_samples of the n training rows (wall), the process's peak memory
(read before scikit-learn's metric is imported for the AUC: a treekit process needs no
scikit-learn), the pickle's size and the ROC AUC of -score_samples for the planted outliers.
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
    rng = np.random.default_rng(0)
    outliers = n // 100
    X = np.vstack([rng.normal(size=(n - outliers, 20)), 3 * rng.normal(size=(outliers, 20))])
    label = np.r_[np.zeros(n - outliers), np.ones(outliers)]
    if library == "sklearn":
        from sklearn.ensemble import IsolationForest
    else:
        from treekit_core import IsolationForest
    IsolationForest(n_estimators=2, random_state=0).fit(X[:500]).score_samples(X[:100])
    wall, cpu = time.perf_counter(), time.process_time()
    model = IsolationForest(n_jobs=jobs, random_state=0).fit(X)
    fit_wall, fit_cpu = time.perf_counter() - wall, time.process_time() - cpu
    wall = time.perf_counter()
    scores = model.score_samples(X)
    score_wall = time.perf_counter() - wall
    size = len(pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # scikit-learn's metric only after the peak is read: treekit's process needs no
    # scikit-learn (imported first, it was a third of treekit's peak)
    from sklearn.metrics import roc_auc_score
    print(json.dumps({"fit_wall": fit_wall, "fit_cpu": fit_cpu, "score_wall": score_wall,
                      "peak_mb": peak, "pickle_mb": size / 2**20,
                      "auc": float(roc_auc_score(label, -scores))}))
""")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--jobs", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    print(machine_line(ROOT, "sklearn"), flush=True)
    results = []
    for jobs in args.jobs:
        row = {}
        for library in ("sklearn", "treekit"):
            runs = [
                run_in_fresh_process(WORKER, [library, args.n, jobs], ROOT, jobs)
                for _ in range(args.repeats)
            ]
            row[library] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            r = row[library]
            timing = f"fit {r['fit_wall']:6.3f} s wall {r['fit_cpu']:6.3f} s CPU"
            scoring = f"score_samples {r['score_wall']:6.3f} s"
            sizes = f"peak {r['peak_mb']:6.0f} MB | pickle {r['pickle_mb']:6.2f} MB"
            print(
                f"n_jobs={jobs} {library:8s}: {timing} | {scoring} | {sizes} | AUC {r['auc']:.4f}",
                flush=True,
            )
        ours, theirs = row["treekit"], row["sklearn"]
        ratios = ", ".join(
            f"{name} x{ours[key] / theirs[key]:.2f}"
            for name, key in (
                ("fit", "fit_wall"),
                ("score_samples", "score_wall"),
                ("peak", "peak_mb"),
                ("pickle", "pickle_mb"),
            )
        )
        print(f"n_jobs={jobs} treekit / scikit-learn: {ratios}", flush=True)
        results.append({"n_jobs": jobs, **row})
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
