"""Quantile regression forests' weighted quantiles (Meinshausen 2006) for rows that reach
one leaf in every tree: per row, every tree's leaf entries (the training responses it
holds) weighted by their weight over the leaf's total over the trees, sorted, and the
smallest value whose cumulative weight share reaches each q. The estimators' Python loop
(``RegressorFamily._quantiles``) does the same for rows that reach several leaves."""

import numpy as np

from treekit_core.kernels.compiling import jit


@jit(nogil=True)
def leaf_quantiles(leaves, node_offset, starts, values, weights, q, out, first, stop):
    """Rows ``first..stop`` of ``out`` (rows x len(q)). ``leaves`` (rows x trees): each
    row's leaf per tree; tree b's node k holds entries ``starts[node_offset[b] + k]`` up
    to ``starts[node_offset[b] + k + 1]`` of ``values`` / ``weights``. A row no entry
    weighs anything for gets NaN. The shares of the cumulative weight are compared with
    q less a relative 1e-12 (the sums' rounding), as ``weighted_quantiles`` compares."""
    n_trees = leaves.shape[1]
    for i in range(first, stop):
        size = 0
        for b in range(n_trees):
            node = node_offset[b] + leaves[i, b]
            size += starts[node + 1] - starts[node]
        row_values = np.empty(size)
        row_weights = np.empty(size)
        k = 0
        for b in range(n_trees):
            node = node_offset[b] + leaves[i, b]
            total = 0.0
            for j in range(starts[node], starts[node + 1]):
                total += weights[j]
            if total > 0:
                scale = 1.0 / (total * n_trees)
                for j in range(starts[node], starts[node + 1]):
                    row_values[k] = values[j]
                    row_weights[k] = weights[j] * scale
                    k += 1
        if k == 0:
            out[i, :] = np.nan
            continue
        order = np.argsort(row_values[:k], kind="mergesort")
        cumulative = np.empty(k)
        running = 0.0
        for j in range(k):
            running += row_weights[order[j]]
            cumulative[j] = running
        for m in range(q.shape[0]):
            index = np.searchsorted(cumulative, q[m] * running * (1 - 1e-12), side="left")
            out[i, m] = row_values[order[min(index, k - 1)]]
