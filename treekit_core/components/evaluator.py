"""The evaluator: routes new samples through a tree and mixes leaf distributions."""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.components.base import Component, FittedAfterGrowth


@attrs.define(slots=False)
class Evaluator(FittedAfterGrowth, Component):
    """Routes new samples through a tree and mixes leaf distributions."""

    kind: ClassVar[str] = "evaluator"
    sees_features: ClassVar[bool] = True
    provides: ClassVar[frozenset] = frozenset({"hard_routing"})

    def fit(self, tree, data, labeler) -> dict:
        """Return the state this evaluator needs at prediction time (stored in
        ``Tree.component_state["evaluator"]``). Called once per fit, after pruning;
        ``labeler`` says how decisions and errors are counted. Default: {}."""
        return {}

    def stopping_nodes(self, tree, X: np.ndarray):
        """The node every sample stops at, when this evaluator sends each sample to one node
        (rpart's surrogates: a leaf, or a node no surrogate passes); None when it mixes
        several leaves. Called by ``apply`` (and so ``decision_path``); with None, ``apply``
        routes hard and refuses samples with a missing tested value. Default: None."""
        return None

    def predict_distribution(self, tree, X: np.ndarray) -> np.ndarray:  # pragma: no cover
        """Class distribution per sample (n x K): leaf distributions mixed by routing
        weights. Called by ``predict_proba``, ``decide`` and cross-validated pruning."""
        raise NotImplementedError

    def average_distribution(self, trees, X: np.ndarray) -> np.ndarray:
        """The mean over ``trees`` of :meth:`predict_distribution` (n x K), summed tree by
        tree in their order, then divided by their number. Called by an ensemble's
        predictions (a forest's ``predict``, ``predict_proba``, ``decide``, curves aside);
        an evaluator may walk every tree for a block of rows in one pass instead (the hard
        evaluator does), with these bits. Default: the loop over the trees."""
        total = 0.0
        for tree in trees:
            total = total + self.predict_distribution(tree, X)
        return total / len(trees)

    def tree_distributions(self, trees, X: np.ndarray) -> np.ndarray:
        """Every tree's :meth:`predict_distribution` side by side: n x len(trees) x K, tree
        t's values at ``[:, t]``. Called by an ensemble's estimates that read each tree's
        values, not only their mean (a causal forest's variance from its little bags); an
        evaluator may walk every tree for a block of rows in one pass instead (the hard
        evaluator does), with these values. Default: the loop over the trees."""
        out = None
        for t, tree in enumerate(trees):
            values = self.predict_distribution(tree, X)
            if out is None:
                out = np.empty((values.shape[0], len(trees), values.shape[1]))
            out[:, t] = values
        return out
