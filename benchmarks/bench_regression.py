"""Regression trees: treekit's TreeRegressor against scikit-learn's DecisionTreeRegressor,
side by side in one run (issue 38).

    python benchmarks/bench_regression.py                      # 100k and 1M x 20, 3 repeats
    python benchmarks/bench_regression.py --sizes 100000 --repeats 5

Each measurement is a fresh process (so peak memory is the process's own) that loads the
data from a file written by another process (a child's peak memory starts at its
parent's), imports the estimator and fits with no warm-up: the first fit of a process, as
a script pays it; then a second fit (steady), predict on the held-out rows twice (the
first call of a process loads its kernels) and the held-out R^2. Contestants alternate
(treekit one thread, treekit every thread, scikit-learn) and medians are reported. Data:
make_regression, 20 features, 10 informative, noise 10, seeded; the held-out rows are
100 000 more from the same draw. Both grow squared-error trees out (the defaults of both).
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
from common import (  # noqa: E402
    SPAN_CLOCK,
    machine_line,
    median_rows,
    run_in_fresh_process,
    saved_data,
)

WORKER = SPAN_CLOCK + textwrap.dedent("""
    library, criterion = sys.argv[1], sys.argv[2]
    X, y, X_test, y_test = (np.load(path) for path in sys.argv[3:7])
    start = clock()
    if library == "sklearn":
        from sklearn.tree import DecisionTreeRegressor
        make = lambda: DecisionTreeRegressor(criterion=criterion, random_state=0)
    else:
        from treekit_core import TreeRegressor
        make = lambda: TreeRegressor(criterion=criterion)
    imported = span("import", start)
    model = make().fit(X, y)
    fitted = span("first_fit", imported)
    model = make().fit(X, y)
    steady = span("steady_fit", fitted)
    model.predict(X_test)
    predicted = span("predict", steady)
    model.predict(X_test)
    span("predict_again", predicted)
    spans["r2"] = float(model.score(X_test, y_test))
    spans["leaves"] = int(model.get_n_leaves())
    spans["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(spans))
""")

CONTESTANTS = {
    "treekit 1 thread": ("treekit", 1),
    "treekit all threads": ("treekit", None),
    "scikit-learn": ("sklearn", None),
}


def section(n, repeats, criterion="squared_error"):
    with tempfile.TemporaryDirectory() as folder:
        files = saved_data(folder, "regression", n, n_test=100_000)
        runs = {name: [] for name in CONTESTANTS}
        for _ in range(repeats):
            for name, (library, threads) in CONTESTANTS.items():
                runs[name].append(
                    run_in_fresh_process(WORKER, [library, criterion, *files], ROOT, threads, False)
                )
    row = {name: median_rows(r) for name, r in runs.items()}
    sk = row["scikit-learn"]
    for name, r in row.items():
        print(
            f"{criterion} n={n:>8} {name:>19}: first fit {r['first_fit_wall']:7.3f} s wall "
            f"{r['first_fit_cpu']:7.3f} s CPU (x{r['first_fit_cpu'] / sk['first_fit_cpu']:.2f}) | "
            f"steady {r['steady_fit_wall']:7.3f} s wall {r['steady_fit_cpu']:7.3f} s CPU "
            f"(x{r['steady_fit_cpu'] / sk['steady_fit_cpu']:.2f}) | predict "
            f"{r['predict_wall'] * 1e3:7.1f} ms (x{r['predict_wall'] / sk['predict_wall']:.2f}), "
            f"again {r['predict_again_wall'] * 1e3:7.1f} ms "
            f"(x{r['predict_again_wall'] / sk['predict_again_wall']:.2f}) | "
            f"R2 {r['r2']:.4f} ({r['r2'] - sk['r2']:+.4f}) | peak {r['peak_mb']:6.0f} MB "
            f"(x{r['peak_mb'] / sk['peak_mb']:.2f}) | import {r['import_cpu']:.2f} s | "
            f"leaves {r['leaves']:.0f}",
            flush=True,
        )
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--criteria", nargs="*", default=["squared_error"])
    args = parser.parse_args(argv)
    print(machine_line(ROOT, "sklearn"), flush=True)
    for criterion in args.criteria:
        for n in args.sizes:
            section(n, args.repeats if n < 1_000_000 else max(1, args.repeats // 2), criterion)


if __name__ == "__main__":
    main()
