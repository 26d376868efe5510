"""Built-in evaluator ``hard``: each sample reaches one leaf and takes its distribution; a
sample with a missing tested value is sent down both branches by the node's missing share
(C4.5), so it gets the weighted mixture of the leaves it reaches."""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.components import Evaluator
from treekit_core.engine.questions import only_thresholds, tree_distribution, tree_leaves
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
