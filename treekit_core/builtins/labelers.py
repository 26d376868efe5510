"""Built-in labelers: ``majority``, the class with the largest posterior (Bayes' rule), and
``cost_matrix``, the decision of minimum expected cost (CART's costs; rpart's ``loss``)."""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.components import Labeler


@attrs.define(slots=False)
class Majority(Labeler):
    """p_c = W_c / sum_k W_k; decide argmax p_c (the first class on ties, as scikit-learn).

    ``laplace=True`` smooths the distribution to (W_c + 1) / (W + K) (C4.5's Laplace
    correction, used by Nunes et al.); decisions do not change.
    """

    name: ClassVar[str] = "majority"
    description: ClassVar[str] = "class with the largest weighted proportion"
    laplace: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))

    def distribution(self, class_sums, weights):
        if not self.laplace:
            return super().distribution(class_sums, weights)
        k = class_sums.shape[1]
        return (class_sums + 1.0) / (class_sums.sum(axis=1, keepdims=True) + k)

    def decide(self, proba):
        return np.argmax(proba, axis=1).astype(np.int64)


def _check_costs(instance, attribute, value):
    try:
        costs = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"costs must be a K x K matrix of numbers, got {value!r}") from None
    if costs.ndim != 2 or costs.shape[0] != costs.shape[1] or costs.shape[0] < 2:
        raise ValueError(f"costs must be a square K x K matrix (K >= 2), got shape {costs.shape}")
    if not np.isfinite(costs).all() or (costs < 0).any():
        raise ValueError("costs must be finite and non-negative")


@attrs.define(slots=False)
class CostMatrix(Labeler):
    """``costs[i][j]``: the cost of deciding class j when the truth is class i (classes in
    the order of ``classes_``); decide argmin_j sum_i p_i costs[i][j], the first class on
    ties (as rpart). Equal off-diagonal costs reproduce the majority rule."""

    name: ClassVar[str] = "cost_matrix"
    description: ClassVar[str] = "decision of minimum expected cost under a K x K cost matrix"
    costs: list = attrs.field(default=None, validator=_check_costs)

    def check_data(self, data) -> None:
        if len(self.costs) != data.n_statistics:
            raise ValueError(
                f"labeler 'cost_matrix': costs is {len(self.costs)} x {len(self.costs)} "
                f"but the data has {data.n_statistics} classes"
            )

    def expected_costs(self, proba):
        return proba @ np.asarray(self.costs, dtype=np.float64)

    def decide(self, proba):
        return np.argmin(self.expected_costs(proba), axis=1).astype(np.int64)

    def node_error(self, class_sums, weights):
        """The node's weighted cost (misclassification cost for a 0/1 matrix), the risk of
        cost-complexity pruning as in CART with costs."""
        decision = self.decide(self.distribution(class_sums, weights))
        return (class_sums @ np.asarray(self.costs, dtype=np.float64))[
            np.arange(len(weights)), decision
        ]
