"""Built-in evaluator ``hard``: each sample reaches one leaf and takes its distribution; a
sample with a missing tested value is sent down both branches by the node's missing share
(C4.5), so it gets the weighted mixture of the leaves it reaches."""
from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.components import Evaluator


def _packed(tree):
    from treekit_core.kernels.routing import pack_nodes
    from treekit_core.questions import question_fields

    question, mask, coef, share = question_fields(tree)
    nodes = pack_nodes(tree.children_left, tree.children_right, tree.feature, tree.threshold, question, mask, share)
    return nodes, coef


def apply_tree(tree, X) -> np.ndarray:
    """Leaf id reached by every row of X (hard routing; no missing values)."""
    from treekit_core.kernels.routing import apply_hard

    X = np.asarray(X, dtype=np.float64)
    if np.isnan(X).any():
        raise ValueError("X has missing values: a sample with a missing tested value reaches several "
                         "leaves; use predict_proba / decide, which mix them by the missing shares")
    nodes, coef = _packed(tree)
    return apply_hard(X, nodes, coef)


def hard_distribution(tree, X) -> np.ndarray:
    """Class distribution per sample under hard routing with C4.5's missing-value rule."""
    X = np.asarray(X, dtype=np.float64)
    if not np.isnan(X).any():
        return tree.value[apply_tree(tree, X)]
    from treekit_core.kernels.routing import mixture_hard

    nodes, coef = _packed(tree)
    return mixture_hard(X, nodes, coef, np.ascontiguousarray(tree.value), tree.max_depth)


@attrs.define(slots=False)
class Hard(Evaluator):
    handles_missing: ClassVar[bool] = True
    name: ClassVar[str] = "hard"
    description: ClassVar[str] = "route each sample to exactly one leaf (missing values: C4.5's shares)"

    def predict_distribution(self, tree, X):
        return hard_distribution(tree, X)
