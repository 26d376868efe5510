"""Soft evaluation (SE) and the shared machinery of gated evaluators."""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core import Evaluator
from treekit_soft_search.spread import check_sigma, check_u, feature_spreads


def mixture(
    tree, X, mode, sigma, lower=None, upper=None, z_minus=None, z_plus=None, standard_points=None
):
    """Class distribution of every sample: leaf distributions weighted by the product of
    the gates on their paths (one compiled traversal for every gate kind)."""
    from treekit_soft_search.kernels import gated_mixture

    n = tree.n_nodes
    filler = np.zeros(n)
    return gated_mixture(
        np.asarray(X, dtype=np.float64),
        tree.children_left,
        tree.children_right,
        tree.feature,
        tree.threshold,
        np.ascontiguousarray(tree.value),
        mode,
        np.ascontiguousarray(sigma, dtype=np.float64),
        filler if lower is None else np.ascontiguousarray(lower, dtype=np.float64),
        filler if upper is None else np.ascontiguousarray(upper, dtype=np.float64),
        filler if z_minus is None else np.ascontiguousarray(z_minus, dtype=np.float64),
        filler if z_plus is None else np.ascontiguousarray(z_plus, dtype=np.float64),
        np.zeros(1)
        if standard_points is None
        else np.ascontiguousarray(standard_points, dtype=np.float64),
        _missing_shares(tree),
        tree.max_depth,
    )


def _missing_shares(tree):
    share = np.asarray(
        tree.node_fields.get("missing_left", np.full(tree.n_nodes, 0.5)), dtype=np.float64
    )
    return np.ascontiguousarray(np.where(np.isnan(share), 0.5, share))


@attrs.define(slots=False)
class SoftEvaluation(Evaluator):
    """P(c | x) = sum over leaves of p_leaf(c) times the product over the path's tests of
    Phi((theta - x_a) / sigma_e) (left) or 1 - Phi (right), sigma_e = u * mean(a)."""

    name: ClassVar[str] = "soft"
    description: ClassVar[str] = (
        "class distribution mixed over all leaves with Gaussian gates (Nunes et al. SE)"
    )
    handles_missing: ClassVar[bool] = True
    provides: ClassVar[frozenset] = frozenset()
    requires: ClassVar[dict] = {"splitter": frozenset({"axis_aligned"})}
    u: float = attrs.field(default=0.1, validator=check_u)
    sigma: list | None = attrs.field(default=None, validator=check_sigma)

    def fit(self, tree, data, labeler):
        return {"sigma": feature_spreads(data, self.u, self.sigma, "evaluator 'soft'")}

    def predict_distribution(self, tree, X):
        from treekit_soft_search.kernels import GAUSSIAN

        return mixture(tree, X, GAUSSIAN, tree.component_state["evaluator"]["sigma"])
