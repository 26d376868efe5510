"""Built-in evaluator ``hard``: each sample reaches one leaf and takes its distribution; a
sample with a missing tested value is sent down both branches by the node's missing share
(C4.5), so it gets the weighted mixture of the leaves it reaches."""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.components import Evaluator


def _packed(tree):
    from treekit_core.engine.questions import question_fields
    from treekit_core.kernels.routing import pack_nodes

    question, mask, coef, share = question_fields(tree)
    nodes = pack_nodes(
        tree.children_left, tree.children_right, tree.feature, tree.threshold, question, mask, share
    )
    return nodes, coef


def has_missing(X) -> bool:
    """A finite sum proves there is no NaN without a mask the size of X."""
    return not np.isfinite(np.sum(X)) and bool(np.isnan(X).any())


def apply_tree(tree, X) -> np.ndarray:
    """Leaf id reached by every row of X (hard routing; no missing values)."""
    X = np.asarray(X, dtype=np.float64)
    if has_missing(X):
        raise ValueError(
            "X has missing values: a sample with a missing tested value reaches several "
            "leaves; use predict_proba / decide, which mix them by the missing shares"
        )
    return _apply(tree, X)


def _apply(tree, X) -> np.ndarray:
    from treekit_core.engine.questions import has_questions_beyond_thresholds
    from treekit_core.kernels.routing import apply_hard, apply_thresholds

    nodes, coef = _packed(tree)
    if not has_questions_beyond_thresholds(tree):
        return apply_thresholds(X, nodes)
    return apply_hard(X, nodes, coef)


def hard_distribution(tree, X) -> np.ndarray:
    """Class distribution per sample under hard routing with C4.5's missing-value rule."""
    X = np.asarray(X, dtype=np.float64)
    if not has_missing(X):
        return tree.value[_apply(tree, X)]
    from treekit_core.kernels.routing import mixture_hard

    nodes, coef = _packed(tree)
    return mixture_hard(X, nodes, coef, np.ascontiguousarray(tree.value), tree.max_depth)


@attrs.define(slots=False)
class HardEvaluator(Evaluator):
    handles_missing: ClassVar[bool] = True
    name: ClassVar[str] = "hard"
    description: ClassVar[str] = (
        "route each sample to exactly one leaf (missing values: C4.5's shares)"
    )

    def predict_distribution(self, tree, X):
        return hard_distribution(tree, X)
