"""Hard routing for trees whose every question is a threshold (the common case): no
question dispatch in the inner loop. Trees with other questions route through
:mod:`treekit_core.kernels.question_routing`."""

import numpy as np

from treekit_core.kernels.compiling import generic_jit, jit


def pack_nodes(children_left, children_right, feature, threshold):
    """The arrays the threshold walks read: each node's two children side by side (int32,
    ``children[2 t]`` the left, ``children[2 t + 1]`` the right: the step is one load at
    an index the comparison gives, no branch to mispredict), the features as int32 with
    -1 at the leaves (where the walk stops), the thresholds. A tree holds its features
    so (-1 at leaves, int32): they are passed as they are."""
    left = np.asarray(children_left)
    children = np.empty(2 * left.shape[0], dtype=np.int32)
    children[0::2] = left
    children[1::2] = children_right
    feature = np.asarray(feature)
    leaf = left < 0
    if (feature[leaf] >= 0).any():  # a leaf's feature was never read: it may be anything
        feature = np.where(leaf, -1, feature)
    return (
        children,
        np.ascontiguousarray(feature, dtype=np.int32),
        np.ascontiguousarray(threshold, dtype=np.float64),
    )


@generic_jit
def _step(row, node, children, feature, threshold):
    """The child of ``node`` (not a leaf) a row goes to: the left one where its value is
    <= the threshold, else the right one, picked by index (no branch)."""
    right = np.uint64(not row[np.uint64(feature[node])] <= threshold[node])
    return np.uint64(children[np.uint64(2) * node + right])


@generic_jit
def _leaf_of(row, children, feature, threshold):
    """The leaf a row (no missing tested value) reaches."""
    node = np.uint64(0)
    while feature[node] >= 0:
        node = _step(row, node, children, feature, threshold)
    return node


#: Rows walked side by side: that many independent chains of loads in flight at once
#: (a step waits on the last one's load; a grown-out tree's deep nodes are cache misses).
#: Four rows ran 1.7x the one-row walk's speed on 100-tree forests, eight 1.25x four's on
#: grown-out extremely randomised trees (benchmarks/README.md).
WALKED_TOGETHER = 8


@generic_jit
def _leaves_of_block(X, i, children, feature, threshold, nodes):
    """The leaves rows i..i + WALKED_TOGETHER - 1 reach, into ``nodes`` (uint64), the rows
    walked side by side, a step each in turn until every one stands at a leaf."""
    for a in range(WALKED_TOGETHER):
        nodes[a] = 0
    walking = True
    while walking:
        walking = False
        for a in range(WALKED_TOGETHER):
            node = nodes[a]
            f = feature[node]
            if f >= 0:
                right = np.uint64(not X[i + a, np.uint64(f)] <= threshold[node])
                nodes[a] = np.uint64(children[np.uint64(2) * node + right])
                walking = True


@jit()
def divide_rows(branch, rows, weights, left_share, right_share):
    """The training rows of a two-branch split, per branch, in their given order: a row
    whose branch is known (0, 1) goes wholly to it, one that cannot answer (branch < 0) to
    both, with the branch's share of its weight, kept where that is > 0 (C4.5). Returns
    (left rows, left weights, right rows, right weights)."""
    n = rows.shape[0]
    left_rows, right_rows = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    left_weights, right_weights = np.empty(n), np.empty(n)
    n_left = n_right = 0
    for i in range(n):
        b, w = branch[i], weights[i]
        if b < 0:
            share = w * left_share
            if share > 0:
                left_rows[n_left], left_weights[n_left] = rows[i], share
                n_left += 1
            share = w * right_share
            if share > 0:
                right_rows[n_right], right_weights[n_right] = rows[i], share
                n_right += 1
        elif b == 0:
            left_rows[n_left], left_weights[n_left] = rows[i], w
            n_left += 1
        else:
            right_rows[n_right], right_weights[n_right] = rows[i], w
            n_right += 1
    return (
        left_rows[:n_left].copy(),
        left_weights[:n_left].copy(),
        right_rows[:n_right].copy(),
        right_weights[:n_right].copy(),
    )


@jit()
def walk_thresholds(X, children, feature, threshold, leaves, start, stop):
    """Leaf id reached by rows start..stop-1 of X, into ``leaves`` (rows must have no
    missing tested values; the node arrays, :func:`pack_nodes`'s, are checked before any
    kernel reads them), :data:`WALKED_TOGETHER` rows at a time. Indices are unsigned:
    numba then omits the negative-index wraparound in the inner loop, which made this walk
    1.6x slower than scikit-learn's."""
    nodes = np.empty(WALKED_TOGETHER, dtype=np.uint64)
    i = start
    while i + WALKED_TOGETHER <= stop:
        _leaves_of_block(X, i, children, feature, threshold, nodes)
        for a in range(WALKED_TOGETHER):
            leaves[i + a] = nodes[a]
        i += WALKED_TOGETHER
    for j in range(i, stop):
        leaves[j] = _leaf_of(X[j], children, feature, threshold)


@jit()
def add_leaf_values(X, children, feature, threshold, value, out, start, stop):
    """out[i] += the value of the leaf row i of X reaches (rows start..stop-1; no missing
    tested value), :data:`WALKED_TOGETHER` rows at a time: one tree of a forest's
    average, for a block of rows, with no array of the rows' leaves or values in between
    (issue 59)."""
    n_values = value.shape[1]
    nodes = np.empty(WALKED_TOGETHER, dtype=np.uint64)
    i = start
    while i + WALKED_TOGETHER <= stop:
        _leaves_of_block(X, i, children, feature, threshold, nodes)
        for a in range(WALKED_TOGETHER):
            for k in range(n_values):
                out[i + a, k] += value[nodes[a], k]
        i += WALKED_TOGETHER
    for j in range(i, stop):
        node = _leaf_of(X[j], children, feature, threshold)
        for k in range(n_values):
            out[j, k] += value[node, k]
