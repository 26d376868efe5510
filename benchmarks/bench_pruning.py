"""What cross-validated cost-complexity pruning costs over the same fit unpruned.

    python benchmarks/bench_pruning.py [--before /path/to/old/checkout] [--repeats 3] [--cv 10]

Issue 18's target: with kernels compiled, ``cost_complexity(cv=5)`` costs at most 10x the
unpruned fit, for every composition. Pruning by CV grows cv + 1 trees, so about 6x is the
floor; the rest is refitting the evaluator and scoring every subtree on every fold.
Compositions, on 300 x 2 numbers with 4% missing values (issue 18's case) and on 2 000 x 8:

* ``plt``: soft_search + soft + quinlan_ramp (Quinlan's probabilistic thresholds refit for
  every subtree of every fold);
* ``ramp``: exhaustive gini, hard propagation, quinlan_ramp evaluation (issue 55's case:
  the fit is the fused builder, so the refits are nearly all of the pruned fit's cost);
* ``cart``: exhaustive gini, hard (the fused builder);
* ``c45``: c45 splitter, entropy.

Each figure is the median over fresh processes (one warm-up fit per process, so kernels
come from numba's cache); wall and CPU time of the measured fit; peak resident memory of the
process. ``--before`` runs an older checkout side by side (alternating runs).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import run_in_fresh_process  # noqa: E402

WORKER = textwrap.dedent("""
    import json, resource, sys, time
    import numpy as np
    from treekit_core import TreeClassifier

    composition, n, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d)) + 5
    y = (X[:, 0] + 0.5 * X[:, 1] - 7.5 + rng.normal(scale=0.7, size=n) > 0).astype(int)
    X[rng.random(X.shape) < 0.04] = np.nan
    params = {
        "plt": dict(splitter="soft_search", propagator="soft", evaluator="quinlan_ramp"),
        "ramp": dict(evaluator="quinlan_ramp"),
        "cart": dict(),
        "c45": dict(splitter="c45", criterion="entropy"),
    }[composition]

    def measure(call):
        wall, cpu = time.perf_counter(), time.process_time()
        call()
        return time.perf_counter() - wall, time.process_time() - cpu

    pruned = dict(params, pruner="cost_complexity", pruner_params={"cv": int(sys.argv[4])})
    TreeClassifier(**pruned).fit(X[:100], y[:100])  # warm-up: load every kernel
    out = {}
    out["unpruned wall"], out["unpruned cpu"] = measure(lambda: TreeClassifier(**params).fit(X, y))
    out["pruned wall"], out["pruned cpu"] = measure(lambda: TreeClassifier(**pruned).fit(X, y))
    out["ratio (wall)"] = out["pruned wall"] / out["unpruned wall"]
    out["peak MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))
""")

CASES = (
    ("plt", 300, 2),
    ("ramp", 300, 2),
    ("cart", 300, 2),
    ("c45", 300, 2),
    ("plt", 2000, 8),
    ("cart", 2000, 8),
)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=None, help="an older checkout to compare with")
    parser.add_argument("--after", default=os.path.dirname(os.path.dirname(__file__)) or ".")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cv", type=int, default=5, help="folds of the pruned fit")
    parser.add_argument(
        "--cases", default=None, help="only these, e.g. plt:300x2,cart:2000x8 (default: all)"
    )
    args = parser.parse_args(argv)
    cases = CASES
    if args.cases:
        wanted = set(args.cases.split(","))
        cases = tuple(c for c in CASES if f"{c[0]}:{c[1]}x{c[2]}" in wanted)
    sides = ["after"] if args.before is None else ["before", "after"]
    print(f"{os.cpu_count()} cores, median of {args.repeats} fresh processes")
    for side in sides:  # fill numba's cache first: no run measures compiling
        for composition, _, _ in cases:
            run_in_fresh_process(WORKER, [composition, 100, 2, args.cv], getattr(args, side))
    for threads, label in ((1, "1 thread"), (None, f"all {os.cpu_count()} threads")):
        print(f"\n{label}")
        for composition, n, d in cases:
            results = {side: [] for side in sides}
            for _ in range(args.repeats):
                for side in sides:
                    results[side].append(
                        run_in_fresh_process(
                            WORKER, [composition, n, d, args.cv], getattr(args, side), threads
                        )
                    )
            for side in sides:
                row = {k: statistics.median(r[k] for r in results[side]) for k in results[side][0]}
                figures = "  ".join(f"{k} {v:8.3g}" for k, v in row.items())
                print(f"  {composition:<5} {n:>5} x {d}  {side:<6}  {figures}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
