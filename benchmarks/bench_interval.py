"""The interval question (plugins/questions/interval) searched by the exhaustive splitter's
compiled range search, against the same search written in numpy, side by side in one run.

    python benchmarks/bench_interval.py [--rows 5000] [--features 10] [--repeats 5]

One node (the root) of rows x features uniform values (all distinct, so the plugin's 128
rank-spaced gaps bound 8128 intervals per feature): the compiled kernel's call, and a
vectorised numpy search (prefix sums over the sorted values, every candidate at once);
both find the same interval. Then whole fits: thresholds only (the presorted builder),
thresholds node by node, thresholds and intervals. Wall and CPU seconds (medians), peak
memory of the process, one thread (the kernel is single-threaded).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
from common import machine_line  # noqa: E402


def numpy_search(X, y, n_classes):
    """The best two-sided interval of every feature by gini drop, in numpy."""
    from treekit_interval import interval_candidate, interval_count, midpoint

    best = (-np.inf, -1, 0.0, 0.0)
    n = y.size
    parent = 1.0 - ((np.bincount(y, minlength=n_classes) / n) ** 2).sum()
    for f in range(X.shape[1]):
        order = np.argsort(X[:, f], kind="stable")
        values, first = np.unique(X[order, f], return_index=True)
        m = values.size
        onehot = np.eye(n_classes)[y[order]]
        prefix = np.vstack([np.zeros(n_classes), np.cumsum(onehot, axis=0)])[np.append(first, n)]
        runs = np.array([interval_candidate(values, m, i) for i in range(interval_count(m))])
        inside = prefix[runs[:, 1]] - prefix[runs[:, 0]]
        outside = prefix[m] - inside
        w_in, w_out = inside.sum(axis=1), outside.sum(axis=1)
        gini_in = 1.0 - ((inside / w_in[:, None]) ** 2).sum(axis=1)
        gini_out = 1.0 - ((outside / w_out[:, None]) ** 2).sum(axis=1)
        drop = parent - (w_in * gini_in + w_out * gini_out) / n
        k = int(np.argmax(drop))
        if drop[k] > best[0]:
            a, b = runs[k]
            best = (
                float(drop[k]),
                f,
                midpoint(values[a - 1], values[a]),
                midpoint(values[b - 1], values[b]),
            )
    return best


def timed(function, repeats):
    walls, cpus, out = [], [], None
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        out = function()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return float(np.median(walls)), float(np.median(cpus)), out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--features", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    from treekit_interval import Interval

    from treekit_core import TreeClassifier
    from treekit_core.builtins import Exhaustive
    from treekit_core.builtins.criteria import Gini
    from treekit_core.kernels.range_search import range_search_kernel

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 10, size=(args.rows, args.features))
    y = ((X[:, 0] > 3) & (X[:, 0] <= 6)).astype(np.int64) ^ (rng.random(args.rows) < 0.1)
    print(machine_line(os.path.dirname(HERE), "sklearn"), flush=True)
    kernel = range_search_kernel(
        Gini.impurity, Interval.range_count, Interval.range_candidate, "interval"
    )
    evidence = np.eye(2)[y]
    rows = np.arange(args.rows)
    weights = np.ones(args.rows)
    sums = evidence.sum(axis=0)
    features = np.arange(args.features)

    def compiled():
        return kernel(
            np.zeros(1), X, evidence, rows, weights, sums, float(args.rows), features, 1, 0.0
        )

    compiled()  # loaded (or compiled) before timing
    wall_c, cpu_c, found = timed(compiled, args.repeats)
    wall_p, cpu_p, reference = timed(lambda: numpy_search(X, y, 2), args.repeats)
    assert int(found[0]) == reference[1] and abs(found[3] - reference[0]) < 1e-12
    print(
        f"root search, {args.rows} x {args.features}: compiled {wall_c * 1e3:.1f} ms wall "
        f"{cpu_c * 1e3:.1f} ms CPU | numpy {wall_p * 1e3:.1f} ms wall {cpu_p * 1e3:.1f} ms CPU "
        f"(x{wall_p / wall_c:.1f})",
        flush=True,
    )
    fits = {
        "thresholds (presorted builder)": TreeClassifier(),
        "thresholds, node by node": TreeClassifier(splitter=_node_by_node(Exhaustive)),
        "thresholds and intervals": TreeClassifier(splitter_params={"questions": ["interval"]}),
    }
    for name, model in fits.items():
        model.fit(X[:200], y[:200])  # kernels loaded
        wall, cpu, fitted = timed(lambda m=model: m.fit(X, y), max(1, args.repeats // 2))
        print(
            f"fit {name:>31}: {wall:.3f} s wall {cpu:.3f} s CPU, {fitted.get_n_leaves()} leaves",
            flush=True,
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory of this process: {peak:.0f} MB", flush=True)


def _node_by_node(base):
    """The exhaustive splitter without its presorted builder."""
    import attrs

    @attrs.define(slots=False)
    class NodeByNode(base):
        def build_tree(self, composition, data, rng, rules):
            return None

    return NodeByNode()


if __name__ == "__main__":
    main()
