"""Per-node passes over a fitted tree that ran as Python loops once per tree: a forest of
honest trees ran them for every tree under the GIL (issue 65: a causal forest's trees
spent a tenth of their fit in them)."""

import numpy as np

from treekit_core.kernels.compiling import F1, F2C, IMPURITY_TYPE, jit


@jit()
def add_subtree_sums(sums, child_start, child_ids) -> bool:
    """Every node's row of ``sums`` (nodes x columns), in place, plus its children's rows
    once they hold their subtrees' sums: from the last node to the first, each child added
    in the order of the node's children (a float sum in the order a loop over the children
    adds them). Needs every child numbered after its parent (how trees are grown and
    read); False, with ``sums`` untouched, where a child is not."""
    n_nodes = sums.shape[0]
    for node in range(n_nodes):
        for position in range(child_start[node], child_start[node + 1]):
            if child_ids[position] <= node or child_ids[position] >= n_nodes:
                return False
    for node in range(n_nodes - 1, -1, -1):
        for position in range(child_start[node], child_start[node + 1]):
            child = child_ids[position]
            for column in range(sums.shape[1]):
                sums[node, column] += sums[child, column]
    return True


@jit(F1(IMPURITY_TYPE, F2C, F1, F1))
def node_impurities(impurity, statistics, weight, params):
    """Every node's ``impurity`` of its statistics and weight, 0 where no weight reached
    it (an empty node has no impurity to measure)."""
    out = np.zeros(statistics.shape[0])
    for node in range(statistics.shape[0]):
        if weight[node] > 0:
            out[node] = impurity(statistics[node], weight[node], params)
    return out


@jit()
def group_by_node(nodes, n_nodes):
    """(order, starts): the positions of ``nodes`` (each in 0..n_nodes-1) grouped by node,
    each group in its positions' order (a stable argsort, by counting: two passes instead
    of a comparison sort of every training row, issue 59), and where each node's group
    starts (n_nodes + 1 offsets)."""
    starts = np.zeros(n_nodes + 1, dtype=np.int64)
    for i in range(nodes.shape[0]):
        starts[nodes[i] + 1] += 1
    for node in range(n_nodes):
        starts[node + 1] += starts[node]
    next_place = starts[:-1].copy()
    order = np.empty(nodes.shape[0], dtype=np.int64)
    for i in range(nodes.shape[0]):
        node = nodes[i]
        order[next_place[node]] = i
        next_place[node] += 1
    return order, starts
