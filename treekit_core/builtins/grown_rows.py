"""Every training row's leaf from the order a compiled grower left the rows in, for a
splitter's ``training_leaves`` (no walk of X after the growth): the random cuts' grower
and the histogram plugin's partition one array of row ids node by node, a node's rows
holding [start, end) and its first child's the first part, so the leaves' rows follow
one another in depth-first order.

The rows are kept with the tree they grew (a forest grows its trees on several threads,
each on data of its own, and its regressor asks for every tree's leaves after the last
one grew), only where the data says the estimator will ask
(``TrainingData.training_leaves_wanted``), and handed over once: a classifier's forest
keeps nothing, a regressor's no more than one array per tree until it asks."""

from __future__ import annotations

import threading
import weakref

import numpy as np

#: tree -> the row ids its growth left, until asked (a tree that goes away takes its own)
_GROWN: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_GROWN_LOCK = threading.Lock()


def keep_grown_rows(data, tree, rows, numbered_depth_first: bool = False) -> None:
    """Keep the row ids ``rows`` in the order the growth of ``tree`` on ``data`` left
    them, where ``data.training_leaves_wanted`` says the estimator will ask.
    ``numbered_depth_first``: the grower numbered the nodes depth first, first branch
    first (its leaves in node order are then in the rows' order; the tree's general
    depth-first order derives every node's child list, 12 ms for a tree of 200 000
    nodes, more than the walk of X it saves)."""
    if data.training_leaves_wanted:
        with _GROWN_LOCK:
            _GROWN[tree] = (rows, numbered_depth_first)


def grown_leaves(data, tree):
    """Each row's leaf in ``tree`` (int32, in row order) from what :func:`keep_grown_rows`
    kept for it (handed over: a second ask is None), or None where nothing was kept or
    the growth's rows are not every row of ``data`` (rows without weight are in no
    leaf's rows: the caller walks X)."""
    with _GROWN_LOCK:
        kept = _GROWN.pop(tree, None)
    if kept is None or kept[0].size != data.n_samples:
        return None
    return leaves_of_grown_rows(tree, *kept)


def leaves_of_grown_rows(tree, rows, numbered_depth_first: bool = False):
    """Each row's leaf from the row ids ``rows`` in the order a grower partitioned them:
    the leaves in depth-first order, first branch first (node order where the nodes are
    ``numbered_depth_first``), each holding as many rows as it counts (None where the
    counts do not add up to the rows, which no tree of such a grower does)."""
    if numbered_depth_first:
        leaves = np.flatnonzero(tree.is_leaf)
    else:
        order = tree.preorder()[0]
        leaves = order[tree.is_leaf[order]]
    counts = np.asarray(tree.n_samples)[leaves]
    if counts.sum() != rows.size:
        return None
    from treekit_core.kernels.row_passes import on_row_threads, scatter_leaves  # numba

    found = np.empty(rows.size, dtype=np.int32)  # int32: half the bytes of the fit's peak
    # found[rows] = np.repeat(leaves, counts) in one pass (a third of the time at 1M rows),
    # on the fit's threads; the rows a permutation of every row (the counts add up to
    # them, checked above)
    ends = np.cumsum(counts, dtype=np.int64)
    on_row_threads(scatter_leaves, rows.size, rows, leaves.astype(np.int32), ends, found)
    return found
