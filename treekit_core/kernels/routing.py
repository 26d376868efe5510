"""Hard routing for trees whose every question is a threshold (the common case): no
question dispatch in the inner loop. Trees with other questions route through
:mod:`treekit_core.kernels.question_routing`."""

import numpy as np

from treekit_core.kernels.compiling import generic_jit, jit

#: A node's record in the walk's array, in 32-bit words: the threshold (a float64, words 0
#: and 1), the left and the right child (2, 3), the feature (4; -1 at a leaf), unused (5).
RECORD_WORDS = 6
THRESHOLD_WORD, LEFT_WORD, FEATURE_WORD = 0, 2, 4


def pack_nodes(children_left, children_right, feature, threshold):
    """The array the threshold walks read, one 24-byte record a node (:data:`RECORD_WORDS`):
    its threshold, its two children side by side (the step is one load at an index the
    comparison gives, no branch to mispredict) and its feature, -1 at the leaves (where
    the walk stops), so a step reads one record where it read three arrays (a grown-out
    tree's deep nodes are cache misses: one a step instead of two). Returned as its
    float64 and its int32 view (the same memory)."""
    left = np.asarray(children_left)
    n = left.shape[0]
    words = np.empty(n * RECORD_WORDS, dtype=np.int32)
    records = words.reshape(n, RECORD_WORDS)
    records[:, LEFT_WORD] = left
    records[:, LEFT_WORD + 1] = children_right
    records[:, FEATURE_WORD] = np.where(left < 0, -1, feature)
    records[:, FEATURE_WORD + 1] = 0
    thresholds = words.view(np.float64)
    thresholds[THRESHOLD_WORD :: RECORD_WORDS // 2] = threshold
    return thresholds, words


@generic_jit
def _feature(words, node):
    """The feature ``node`` asks (-1: a leaf)."""
    return words[np.uint64(RECORD_WORDS) * node + np.uint64(FEATURE_WORD)]


@generic_jit
def _step(value, node, thresholds, words):
    """The child of ``node`` (not a leaf) a row whose tested value is ``value`` goes to:
    the left one where it is <= the threshold, else the right one, picked by index (no
    branch)."""
    threshold = thresholds[np.uint64(RECORD_WORDS // 2) * node]
    right = np.uint64(not value <= threshold)
    return np.uint64(words[np.uint64(RECORD_WORDS) * node + np.uint64(LEFT_WORD) + right])


@generic_jit
def _leaf_of(row, thresholds, words):
    """The leaf a row (no missing tested value) reaches."""
    node = np.uint64(0)
    feature = _feature(words, node)
    while feature >= 0:
        node = _step(row[np.uint64(feature)], node, thresholds, words)
        feature = _feature(words, node)
    return node


#: Rows walked side by side: that many independent chains of loads in flight at once
#: (a step waits on the last one's load; a grown-out tree's deep nodes are cache misses).
#: Four rows ran 1.7x the one-row walk's speed on 100-tree forests, eight 1.25x four's on
#: grown-out extremely randomised trees; twelve as fast as eight, sixteen slower
#: (benchmarks/README.md).
WALKED_TOGETHER = 8


@generic_jit
def _leaves_of_block(X, i, thresholds, words, nodes):
    """The leaves rows i..i + WALKED_TOGETHER - 1 reach, into ``nodes`` (uint64), the rows
    walked side by side, a step each in turn until every one stands at a leaf."""
    for a in range(WALKED_TOGETHER):
        nodes[a] = 0
    walking = True
    while walking:
        walking = False
        for a in range(WALKED_TOGETHER):
            node = nodes[a]
            feature = _feature(words, node)
            if feature >= 0:
                nodes[a] = _step(X[i + a, np.uint64(feature)], node, thresholds, words)
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
def walk_thresholds(X, thresholds, words, leaves, start, stop):
    """Leaf id reached by rows start..stop-1 of X, into ``leaves`` (rows must have no
    missing tested values; the node arrays, :func:`pack_nodes`'s, are checked before any
    kernel reads them), :data:`WALKED_TOGETHER` rows at a time. Indices are unsigned:
    numba then omits the negative-index wraparound in the inner loop, which made this walk
    1.6x slower than scikit-learn's."""
    nodes = np.empty(WALKED_TOGETHER, dtype=np.uint64)
    i = start
    while i + WALKED_TOGETHER <= stop:
        _leaves_of_block(X, i, thresholds, words, nodes)
        for a in range(WALKED_TOGETHER):
            leaves[i + a] = nodes[a]
        i += WALKED_TOGETHER
    for j in range(i, stop):
        leaves[j] = _leaf_of(X[j], thresholds, words)


@jit()
def add_leaf_values(X, thresholds, words, value, out, start, stop):
    """out[i] += the value of the leaf row i of X reaches (rows start..stop-1; no missing
    tested value), :data:`WALKED_TOGETHER` rows at a time: one tree of a forest's
    average, for a block of rows, with no array of the rows' leaves or values in between
    (issue 59)."""
    n_values = value.shape[1]
    nodes = np.empty(WALKED_TOGETHER, dtype=np.uint64)
    i = start
    while i + WALKED_TOGETHER <= stop:
        _leaves_of_block(X, i, thresholds, words, nodes)
        for a in range(WALKED_TOGETHER):
            for k in range(n_values):
                out[i + a, k] += value[nodes[a], k]
        i += WALKED_TOGETHER
    for j in range(i, stop):
        node = _leaf_of(X[j], thresholds, words)
        for k in range(n_values):
            out[j, k] += value[node, k]
