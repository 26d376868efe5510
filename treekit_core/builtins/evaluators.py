"""Built-in evaluator ``hard``: each sample reaches one leaf and takes its distribution; a
sample with a missing tested value is sent down both branches by the node's missing share
(C4.5), so it gets the weighted mixture of the leaves it reaches."""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.components import Evaluator
from treekit_core.engine.questions import (
    only_thresholds,
    packed_thresholds,
    tree_distribution,
    tree_leaves,
)
from treekit_core.engine.validation import has_missing


def apply_tree(tree, X) -> np.ndarray:
    """Leaf id reached by every row of X (hard routing; no missing values)."""

    X = np.asarray(X, dtype=np.float64)
    if has_missing(X):
        raise ValueError(
            "X has missing values: a sample with a missing tested value reaches several "
            "leaves; use predict_proba / decide, which mix them by the missing shares"
        )
    return tree_leaves(tree, X, complete=True)


def hard_distribution(tree, X) -> np.ndarray:
    """Class distribution per sample under hard routing with C4.5's missing-value rule."""

    X = np.asarray(X, dtype=np.float64)
    if only_thresholds(tree) and not has_missing(X):
        # take: 10-15x faster than fancy indexing for a gather of whole rows
        return tree.value.take(tree_leaves(tree, X, complete=True), axis=0)
    return tree_distribution(tree, X)


def _packed_trees(trees) -> list:
    """Every tree's records for the threshold walk (remembered per tree), made on the row
    threads where a forest's first prediction makes many: each tree's are a fresh
    allocation whose first touch faults its pages in (1 ms for a tree of 75 000 nodes, 0.8
    of it the faults), a seventh of a 100-tree forest's first prediction of 100 000 rows
    made one at a time (0.72 s against 0.77-0.88 s on two threads). One allocation for
    all the trees was slower still: numpy asks for huge pages from 4 MB on, and the
    kernel compacts memory to find them."""
    from treekit_core.kernels.usable_cpus import row_threads

    def packed(tree):
        return tree.derived("packed thresholds", lambda: packed_thresholds(tree))

    threads = row_threads()
    if threads <= 1 or len(trees) < 2 * threads:
        return [packed(tree) for tree in trees]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(packed, trees))


def _rows_per_chunk(trees) -> int:
    """The fewest rows a chunk of a forest's walk should hold: half the trees' mean node
    count. Each chunk walks its rows through every tree, reading each tree's deep nodes
    from memory again; a 100-tree forest of 75 000-node trees predicted 100 000 rows on two
    threads in 0.80 s with chunks of 6 250 rows, 0.51 s with one chunk a thread."""
    return sum(tree.n_nodes for tree in trees) // (2 * len(trees))


def average_threshold_trees(trees, X) -> np.ndarray:
    """The mean of the leaf values the rows of X (complete) reach in ``trees`` (threshold
    questions only): rows in blocks, each block walked through every tree in order."""
    from treekit_core.kernels.routing import add_leaf_values
    from treekit_core.kernels.row_chunks import for_row_chunks

    if not (X.flags.c_contiguous or X.flags.f_contiguous):
        X = np.ascontiguousarray(X)
    nodes = _packed_trees(trees)
    total = np.zeros((X.shape[0], trees[0].value.shape[1]))

    def block(start, stop):
        for tree, packed in zip(trees, nodes, strict=True):
            add_leaf_values(X, *packed, tree.value, total, start, stop)

    for_row_chunks(block, X.shape[0], cost=len(trees), min_chunk_rows=_rows_per_chunk(trees))
    total /= len(trees)
    return total


def threshold_tree_values(trees, X) -> np.ndarray:
    """Every tree's leaf values for the rows of X (complete), n x len(trees) x K, for
    ``trees`` of threshold questions only: rows in blocks on the threads, each block walked
    through every tree in order, its values added into the tree's zeroed column (the walk
    :func:`average_threshold_trees` adds with)."""
    from treekit_core.kernels.routing import add_leaf_values
    from treekit_core.kernels.row_chunks import for_row_chunks

    if not (X.flags.c_contiguous or X.flags.f_contiguous):
        X = np.ascontiguousarray(X)
    nodes = _packed_trees(trees)
    out = np.zeros((X.shape[0], len(trees), trees[0].value.shape[1]))

    def block(start, stop):
        for t, (tree, packed) in enumerate(zip(trees, nodes, strict=True)):
            add_leaf_values(X, *packed, tree.value, out[:, t], start, stop)

    for_row_chunks(block, X.shape[0], cost=len(trees), min_chunk_rows=_rows_per_chunk(trees))
    return out


@attrs.define(slots=False)
class HardEvaluator(Evaluator):
    handles_missing: ClassVar[bool] = True
    # a sample's leaf depends on a feature only where a node asks about it (missing values:
    # fixed shares), so the leaf values' order under a monotonic constraint is kept
    provides: ClassVar[frozenset] = Evaluator.provides | {"monotone_routing"}
    name: ClassVar[str] = "hard"
    description: ClassVar[str] = (
        "route each sample to exactly one leaf (missing values: C4.5's shares)"
    )
    reads_training_rows = False  # its state is the tree's own

    def predict_distribution(self, tree, X):
        return hard_distribution(tree, X)

    def average_distribution(self, trees, X):
        """Threshold trees and rows without a missing value: every tree walked for a block
        of rows at a time, its leaf values added into the rows' sums (blocks on the
        threads allowed), so no tree makes an array of rows; the contract's loop
        otherwise. The same sums in the same order: the same bits."""
        X = np.asarray(X, dtype=np.float64)
        if has_missing(X) or not all(only_thresholds(tree) for tree in trees):
            return super().average_distribution(trees, X)
        return average_threshold_trees(trees, X)

    def tree_distributions(self, trees, X):
        """Threshold trees and rows without a missing value: every tree walked for a block
        of rows at a time, its leaf values written in place (blocks on the threads
        allowed); the contract's loop otherwise. The same values."""
        X = np.asarray(X, dtype=np.float64)
        if has_missing(X) or not all(only_thresholds(tree) for tree in trees):
            return super().tree_distributions(trees, X)
        return threshold_tree_values(trees, X)
