"""Hard routing for trees whose every question is a threshold (the common case): no
question dispatch in the inner loop. Trees with other questions route through
:mod:`treekit_core.kernels.question_routing`."""

import numpy as np

from treekit_core.kernels.compiling import generic_jit, jit

#: A node's record in the walk's array, in 32-bit words: the threshold (a float64, words 0
#: and 1), the slot of its first child (2; the second child's is the next), the feature
#: (3), or at a leaf -(the leaf's node id) - 1.
RECORD_WORDS = 4
THRESHOLD_WORD, CHILDREN_WORD, FEATURE_WORD = 0, 2, 3


def pack_nodes(children_left, children_right, feature, threshold):
    """The array the threshold walks read, one 16-byte record a node
    (:data:`RECORD_WORDS`): its threshold, its first child's slot (the children are side
    by side: the step adds the comparison, no branch to mispredict) and its feature, at a
    leaf its node id as -id - 1 (where the walk stops, and which leaf it is). A step reads
    one record where it read three arrays (a grown-out tree's deep nodes are cache misses:
    one a step instead of two), in two thirds of the 24 bytes a record with both children
    took (a forest's records are alive while it predicts: issue 59's peak). The root's
    record is at slot 0, then the internal nodes' children, two adjacent slots each, the
    internal nodes in the order of their ids (a tree grown depth first keeps a node's
    descendants near it, as its ids do). Returned as its float64 and its int32 view (the
    same memory)."""
    left = np.ascontiguousarray(children_left, dtype=np.int32)
    n = left.shape[0]
    words = np.empty(n * RECORD_WORDS, dtype=np.int32)
    thresholds = words.view(np.float64)
    _write_records(
        left,
        np.ascontiguousarray(children_right, dtype=np.int32),
        np.ascontiguousarray(feature, dtype=np.int32),
        np.ascontiguousarray(threshold, dtype=np.float64),
        thresholds,
        words,
    )
    return thresholds, words


@jit()
def _write_records(left, right, feature, threshold, thresholds, words):
    """:func:`pack_nodes`'s records, one pass over the nodes in id order (a node's slot is
    set when its parent's record is written: a child's id is above its parent's). 1 ms for
    200 000 nodes where numpy's field-by-field scatters took 4 and held the interpreter
    (a forest's trees are packed on the row threads)."""
    n = left.shape[0]
    slots = np.zeros(n, dtype=np.int32)
    used = 1
    for node in range(n):
        at = RECORD_WORDS * slots[node]
        thresholds[(at + THRESHOLD_WORD) // 2] = threshold[node]
        child = left[node]
        if child < 0:
            words[at + CHILDREN_WORD] = -1
            words[at + FEATURE_WORD] = -node - 1
            continue
        other = right[node]
        if not (node < child < n and node < other < n) or used + 1 >= n:
            # (a node with two parents would take slots past the array's end)
            raise ValueError(
                "tree links must point to higher node ids inside the tree, one parent a node"
            )
        slots[child], slots[other] = used, used + 1
        words[at + CHILDREN_WORD] = used
        words[at + FEATURE_WORD] = feature[node]
        used += 2


@generic_jit
def _feature(words, slot):
    """The feature the node at ``slot`` asks (< 0: a leaf, :func:`_leaf_id`)."""
    return words[np.uint64(RECORD_WORDS) * slot + np.uint64(FEATURE_WORD)]


@generic_jit
def _leaf_id(feature):
    """The node id of the leaf whose record's feature word is ``feature``."""
    return np.uint64(-1 - feature)


@generic_jit
def _step(value, slot, thresholds, words):
    """The slot of the child of the node at ``slot`` (not a leaf) a row whose tested value
    is ``value`` goes to: the first where it is <= the threshold, else the second (no
    branch)."""
    threshold = thresholds[np.uint64(RECORD_WORDS // 2) * slot]
    first = words[np.uint64(RECORD_WORDS) * slot + np.uint64(CHILDREN_WORD)]
    return np.uint64(first) + np.uint64(not value <= threshold)


@generic_jit
def _leaf_of(row, thresholds, words):
    """The leaf (node id) a row (no missing tested value) reaches."""
    slot = np.uint64(0)
    feature = _feature(words, slot)
    while feature >= 0:
        slot = _step(row[np.uint64(feature)], slot, thresholds, words)
        feature = _feature(words, slot)
    return _leaf_id(feature)


#: Rows walked side by side: that many independent chains of loads in flight at once
#: (a step waits on the last one's load; a grown-out tree's deep nodes are cache misses).
#: Four rows ran 1.7x the one-row walk's speed on 100-tree forests, eight 1.25x four's on
#: grown-out extremely randomised trees; twelve as fast as eight, sixteen slower
#: (benchmarks/README.md).
WALKED_TOGETHER = 8


@generic_jit
def _leaves_of_block(X, i, thresholds, words, nodes):
    """The leaves (node ids) rows i..i + WALKED_TOGETHER - 1 reach, into ``nodes``
    (uint64), the rows walked side by side (by slot), a step each in turn until every one
    stands at a leaf."""
    for a in range(WALKED_TOGETHER):
        nodes[a] = 0
    walking = True
    while walking:
        walking = False
        for a in range(WALKED_TOGETHER):
            slot = nodes[a]
            feature = _feature(words, slot)
            if feature >= 0:
                nodes[a] = _step(X[i + a, np.uint64(feature)], slot, thresholds, words)
                walking = True
    for a in range(WALKED_TOGETHER):
        nodes[a] = _leaf_id(_feature(words, nodes[a]))


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
