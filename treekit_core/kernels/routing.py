"""Hard routing for trees whose every question is a threshold (the common case): no
question dispatch in the inner loop. Trees with other questions route through
:mod:`treekit_core.kernels.question_routing`."""

import numpy as np

from treekit_core.kernels.compiling import jit


def pack_nodes(children_left, children_right, feature, threshold):
    """The arrays :func:`walk_thresholds` reads: children and features as int32 (20 bytes
    a node with the threshold). A tree's own arrays are these types already (it holds them
    so, :data:`treekit_core.engine.tree.HELD_INTEGERS`): they are passed as they are, no
    copy. A leaf's feature is never read (the walk stops where ``left`` is negative)."""
    return (
        np.ascontiguousarray(children_left, dtype=np.int32),
        np.ascontiguousarray(children_right, dtype=np.int32),
        np.ascontiguousarray(feature, dtype=np.int32),
        np.ascontiguousarray(threshold, dtype=np.float64),
    )


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
def walk_thresholds(X, left, right, feature, threshold, leaves, start, stop):
    """Leaf id reached by rows start..stop-1 of X, into ``leaves`` (rows must have no
    missing tested values; the node arrays are checked before any kernel reads them).
    Indices are unsigned: numba then omits the negative-index wraparound in the inner loop,
    which made this walk 1.6x slower than scikit-learn's."""
    for i in range(start, stop):
        row = X[i]
        node = np.uint64(0)
        while left[node] >= 0:
            if row[np.uint64(feature[node])] <= threshold[node]:
                node = np.uint64(left[node])
            else:
                node = np.uint64(right[node])
        leaves[i] = node


@jit()
def add_leaf_values(X, left, right, feature, threshold, value, out, start, stop):
    """out[i] += the value of the leaf row i of X reaches (rows start..stop-1; no missing
    tested value): one tree of a forest's average, for a block of rows, with no array of
    the rows' leaves or values in between (issue 59)."""
    n_values = value.shape[1]
    for i in range(start, stop):
        row = X[i]
        node = np.uint64(0)
        while left[node] >= 0:
            if row[np.uint64(feature[node])] <= threshold[node]:
                node = np.uint64(left[node])
            else:
                node = np.uint64(right[node])
        for k in range(n_values):
            out[i, k] += value[node, k]
