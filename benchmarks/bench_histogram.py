"""Large data: the histogram splitter beside scikit-learn's exact tree, treekit's exhaustive
splitter and LightGBM with one tree; UDT's pruned search beside its plain search.

Run on an idle machine (nothing else running)::

    pip install -e ".[bench]"   # lightgbm, optional: without it its rows are skipped
    python benchmarks/bench_histogram.py --json benchmarks/bench_histogram_results.json

Sections:

* ``large``: make_classification (20 features, 10 informative), gini, max_depth 12 (and
  grown out at the smaller sizes), fit only, each fit in a fresh process (kernels loaded
  from the cache by a warm-up fit on 500 rows first): wall and CPU time, peak memory,
  held-out accuracy on 100 000 more rows, with one thread and with all threads.
  LightGBM: ``n_estimators=1, learning_rate=1, num_leaves=2**12, max_depth=12,
  min_child_samples=1, subsample=1, colsample_bytree=1`` (the issue's settings).
* ``udt``: UDT (s = 100, w = 0.1, entropy, C4.5's pessimistic pruning, as the uncertain
  benchmark runs it) on pima, bupa, haberman and wdbc: plain against pruned search, fit
  time and time in the split search (medians of repeats, one process) and the number of
  candidates evaluated.
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

LARGE_WORKER = textwrap.dedent("""
    import json, resource, sys, time
    import numpy as np
    from sklearn.datasets import make_classification
    library, n, depth = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    max_depth = None if depth == "none" else int(depth)
    X, y = make_classification(n_samples=n + 100_000, n_features=20, n_informative=10,
                               random_state=0)
    X_test, y_test, X, y = X[n:], y[n:], X[:n], y[:n]
    if library == "sklearn":
        from sklearn.tree import DecisionTreeClassifier
        make = lambda: DecisionTreeClassifier(criterion="gini", max_depth=max_depth,
                                              random_state=0)
    elif library == "lightgbm":
        import os
        import lightgbm
        # LightGBM sizes its pool itself: pass the benchmark's thread count explicitly
        threads = int(os.environ.get("OMP_NUM_THREADS", "0")) or None
        make = lambda: lightgbm.LGBMClassifier(
            n_estimators=1, learning_rate=1, num_leaves=2**12, max_depth=max_depth or -1,
            min_child_samples=1, subsample=1, colsample_bytree=1, verbose=-1, n_jobs=threads)
    else:
        from treekit_core import TreeClassifier
        splitter = {"treekit_exhaustive": "exhaustive", "treekit_histogram": "histogram"}
        make = lambda: TreeClassifier(criterion="gini", splitter=splitter[library],
                                      max_depth=max_depth)
    make().fit(X[:500], y[:500]).predict(X[:10])  # warm-up: kernels from the cache
    wall, cpu = time.perf_counter(), time.process_time()
    model = make().fit(X, y)
    fit_wall, fit_cpu = time.perf_counter() - wall, time.process_time() - cpu
    accuracy = float((model.predict(X_test) == y_test).mean())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"fit_wall": fit_wall, "fit_cpu": fit_cpu, "peak_mb": peak,
                      "accuracy": accuracy}))
""")

CONTESTANTS = {
    "scikit-learn exact": ("sklearn", None),
    "treekit exhaustive 1 thread": ("treekit_exhaustive", 1),
    "treekit exhaustive all threads": ("treekit_exhaustive", None),
    "treekit histogram 1 thread": ("treekit_histogram", 1),
    "treekit histogram all threads": ("treekit_histogram", None),
    "LightGBM 1 tree 1 thread": ("lightgbm", 1),
    "LightGBM 1 tree all threads": ("lightgbm", None),
}


def has_lightgbm() -> bool:
    try:
        import lightgbm  # noqa: F401
    except ImportError:
        return False
    return True


def large_section(cases, repeats, libraries=None):
    contestants = {
        name: spec
        for name, spec in CONTESTANTS.items()
        if (spec[0] != "lightgbm" or has_lightgbm()) and (libraries is None or spec[0] in libraries)
    }
    results = []
    for n, depth in cases:
        runs = {name: [] for name in contestants}
        for _ in range(repeats):
            for name, (library, threads) in contestants.items():
                runs[name].append(
                    run_in_fresh_process(LARGE_WORKER, [library, n, depth], ROOT, threads)
                )
        row = {
            name: {k: statistics.median(r[k] for r in rs) for k in rs[0]}
            for name, rs in runs.items()
        }
        sk = row.get("scikit-learn exact")
        lgb = row.get("LightGBM 1 tree all threads")
        one = row.get("treekit histogram 1 thread")
        for name, r in row.items():
            versus = [f"x{r['fit_wall'] / sk['fit_wall']:.3f} sklearn"] if sk else []
            if lgb:
                versus.append(f"x{r['fit_wall'] / lgb['fit_wall']:.2f} LightGBM all threads")
            if one and name.startswith("treekit histogram"):
                versus.append(f"x{r['fit_wall'] / one['fit_wall']:.2f} histogram 1 thread")
            versus = ", ".join(versus)
            print(
                f"n={n:>8} depth={depth:>4} {name:>31}: fit {r['fit_wall']:7.2f} s wall "
                f"{r['fit_cpu']:7.2f} s CPU ({versus}) | peak {r['peak_mb']:6.0f} MB | "
                f"held-out accuracy {r['accuracy']:.4f}",
                flush=True,
            )
        results.append({"n": n, "depth": depth, **row})
    return results


def udt_section(repeats):
    import time

    import numpy as np

    from treekit_core import TreeClassifier
    from treekit_core.datasets import load_dataset
    from treekit_soft_search import udt

    prepare = udt.UDTSplitter.prepare
    seen = {}

    def counting(self, *args):
        state = prepare(self, *args)
        seen["evaluations"] = state["evaluations"]
        return state

    find_split = udt.UDTSplitter.find_split
    searching = {"s": 0.0}

    def timed_search(self, *args):
        start = time.perf_counter()
        try:
            return find_split(self, *args)
        finally:
            searching["s"] += time.perf_counter() - start

    udt.UDTSplitter.prepare = counting
    udt.UDTSplitter.find_split = timed_search
    rows = {}
    try:
        for name in ("pima", "bupa", "haberman", "wdbc"):
            data = load_dataset(name, dropna=True)
            row = {}
            for pruned in (False, True):
                model = TreeClassifier(
                    criterion="entropy",
                    splitter="udt",
                    propagator="udt",
                    evaluator="udt",
                    pruner="pessimistic",
                    splitter_params={"pruned_search": pruned},
                )
                model.fit(data.X[:50], data.y[:50])  # warm-up
                times, search_times = [], []
                for _ in range(repeats):
                    searching["s"] = 0.0
                    start = time.perf_counter()
                    model.fit(data.X, data.y)
                    times.append(time.perf_counter() - start)
                    search_times.append(searching["s"])
                row["pruned" if pruned else "plain"] = {
                    "fit_s": statistics.median(times),
                    "search_s": statistics.median(search_times),
                    "evaluations": int(np.sum(seen["evaluations"])),
                    "leaves": model.get_n_leaves(),
                }
            plain, pruned = row["plain"], row["pruned"]
            print(
                f"UDT {name:>9}: fit plain {plain['fit_s']:6.2f} s, pruned "
                f"{pruned['fit_s']:6.2f} s "
                f"(x{plain['fit_s'] / pruned['fit_s']:.2f} faster); split search "
                f"{plain['search_s']:6.2f} s -> {pruned['search_s']:6.2f} s "
                f"(x{plain['search_s'] / pruned['search_s']:.2f}); candidates evaluated "
                f"{plain['evaluations']:,} -> {pruned['evaluations']:,} "
                f"(x{plain['evaluations'] / pruned['evaluations']:.2f} fewer); leaves "
                f"{plain['leaves']} / {pruned['leaves']}",
                flush=True,
            )
            rows[name] = row
    finally:
        udt.UDTSplitter.prepare = prepare
        udt.UDTSplitter.find_split = find_split
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cases",
        nargs="*",
        default=["100000:12", "100000:none", "1000000:12"],
        help="n:max_depth pairs (max_depth 'none': grown out)",
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", choices=["large", "udt"], nargs="*", default=None)
    parser.add_argument(
        "--libraries",
        nargs="*",
        default=None,
        choices=sorted({spec[0] for spec in CONTESTANTS.values()}),
        help="the contestants of the large section (default: all)",
    )
    parser.add_argument("--json", default=None, help="also write the results to this file")
    args = parser.parse_args(argv)
    sections = args.only or ["large", "udt"]

    print(machine_line(ROOT, "sklearn", "lightgbm"), flush=True)
    results = {}
    if "large" in sections:
        cases = [(int(c.split(":")[0]), c.split(":")[1]) for c in args.cases]
        results["large"] = large_section(cases, args.repeats, args.libraries)
    if "udt" in sections:
        results["udt"] = udt_section(args.repeats)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
