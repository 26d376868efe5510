"""A survival forest's curves: treekit's ForestSurvival against scikit-survival's
RandomSurvivalForest, side by side in one run (issues 55 and 66).

    python benchmarks/bench_survival_curves.py
    python benchmarks/bench_survival_curves.py --sizes 500 1200 --threads 1 2

Data: n rows x 10 features (standard normal, float32-exact), a proportional-hazards
event time exp(0.8 x0) and an independent exponential censoring time, seeded; each forest
has 100 trees, min_samples_leaf=3, fitted once per process. Measured in a fresh process per
library and thread count: the CPU and wall time of ``predict_survival_function(X,
return_array=True)`` on the n training rows (best of 3, after one warm call), of the
survival at three times (treekit's ``predict_survival_at``; scikit-survival's step
functions evaluated there), and the peak memory (RSS) of the process. Then, treekit alone
(scikit-survival's fit is quadratic in the rows), ``predict_survival_at(X[:4000], three
times)`` of a 50 000-row forest with unique times: the peak memory issue 66 measured at
6.4 GB for a 96 KB result.
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
    library, n, n_trees = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 10)).astype(np.float32).astype(np.float64)
    event_time = rng.exponential(np.exp(-0.8 * X[:, 0]))
    censor = rng.exponential(1.5, size=n)
    from treekit_core.datasets import survival_array
    y = survival_array(event_time <= censor, np.minimum(event_time, censor))
    times = np.quantile(y["time"][y["event"]], [0.25, 0.5, 0.75])
    if library == "sksurv":
        from sksurv.ensemble import RandomSurvivalForest
        model = RandomSurvivalForest(n_estimators=n_trees, min_samples_leaf=3, random_state=0,
                                     n_jobs=1)
        at = lambda Z: np.array([[f(t) for t in times]
                                  for f in model.predict_survival_function(Z)])
    else:
        from treekit_core import ForestSurvival
        model = ForestSurvival(n_estimators=n_trees, min_samples_leaf=3, random_state=0,
                               n_jobs=1)
        at = lambda Z: model.predict_survival_at(Z, times)
    model.fit(X, y)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {}
    for name, call in (("curves", lambda: model.predict_survival_function(X, return_array=True)),
                       ("three_times", lambda: at(X))):
        call()
        best_cpu = best_wall = float("inf")
        for _ in range(3):
            cpu, wall = time.process_time(), time.perf_counter()
            call()
            best_cpu = min(best_cpu, time.process_time() - cpu)
            best_wall = min(best_wall, time.perf_counter() - wall)
        out[name + "_cpu"], out[name + "_wall"] = best_cpu, best_wall
    out["fit_rss_mb"] = rss
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))
""")

LARGE = textwrap.dedent("""
    import json, resource, sys, time
    import numpy as np
    from treekit_core import ForestSurvival
    from treekit_core.datasets import survival_array
    n = int(sys.argv[1])
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 10))
    y = survival_array(rng.random(n) < 0.6, rng.exponential(size=n) * 1000 + rng.random(n))
    model = ForestSurvival(n_estimators=20, min_samples_leaf=3, random_state=0).fit(X, y)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    result = model.predict_survival_at(X[:4000], [100.0, 365.0, 730.0])
    print(json.dumps({"seconds": time.perf_counter() - start, "fit_peak_mb": before,
                      "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "result_kb": result.nbytes / 1024,
                      "unique_times": float(model.unique_times_.size)}))
""")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 1200])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--large", type=int, default=50_000)
    args = parser.parse_args()
    print(machine_line(ROOT, "sklearn", "sksurv"))
    print(
        "| n | threads | library | curves CPU | curves wall | 3 times CPU | 3 times wall | "
        "peak MB |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for n in args.sizes:
        for threads in args.threads:
            rows = {}
            for library in ("treekit", "sksurv"):
                rows[library] = run_in_fresh_process(
                    WORKER, [library, n, args.trees], ROOT, threads=threads
                )
            for library, row in rows.items():
                ratio = row["curves_cpu"] / rows["sksurv"]["curves_cpu"]
                print(
                    f"| {n} | {threads} | {library} | {row['curves_cpu']:.4f} s (x{ratio:.2f}) "
                    f"| {row['curves_wall']:.4f} s | {row['three_times_cpu']:.4f} s | "
                    f"{row['three_times_wall']:.4f} s | {row['peak_mb']:.0f} |"
                )
    if args.large:
        large = run_in_fresh_process(LARGE, [args.large], ROOT)
        print(
            f"\n{args.large} rows, {large['unique_times']:.0f} unique times, 20 trees: "
            f"predict_survival_at(X[:4000], 3 times) {large['seconds']:.2f} s, peak "
            f"{large['peak_mb']:.0f} MB (after the fit {large['fit_peak_mb']:.0f} MB), result "
            f"{large['result_kb']:.0f} KB"
        )


if __name__ == "__main__":
    main()
