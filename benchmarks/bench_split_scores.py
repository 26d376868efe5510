"""Criteria that score a split (twoing, hellinger: ``Criterion.split_score``) against gini,
side by side in one run.

    python benchmarks/bench_split_scores.py [--sizes 100000] [--repeats 3]

Every measurement runs in a fresh process after a warm-up fit that loads the kernels from
numba's cache (no run measures compiling); the criteria alternate run by run so drift hits
them all, and medians are reported. Data: make_classification, two classes, 20 features
(10 informative), seeded; the tree grown out with every feature at every node (the fused
presorted builder), with ``NUMBA_NUM_THREADS=1`` and with every thread. Reported: fit wall
and CPU seconds (user + system of all threads), peak resident memory, and the tree's size.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from common import machine_line, median_rows, run_in_fresh_process  # noqa: E402

WORKER = textwrap.dedent("""
    import json, resource, sys, time
    from sklearn.datasets import make_classification
    from treekit_core import TreeClassifier

    criterion, n = sys.argv[1], int(sys.argv[2])
    X, y = make_classification(n_samples=n, n_features=20, n_informative=10, random_state=0)
    TreeClassifier(criterion=criterion, max_depth=3).fit(X[:2000], y[:2000])  # warm-up
    wall, cpu = time.perf_counter(), time.process_time()
    model = TreeClassifier(criterion=criterion).fit(X, y)
    out = {"fit wall s": time.perf_counter() - wall, "fit cpu s": time.process_time() - cpu}
    out["peak MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["nodes"] = model.tree_.n_nodes
    print(json.dumps(out))
""")

CRITERIA = ("gini", "twoing", "hellinger")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(machine_line(ROOT, "sklearn"))
    print(f"median of {args.repeats} fresh processes; fit grown out, every feature per node\n")
    for threads in (1, None):
        for criterion in CRITERIA:  # fill the caches: no measured run compiles
            run_in_fresh_process(WORKER, [criterion, 2000], ROOT, threads)
        for n in args.sizes:
            runs = {criterion: [] for criterion in CRITERIA}
            for _ in range(args.repeats):
                for criterion in CRITERIA:
                    runs[criterion].append(
                        run_in_fresh_process(WORKER, [criterion, n], ROOT, threads)
                    )
            label = "1 thread" if threads == 1 else "all threads"
            print(f"n = {n}, {label}")
            print("| criterion | fit wall s | fit cpu s | peak MB | nodes | wall / gini |")
            print("|---|---|---|---|---|---|")
            base = median_rows(runs["gini"])["fit wall s"]
            for criterion in CRITERIA:
                m = median_rows(runs[criterion])
                print(
                    f"| {criterion} | {m['fit wall s']:.3f} | {m['fit cpu s']:.3f} | "
                    f"{m['peak MB']:.0f} | {m['nodes']:.0f} | {m['fit wall s'] / base:.2f} |"
                )
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
