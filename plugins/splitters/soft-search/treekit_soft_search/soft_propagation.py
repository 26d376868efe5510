"""Soft training propagation (STP): every training sample goes down both branches,
weighted by the probability of its true value lying on each side (Nunes et al.)."""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core import Propagator, get_registry
from treekit_core.builtins import HardPropagator
from treekit_soft_search.spread import check_sigma, check_u, feature_spreads


def left_probability(x, threshold, sigma):
    """Phi((threshold - x) / sigma); a step (x <= threshold) when sigma is 0."""
    from scipy.special import ndtr

    if sigma <= 0:
        return (x <= threshold).astype(np.float64)
    return ndtr((threshold - x) / sigma)


def missing_left(split) -> float:
    """Where a sample with a missing value goes left: the split's first branch share."""
    return 0.5 if split.branch_shares is None else float(split.branch_shares[0])


def _floor(instance, attribute, value):
    if not (isinstance(value, (int, float)) and 0 <= value < 1):
        raise ValueError(f"floor must be in [0, 1), got {value!r}")


@attrs.define(slots=False)
class SoftPropagation(Propagator):
    """Left weight w_i Phi((theta - x_ia) / sigma_t), right w_i (1 - Phi), multiplied down the
    path. A sample whose weight at a branch falls below ``floor`` times its original weight
    is dropped from that branch (default 1e-9: far below any weight that could change a
    split, and it keeps nodes from carrying every training sample forever)."""

    name: ClassVar[str] = "soft"
    description: ClassVar[str] = (
        "training samples go down both branches with Gaussian weights (Nunes et al. STP)"
    )
    handles_missing: ClassVar[bool] = True
    produces_fractional_weights: ClassVar[bool] = True
    requires: ClassVar[dict] = {"splitter": frozenset({"axis_aligned"})}
    u: float = attrs.field(default=0.1, validator=check_u)
    sigma: list | None = attrs.field(default=None, validator=check_sigma)
    floor: float = attrs.field(default=1e-9, validator=_floor)

    def prepare(self, data):
        return feature_spreads(data, self.u, self.sigma, "propagator 'soft'")

    def propagate(self, state, data, node, split):
        if not get_registry().question(split.question).compares_threshold:
            return HardPropagator().propagate(None, data, node, split)  # only thresholds soften
        x = data.X[node.rows, split.feature]
        p = left_probability(x, split.threshold, state[split.feature])
        p = np.where(np.isnan(x), missing_left(split), p)
        original = data.weight[node.rows]
        left_w, right_w = node.row_weights * p, node.row_weights * (1.0 - p)
        keep_left = left_w > self.floor * original
        keep_right = right_w > self.floor * original
        return (
            (node.rows[keep_left], left_w[keep_left]),
            (node.rows[keep_right], right_w[keep_right]),
        )
