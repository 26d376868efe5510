"""Soft split search (SS): thresholds on a regular grid, scored on Gaussian-smoothed class
masses (Nunes et al., section "Soft search")."""

from __future__ import annotations

import warnings
from typing import ClassVar

import attrs
import numpy as np

from treekit_core import FEATURE_THRESHOLD, Split, Splitter
from treekit_core.builtins import C45, best_nominal_split, c45_choice, c45_nominal_split
from treekit_soft_search.spread import check_sigma, check_u, feature_spreads


def _positive(instance, attribute, value):
    if not (isinstance(value, (int, float)) and value > 0):
        raise ValueError(f"{attribute.name} must be a number > 0, got {value!r}")


def _cap(instance, attribute, value):
    if value is not None and not (isinstance(value, int) and value >= 2):
        raise ValueError(f"max_candidates must be None (no cap) or an int >= 2, got {value!r}")


#: Grid points per feature allowed without a cap (max_candidates=None).
MAX_UNCAPPED_GRID = 10**7


def check_grids(data, spreads, window, resolution, max_candidates) -> None:
    """Every feature's candidate grid, x_min - window sigma to x_max + window sigma, must be
    representable: finite bounds and span (values near the float64 limit overflow), and,
    without a cap, a number of points that fits in memory."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-missing column: no grid
        low = np.nanmin(data.X, axis=0) - window * spreads
        high = np.nanmax(data.X, axis=0) + window * spreads
        span = high - low
        points = np.where(spreads > 0, span / (spreads / resolution), 0.0)
    for j in np.flatnonzero(spreads > 0):
        name = f" ({data.feature_names[j]!r})" if data.feature_names is not None else ""
        if not (np.isfinite(spreads[j]) and np.isfinite(span[j])):
            raise ValueError(
                f"splitter 'soft_search': feature {j}{name} has values up to "
                f"{np.nanmax(np.abs(data.X[:, j])):g} and spread sigma = {spreads[j]:g}: its "
                "candidate grid (x_min - window sigma to x_max + window sigma) overflows float64; "
                "rescale the feature"
            )
        if max_candidates is None and points[j] > MAX_UNCAPPED_GRID:
            raise ValueError(
                f"splitter 'soft_search': feature {j}{name} would need {points[j]:.3g} grid "
                f"points (its range over sigma / resolution); set max_candidates (at most "
                f"{MAX_UNCAPPED_GRID:g} points without a cap)"
            )


@attrs.define(slots=False)
class SoftSearch(Splitter):
    """Parameters: ``u`` (relative uncertainty: sigma = u * mean of the feature),
    ``window`` (kappa: kernels are truncated at +-kappa sigma), ``resolution`` (rho: grid
    spacing sigma / rho), ``max_candidates`` (cap on grid points per feature; None: no
    cap), ``sigma`` (absolute spreads per feature, instead of u), ``c45_rules`` (score and
    choose splits as C4.5 release 8 does, with the soft gain in place of the hard one:
    MinSplit, the log2(Tries)/|D| penalty, the average-gain filter and gain ratio).

    Without ``c45_rules`` the feature with the largest smoothed impurity drop wins; that is
    the plain reading of the paper's SS, and it grows larger trees than C4.5 because nothing
    penalises the many candidate thresholds. The paper's SS was built inside C4.5's code,
    so ``c45_rules=True`` is the variant to compare with C4.5.
    """

    name: ClassVar[str] = "soft_search"
    handles_missing: ClassVar[bool] = True
    description: ClassVar[str] = (
        "thresholds on a grid scored by Gaussian-smoothed class masses (Nunes et al. SS)"
    )
    u: float = attrs.field(default=0.1, validator=check_u)
    window: float = attrs.field(default=3.0, validator=_positive)
    resolution: float = attrs.field(default=4.0, validator=_positive)
    max_candidates: int | None = attrs.field(default=1000, validator=_cap)
    sigma: list | None = attrs.field(default=None, validator=check_sigma)
    c45_rules: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))

    def requirements(self) -> dict:
        """C4.5's rules count classes (MinSplit, gain ratio): with them, class labels."""
        needs = dict(self.requires)
        if self.c45_rules:
            needs["target"] = frozenset(needs.get("target", ())) | {"class_decisions"}
        return needs

    def prepare(self, data, criterion, rules):
        from treekit_core.kernels import gather_sorted_feature, scan_sorted_feature
        from treekit_soft_search.kernels import soft_scan

        spreads = feature_spreads(data, self.u, self.sigma, "splitter 'soft_search'")
        check_grids(data, spreads, self.window, self.resolution, self.max_candidates)
        state = {
            "gather": gather_sorted_feature,
            "exact": scan_sorted_feature,
            "soft": soft_scan,
            "impurity": criterion.compiled_impurity(),
            "params": criterion.impurity_params(data.n_statistics),
            "data": data,
            "sigma": spreads,
            "evaluations": [],
        }
        if self.c45_rules:  # features without uncertainty are C4.5's own business
            c45 = C45()
            state["c45"], state["c45_state"] = c45, c45.prepare(data, criterion, rules)
        return state

    def find_split(self, state, node, rules):
        if self.c45_rules:
            return self._find_split_c45(state, node, rules)
        best = (-np.inf, -1, 0.0, 0.5)
        nominal = is_nominal(state["data"], node.features)
        for position, drop, threshold, share, _, _, _ in self._feature_searches(
            state, node, rules, np.flatnonzero(~nominal), rules.min_weight_leaf, 0.0
        ):
            if drop > best[0]:
                best = (drop, int(node.features[position]), threshold, share)
        found = None
        if best[1] >= 0:
            found = Split(best[1], float(best[2]), float(best[0]), {"missing_left": best[3]})
        if nominal.any():  # nominal features ask the core's subset questions, never softened
            split, score = best_nominal_split(
                (state["impurity"], state["params"], state["data"]),
                node,
                rules,
                node.features[nominal],
            )
            if split is not None and (found is None or score > found.improvement):
                found = split
        return found

    def _find_split_c45(self, state, node, rules):
        """C4.5 release 8's choice (``treekit_core.builtins.splitters.c45_choice``) on soft gains;
        features without uncertainty are scored by the core ``c45`` splitter itself."""
        c45 = state["c45"]
        if node.weight < 2 * c45.min_objects:
            return None
        features = node.features
        m = features.shape[0]
        info_gain, gain_ratio = np.full(m, np.nan), np.zeros(m)
        threshold, missing_share = np.zeros(m), np.zeros(m)
        nominal = is_nominal(state["data"], features)
        uncertain = (state["sigma"][features] > 0) & ~nominal
        for position, drop, theta, share, tries, left, known in self._feature_searches(
            state, node, rules, np.flatnonzero(uncertain), None, C45_SMALL
        ):
            gain = drop - np.log2(tries) / node.weight
            if gain <= C45_SMALL:
                continue
            # split information of the smoothed partition, missing values as a third branch
            split_entropy = (
                -_xlog2(left)
                - _xlog2(known - left)
                - _xlog2(node.weight - known)
                + _xlog2(node.weight)
            )
            info_gain[position] = gain
            gain_ratio[position] = (
                gain / (split_entropy / node.weight) if abs(split_entropy) > C45_SMALL else 0.0
            )
            threshold[position], missing_share[position] = theta, share
        nominal_splits = {}
        for position in np.flatnonzero(nominal):  # C4.5's multi-way split, as the c45 splitter
            found = c45_nominal_split(
                state["c45_state"][1:4], node, int(features[position]), c45.min_objects, False
            )
            if found is not None:
                info_gain[position], gain_ratio[position], nominal_splits[position] = found
        exact = np.flatnonzero(~uncertain & ~nominal)
        if exact.size:
            scores = c45.feature_scores(
                state["c45_state"], node, np.ascontiguousarray(features[exact])
            )
            info_gain[exact], gain_ratio[exact], threshold[exact], missing_share[exact] = scores
        best = c45_choice(info_gain, gain_ratio)
        if best < 0:
            return None
        if best in nominal_splits:
            return nominal_splits[best]
        return Split(
            int(features[best]),
            float(threshold[best]),
            float(info_gain[best]),
            {"missing_left": float(missing_share[best])},
        )

    def _feature_searches(self, state, node, rules, positions, min_weight, tie_tolerance):
        """For each position (into ``node.features``) whose feature has a split, yield
        (position, drop scaled by the known weight share, threshold, share of the known
        weight on the left, Tries, smoothed left weight, known weight).

        ``min_weight`` None means C4.5's MinSplit on the feature's known weight."""
        data = state["data"]
        n, k = node.n_samples, data.n_statistics
        unsorted, values, weights = np.empty(n), np.empty(n), np.empty(n)
        weighted = np.empty((n, k))
        left, right = np.empty(k), np.empty(k)
        impurity, params = state["impurity"], state["params"]
        for position in positions:
            f = int(node.features[position])
            sigma = state["sigma"][f]
            known = state["gather"](
                data.X,
                data.evidence,
                node.rows,
                node.row_weights,
                f,
                unsorted,
                values,
                weighted,
                weights,
            )
            if known < 2 or values[known - 1] <= values[0] + FEATURE_THRESHOLD:
                continue
            if known == n:
                sums, weight, base = node.statistics, node.weight, node.impurity
            else:  # C4.5: judge the feature on its known values, scaled by their weight share
                sums = np.ascontiguousarray(weighted[:known].sum(axis=0))
                weight = float(weights[:known].sum())
                base = impurity(sums, weight, params)
            if min_weight is None:
                feature_min_weight = min(max(0.1 * weight / k, C45_MIN_OBJECTS), 25.0)
                if known < 2 * feature_min_weight:
                    continue
                feature_min_weight -= C45_SMALL
            else:
                feature_min_weight = min_weight
            kv, kw, kweights = values[:known], weighted[:known], weights[:known]
            scale = weight / node.weight
            if sigma > 0:
                drop, threshold, evaluations, tries, left_weight = state["soft"](
                    impurity,
                    params,
                    kv,
                    kw,
                    kweights,
                    sums,
                    weight,
                    base,
                    float(sigma),
                    float(self.window),
                    float(self.resolution),
                    self.max_candidates or 0,
                    rules.min_samples_leaf,
                    feature_min_weight,
                    tie_tolerance / scale,
                )
                state["evaluations"].append(evaluations)
                if tries == 0:
                    continue
                # missing values follow the hard partition's share, which is what propagates
                share = float(kweights[kv <= threshold].sum() / weight)
            else:  # no uncertainty: the exact search
                drop, threshold, position_of_cut = state["exact"](
                    impurity,
                    params,
                    kv,
                    kw,
                    kweights,
                    sums,
                    weight,
                    base,
                    rules.min_samples_leaf,
                    feature_min_weight,
                    left,
                    right,
                )
                if position_of_cut < 0:
                    continue
                tries, left_weight = 1, float(kweights[: position_of_cut + 1].sum())
                share = left_weight / weight
            yield position, drop * scale, threshold, share, tries, left_weight, weight

    node_field_names = ("missing_left",)


#: C4.5's MINOBJS (the core ``c45`` splitter's default) and Weka's comparison tolerance.
C45_MIN_OBJECTS = 2.0
C45_SMALL = 1e-6


def is_nominal(data, features) -> np.ndarray:
    """Per feature of ``features``: whether it is nominal."""
    if data.n_categories is None:
        return np.zeros(features.shape[0], dtype=bool)
    return data.n_categories[features] > 0


def _xlog2(x):
    return x * np.log2(x) if x > 1e-6 else 0.0
