"""Soft split search (SS): thresholds on a regular grid, scored on Gaussian-smoothed class
masses (Nunes et al., section "Soft search")."""
from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core import Split, Splitter
from treekit_soft_search.spread import check_sigma, check_u, feature_spreads


def _positive(instance, attribute, value):
    if not (isinstance(value, (int, float)) and value > 0):
        raise ValueError(f"{attribute.name} must be a number > 0, got {value!r}")


def _cap(instance, attribute, value):
    if value is not None and not (isinstance(value, int) and value >= 2):
        raise ValueError(f"max_candidates must be None (no cap) or an int >= 2, got {value!r}")


@attrs.define(slots=False)
class SoftSearch(Splitter):
    """Parameters: ``u`` (relative uncertainty: sigma = u * mean of the feature),
    ``window`` (kappa: kernels are truncated at +-kappa sigma), ``resolution`` (rho: grid
    spacing sigma / rho), ``max_candidates`` (cap on grid points per feature; None: no
    cap), ``sigma`` (absolute spreads per feature, instead of u)."""

    name: ClassVar[str] = "soft_search"
    handles_missing: ClassVar[bool] = True
    description: ClassVar[str] = "thresholds on a grid scored by Gaussian-smoothed class masses (Nunes et al. SS)"
    u: float = attrs.field(default=0.1, validator=check_u)
    window: float = attrs.field(default=3.0, validator=_positive)
    resolution: float = attrs.field(default=4.0, validator=_positive)
    max_candidates: int | None = attrs.field(default=1000, validator=_cap)
    sigma: list | None = attrs.field(default=None, validator=check_sigma)
    c45_min_split: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))

    def check_data(self, data) -> None:
        data.refuse_nominal(self)

    def prepare(self, data, criterion, rules):
        from treekit_core.kernels.node_search import gather_sorted_feature
        from treekit_core.kernels.split_search import scan_sorted_feature
        from treekit_soft_search.kernels import soft_scan

        spreads = feature_spreads(data, self.u, self.sigma, "splitter 'soft_search'")
        return {"gather": gather_sorted_feature, "exact": scan_sorted_feature, "soft": soft_scan,
                "impurity": criterion.compiled_impurity(), "params": criterion.impurity_params(data.n_classes),
                "data": data, "sigma": spreads, "evaluations": []}

    def find_split(self, state, node, rules):
        data = state["data"]
        n, k = node.n_samples, data.n_classes
        unsorted, values, weights = np.empty(n), np.empty(n), np.empty(n)
        weighted = np.empty((n, k))
        left, right = np.empty(k), np.empty(k)
        impurity, params = state["impurity"], state["params"]
        parent_impurity = node.impurity
        min_weight = rules.min_weight_leaf
        if self.c45_min_split:
            min_weight = max(min_weight, min(max(0.1 * node.weight / k, 2.0), 25.0))
        best = (-np.inf, -1, 0.0, 0.5)
        for f in node.features:
            known = state["gather"](data.X, data.evidence, node.rows, node.row_weights, int(f), unsorted, values,
                                    weighted, weights)
            if known < 2 or values[known - 1] <= values[0] + 1e-7:
                continue
            if known == n:
                sums, weight, base = node.class_sums, node.weight, parent_impurity
            else:  # C4.5: judge the feature on its known values, scaled by their weight share
                sums = np.ascontiguousarray(weighted[:known].sum(axis=0))
                weight = float(weights[:known].sum())
                base = impurity(sums, weight, params)
            kv, kw, kweights = values[:known], weighted[:known], weights[:known]
            sigma = state["sigma"][f]
            if sigma > 0:
                drop, threshold, evaluations = state["soft"](
                    impurity, params, kv, kw, kweights, sums, weight, base,
                    float(sigma), float(self.window), float(self.resolution), self.max_candidates or 0,
                    rules.min_samples_leaf, min_weight)
                state["evaluations"].append(evaluations)
            else:  # no uncertainty: the exact search
                drop, threshold, position = state["exact"](
                    impurity, params, kv, kw, kweights, sums, weight, base,
                    rules.min_samples_leaf, min_weight, left, right)
                if position < 0:
                    drop = -np.inf
            drop *= weight / node.weight
            if drop > best[0]:
                share = float(kweights[kv <= threshold].sum() / weight)
                best = (drop, int(f), threshold, share)
        if best[1] < 0:
            return None
        return Split(best[1], float(best[2]), float(best[0]), {"missing_left": best[3]})

    node_field_names = ("missing_left",)
