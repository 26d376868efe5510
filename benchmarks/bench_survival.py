"""Log-rank survival trees: treekit's SurvivalTree against scikit-survival's, side by side in
one run (issue 41).

    python benchmarks/bench_survival.py                         # the issue's sizes
    python benchmarks/bench_survival.py --sizes 8000 --repeats 3

Data: n rows x 20 features (standard normal, float32-exact), a proportional-hazards
event time exp(0.8 x0 - 0.5 x1 + 0.3 x2 x3) and an independent exponential censoring time
(about 45% censored), seeded; the held-out rows are 2 000 more from the same draw. Each
measurement is a fresh process that loads the data written by another process and fits
once (a first fit, as a script pays it; `min_samples_leaf=10`, the rest defaults), then
scores Harrell's concordance on the held-out rows; peak memory is the process's. treekit
runs on one thread and on every thread; scikit-survival (one thread) up to
``--sksurv-max`` rows, its fit growing with the square of the rows. ``--distinct`` rounds
the times to that many distinct values (the cost's other dimension).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from common import SPAN_CLOCK, machine_line, median_rows, run_in_fresh_process  # noqa: E402

WORKER = SPAN_CLOCK + textwrap.dedent("""
    library = sys.argv[1]
    X, y, X_test, y_test = (np.load(path) for path in sys.argv[2:6])
    start = clock()
    if library == "sksurv":
        from sksurv.tree import SurvivalTree
        model = SurvivalTree(min_samples_leaf=10, random_state=0)
    else:
        from treekit_core import SurvivalTree
        model = SurvivalTree(min_samples_leaf=10)
    imported = span("import", start)
    model.fit(X, y)
    fitted = span("first_fit", imported)
    from treekit_core import concordance_index
    risk = model.predict(X_test)
    spans["concordance"] = concordance_index(y_test["event"], y_test["time"], risk)
    spans["leaves"] = float(model.tree_.n_leaves)
    spans["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(spans))
""")


def survival_data(n, seed=0, distinct=None):
    import numpy as np

    sys.path.insert(0, ROOT)
    from treekit_core.datasets import survival_array

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 20)).astype(np.float32).astype(np.float64)
    hazard = np.exp(0.8 * X[:, 0] - 0.5 * X[:, 1] + 0.3 * X[:, 2] * X[:, 3])
    event_time, censor = rng.exponential(1 / hazard), rng.exponential(1.5, n)
    time = np.minimum(event_time, censor)
    if distinct is not None:  # round to about `distinct` values
        time = np.round(time * distinct / np.quantile(time, 0.999)) + 1.0
    return X, survival_array(event_time <= censor, time)


def save(folder, n, distinct):
    import numpy as np

    X, y = survival_data(n + 2000, 0, distinct)
    paths = [os.path.join(folder, f"{part}.npy") for part in ("X", "y", "X_test", "y_test")]
    for path, array in zip(paths, (X[:n], y[:n], X[n:], y[n:]), strict=True):
        np.save(path, array)
    return paths, len(np.unique(y["time"][:n]))


def section(n, repeats, sksurv_max, distinct=None):
    contestants = {"treekit 1 thread": ("treekit", 1), "treekit all threads": ("treekit", None)}
    if n <= sksurv_max:
        contestants["scikit-survival"] = ("sksurv", 1)
    with tempfile.TemporaryDirectory() as folder:
        files, n_times = save(folder, n, distinct)
        runs = {name: [] for name in contestants}
        for _ in range(repeats):
            for name, (library, threads) in contestants.items():
                runs[name].append(run_in_fresh_process(WORKER, [library, *files], ROOT, threads))
    rows = {name: median_rows(r) for name, r in runs.items()}
    reference = rows.get("scikit-survival")
    for name, r in rows.items():
        ratio = f" (x{r['first_fit_cpu'] / reference['first_fit_cpu']:.3f})" if reference else ""
        delta = f" ({r['concordance'] - reference['concordance']:+.4f})" if reference else ""
        print(
            f"n={n:>7} times={n_times:>7} {name:>19}: fit {r['first_fit_wall']:8.3f} s wall "
            f"{r['first_fit_cpu']:8.3f} s CPU{ratio} | concordance {r['concordance']:.4f}{delta} | "
            f"leaves {r['leaves']:.0f} | peak {r['peak_mb']:.0f} MB | "
            f"import {r['import_cpu']:.2f} s",
            flush=True,
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 4000, 8000, 32000, 100000])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--sksurv-max", type=int, default=8000)
    parser.add_argument("--distinct", type=int, nargs="*", default=[50, 500, 5000])
    args = parser.parse_args(argv)
    print(machine_line(ROOT, "sksurv"), flush=True)
    for n in args.sizes:
        section(n, args.repeats, args.sksurv_max)
    for distinct in args.distinct:  # 8 000 rows, fewer distinct times
        section(8000, args.repeats, args.sksurv_max, distinct)


if __name__ == "__main__":
    main()
