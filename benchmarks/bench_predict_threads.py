"""Prediction on one thread and on all threads, on an idle and on a busy machine.

Run on an idle machine (nothing else running)::

    python benchmarks/bench_predict_threads.py

Each measurement is a fresh process (kernels loaded from the cache by a warm-up first)
that fits a tree on 100 000 rows of make_classification (20 features, 10 informative,
seeded, grown out) and times, as the median of 7 calls, ``predict`` on n rows (the
threshold walk) and ``predict_proba`` on the same rows with 5% of the values missing
(C4.5's mixture over the branches of every question a row cannot answer); at 10 000 rows
also soft evaluation (``predict_proba``) and boundary-distance confidence (``decide``), trees
of depth 10 on the same rows. Contestants
alternate: one thread (``NUMBA_NUM_THREADS=1``), all threads. "busy": the same with a
Python busy loop on one of the CPUs, started and stopped by this script. Prediction uses
threads only for passes worth 250 000 rows of the walk (the mixture costs about four
walk rows per row), in dynamic chunks (``treekit_core.kernels.row_chunks``).
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from common import machine_line, median_rows, one_core_busy, run_in_fresh_process  # noqa: E402

WORKER = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    from sklearn.datasets import make_classification
    from treekit_core import TreeClassifier
    n = int(sys.argv[1])
    X, y = make_classification(n_samples=max(n, 100_000), n_features=20, n_informative=10,
                               random_state=0)
    model = TreeClassifier().fit(X[:100_000], y[:100_000])
    X = X[:n]
    missing = X.copy()
    missing[np.random.default_rng(0).random(X.shape) < 0.05] = np.nan
    model.predict(X[:100]); model.predict_proba(missing[:100])  # warm-up
    def median(call):
        times = []
        for _ in range(7):
            start = time.perf_counter(); call(); times.append(time.perf_counter() - start)
        return sorted(times)[3]
    found = {"walk": median(lambda: model.predict(X)),
             "mixture": median(lambda: model.predict_proba(missing))}
    if n <= 10_000:  # the plugins' passes: hundreds of walk rows per row
        positive = X - X.min(axis=0) + 1.0
        soft = TreeClassifier(evaluator="soft", max_depth=10).fit(positive, y[:n])
        soft.predict_proba(positive[:100])
        found["soft"] = median(lambda: soft.predict_proba(positive))
        boxes = TreeClassifier(confidence="boundary_distance", max_depth=10).fit(X, y[:n])
        boxes.decide(X[:100])
        found["boundary"] = median(lambda: boxes.decide(X))
    print(json.dumps(found))
""")
CONTESTANTS = {"1 thread": 1, "all threads": None}


def section(sizes, repeats, label):
    rows = []
    for n in sizes:
        runs = {name: [] for name in CONTESTANTS}
        for _ in range(repeats):
            for name, threads in CONTESTANTS.items():
                runs[name].append(run_in_fresh_process(WORKER, [n], ROOT, threads, True))
        row = {name: median_rows(found) for name, found in runs.items()}
        one = row["1 thread"]
        for name, r in row.items():
            print(
                f"{label:>4} n={n:>8} {name:>11}: predict {r['walk'] * 1e3:7.1f} ms "
                f"(x{r['walk'] / one['walk']:.2f} 1 thread) | predict_proba with 5% missing "
                f"{r['mixture'] * 1e3:7.1f} ms (x{r['mixture'] / one['mixture']:.2f} 1 thread)"
                + "".join(
                    f" | {key} {r[key] * 1e3:7.1f} ms (x{r[key] / one[key]:.2f} 1 thread)"
                    for key in ("soft", "boundary")
                    if key in r
                ),
                flush=True,
            )
        rows.append({"n": n, "condition": label, **row})
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(machine_line(ROOT), flush=True)
    section(args.sizes, args.repeats, "idle")
    with one_core_busy(1200):
        section(args.sizes, args.repeats, "busy")


if __name__ == "__main__":
    main()
