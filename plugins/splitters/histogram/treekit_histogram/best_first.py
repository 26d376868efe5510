"""Best-first growth of a histogram tree (``max_leaf_nodes``): the leaf whose cut drops the
tree's weighted impurity most is split next, until the tree has ``max_leaf_nodes`` leaves
(LightGBM's leaf-wise trees, scikit-learn's best-first builder), the tree the core's
node-by-node loop grows best first with this splitter, in compiled steps: a node's cut is
found when it is made, from its histogram (the smaller child's built, the larger's its
parent's minus it), and its rows are partitioned only when it is split. Children get their
ids when their parent is split, first branch first; equal gains: the node made first."""

from __future__ import annotations

import heapq
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from treekit_histogram.kernels import CHANNELS, HISTOGRAM_BLOCK_ROWS
from treekit_histogram.threads import LEFT, RIGHT, Growth, feature_chunks

#: A node split on threads holds at least this many rows: each thread then sums its
#: features over a block of rows or more (0.3 ms at 20 features over 2 threads), well
#: above what handing out the work costs.
PARALLEL_NODE_ROWS = HISTOGRAM_BLOCK_ROWS


def grow_best_first(
    kernels, params, binned, rows, index, root_hist, rules, max_leaves, n_threads, summed
):
    """The node table of the tree (``grow_subtree``'s columns), grown best first up to
    ``max_leaves`` leaves; large nodes' histograms on ``n_threads`` threads (their bins
    sum the statistics ``summed``). Terminates:
    every split adds a leaf and the tree stops at ``max_leaves`` leaves (or when no leaf
    has a cut the stopping rules accept)."""
    n = index.size
    n_stats = root_hist.shape[2] - CHANNELS  # the row table may have no weights
    growth = Growth(kernels, params, binned, rows, index, rules, n_stats, n_threads, summed)
    root_statistics = growth.statistics(0, n)
    records, frontier = [], []

    def visit(start, end, depth, parent, is_left, hist, statistics, scanned=None):
        record, cut = growth.evaluate(start, end, depth, hist, statistics, scanned)
        node = len(records)
        records.append(record)
        if parent >= 0:
            records[parent][0, LEFT if is_left else RIGHT] = node
        if cut is not None:  # ranked by the node's weight times its cut's drop
            heapq.heappush(
                frontier,
                (-statistics[0] * cut[3], node, start, end, depth, hist, statistics, cut),
            )

    visit(0, n, 0, -1, 1, root_hist, root_statistics)
    d = binned.codes.shape[0]
    chunks = feature_chunks(d, n_threads, summed.size)
    pool = ThreadPoolExecutor(n_threads) if n_threads > 1 and n >= PARALLEL_NODE_ROWS else None
    try:
        leaves = 1
        while frontier and leaves < max_leaves:
            _, node, start, end, depth, hist, statistics, cut = heapq.heappop(frontier)
            growth.set_question(records[node], hist, cut)
            # threads only for a large node (the bits are the same either way)
            large = end - start >= PARALLEL_NODE_ROWS
            children = growth.divide(
                pool if large else None, chunks, start, end, depth, hist, statistics, cut
            )
            leaves += 1
            for child_start, child_end, child_depth, is_left, *found in reversed(children):
                # the left child first: its id is the lower
                visit(child_start, child_end, child_depth, node, is_left, *found)
    finally:
        if pool is not None:
            pool.shutdown()
    return np.vstack(records)
