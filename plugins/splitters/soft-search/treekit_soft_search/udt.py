"""UDT, decision trees for uncertain data (Tsang et al., 2011), the paper's slow baseline.

Each value x of feature a becomes a pdf: a Gaussian truncated at +-2 sigma with
2 sigma = width * |A| (|A| = the feature's training range), represented by ``samples``
points of mass 1/samples each, placed at the truncated Gaussian's quantiles (our reading of
"s points, each of mass 1/s"). At a node, a tuple's pdf is its points inside the node's box,
renormalised. Split candidates are all points at the node; a tuple straddling a threshold is
split into two fractional tuples. Classification splits the test pdf the same way.

The plain search sorts every point at the node and evaluates each. The pruned search
(``pruned_search=True``, Tsang et al. section 5) sweeps the pdfs' end points only, bounds
each interval between end points by the corners of the box of class sums its candidates can
reach (a lower bound of the children's impurity for any concave criterion), and evaluates
point by point only the intervals whose bound can beat the best candidate so far: the same
split, with a fraction of the evaluations.
"""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core import Evaluator, Propagator, Split, Splitter, get_registry, state_array
from treekit_core.builtins import HardPropagator, best_nominal_split
from treekit_soft_search.soft_evaluation import mixture
from treekit_soft_search.soft_propagation import missing_left
from treekit_soft_search.soft_search import is_nominal


def tested_feature_bounds(tree):
    """For every node, the bounds (lower, upper] of its region on the feature it tests."""
    from treekit_core import node_boxes

    lower, upper = node_boxes(tree)
    nodes = np.arange(tree.n_nodes)
    feature = np.maximum(tree.feature, 0)
    internal = ~tree.is_leaf
    return (
        np.where(internal, lower[nodes, feature], -np.inf),
        np.where(internal, upper[nodes, feature], np.inf),
    )


def standard_points(samples: int) -> np.ndarray:
    """Positions (in sigmas) of the pdf points: quantiles of N(0, 1) truncated at +-2."""
    from scipy.special import ndtr, ndtri

    low, high = ndtr(-2.0), ndtr(2.0)
    return ndtri(low + (np.arange(samples) + 0.5) / samples * (high - low))


def udt_spreads(data, width):
    """sigma per feature: width x the feature's training range / 2 (finite, or an error
    naming the feature whose range overflows float64)."""
    with np.errstate(over="ignore", invalid="ignore"):
        ranges = np.nanmax(data.X, axis=0) - np.nanmin(data.X, axis=0)
    spreads = width * ranges / 2.0
    overflowing = np.flatnonzero(np.isinf(spreads))
    if overflowing.size:
        j = int(overflowing[0])
        raise ValueError(
            f"UDT: feature {j} ranges from {np.nanmin(data.X[:, j]):g} to "
            f"{np.nanmax(data.X[:, j]):g}, a range that overflows float64; rescale the feature"
        )
    return spreads


def udt_kernels(criterion):
    """UDT's searches (:mod:`.udt_kernels`) specialised to ``criterion``."""
    from treekit_core.kernels import impurity_kernels
    from treekit_soft_search import kernels, udt_kernels

    return impurity_kernels(
        udt_kernels,
        udt_kernels.ENTRY_SIGNATURES,
        criterion,
        depends_on=(kernels,),
        purpose="UDT search kernels",
    )


def _samples(instance, attribute, value):
    if not (isinstance(value, int) and value >= 2):
        raise ValueError(f"samples must be an int >= 2, got {value!r}")


def _width(instance, attribute, value):
    if not (isinstance(value, (int, float)) and value > 0):
        raise ValueError(f"width must be a number > 0, got {value!r}")


@attrs.define(slots=False)
class UDTParams:
    samples: int = attrs.field(default=100, validator=_samples)
    width: float = attrs.field(default=0.1, validator=_width)


def surviving_points(x, sigma, points, lower, upper):
    """(positions n x s, mask of points inside (lower, upper])."""
    positions = x[:, None] + sigma * points[None, :]
    return positions, (positions > lower) & (positions <= upper)


def _non_negative(instance, attribute, value):
    if not (isinstance(value, (int, float)) and value >= 0):
        raise ValueError(f"{attribute.name} must be a number >= 0, got {value!r}")


@attrs.define(slots=False)
class UDTSplitter(Splitter, UDTParams):
    """Parameters: ``samples`` (s, points per pdf), ``width`` (pdf half-width as a
    fraction of the feature's range), ``min_leaf_weight`` (each branch of a split keeps
    at least this weight; 2, as C4.5's MINOBJS, on which UDT builds: without it fractional
    tuples keep every node populated and the tree never stops) and ``pruned_search``
    (Tsang et al.'s end points and bounds instead of every point: the same tree, faster;
    needs a concave criterion such as entropy or gini, and ordinary labels)."""

    name: ClassVar[str] = "udt"
    handles_missing: ClassVar[bool] = True
    description: ClassVar[str] = "UDT search over every pdf sample point (Tsang et al.)"
    min_leaf_weight: float = attrs.field(default=2.0, validator=_non_negative)
    pruned_search: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))

    def companions(self) -> dict:
        return {
            "propagator": UDTPropagation(samples=self.samples, width=self.width),
            "evaluator": UDTEvaluation(samples=self.samples, width=self.width),
        }

    def check_composition(self, composition) -> None:
        from treekit_core import CompositionError

        for kind in ("propagator", "evaluator"):
            other = getattr(composition, kind)
            if isinstance(other, UDTParams) and (other.samples, other.width) != (
                self.samples,
                self.width,
            ):
                raise CompositionError(
                    f"splitter 'udt' (samples={self.samples}, width={self.width}) cannot be "
                    f"combined with {kind} "
                    f"'udt' (samples={other.samples}, width={other.width}): they must model the "
                    "same pdfs"
                )

    def prepare(self, data, criterion, rules):
        if self.pruned_search:
            one_hot = np.all(data.evidence >= 0) and np.allclose(data.evidence.sum(axis=1), 1)
            if not (criterion.concave and one_hot):
                raise ValueError(
                    "splitter 'udt' with pruned_search=True needs a criterion declaring "
                    f"concave = True (entropy, gini, misclassification) and ordinary labels; "
                    f"criterion {criterion.name!r} "
                    + (
                        "does not declare it"
                        if not criterion.concave
                        else "has them, the labels not"
                    )
                    + "; use pruned_search=False"
                )
        kernels = udt_kernels(criterion)
        return {
            "kernels": kernels,
            "impurity": kernels.impurity,
            "params": criterion.impurity_params(data.n_statistics),
            "data": data,
            "evidence": np.ascontiguousarray(data.evidence, dtype=np.float64),
            "sigma": np.ascontiguousarray(udt_spreads(data, self.width), dtype=np.float64),
            "points": standard_points(self.samples),
            "evaluations": [],
        }

    def find_split(self, state, node, rules):
        data = state["data"]
        nominal = is_nominal(data, node.features)
        search = self._pruned_search if self.pruned_search else self._plain_search
        best = search(state, node, rules, node.features[~nominal])
        found = None
        if best[1] >= 0:
            found = Split(best[1], float(best[2]), float(best[0]), {"missing_left": best[3]})
        if nominal.any():  # nominal features ask the core's subset questions (no pdfs)
            split, score = best_nominal_split(
                (state["impurity"], state["params"], data), node, rules, node.features[nominal]
            )
            if split is not None and (found is None or score > found.improvement):
                found = split
        return found

    def _least_branch_weight(self, rules) -> float:
        """The weight each branch keeps: fractional tuples make a branch's size its weight
        (min_samples_leaf counted in unit weights)."""
        return max(
            rules.min_weight_leaf, float(self.min_leaf_weight), float(rules.min_samples_leaf)
        )

    def _plain_search(self, state, node, rules, features):
        """(drop, feature, threshold, missing share) of the plain search over the numeric
        ``features``: every pdf point at the node sorted and evaluated (feature -1: no
        admissible threshold). The first feature within TIE of the best wins, as in the
        pruned search."""
        from treekit_soft_search.kernels import leftmost_of_best

        data, points = state["data"], state["points"]
        lower, upper = node.bounds
        per_feature = []
        for f in features:
            sigma = state["sigma"][f]
            if sigma <= 0:
                continue
            x = data.X[node.rows, f]
            known = ~np.isnan(x)
            positions, inside = surviving_points(
                np.where(known, x, 0.0), sigma, points, lower[f], upper[f]
            )
            inside &= known[:, None]  # a missing value has no pdf: C4.5's rule applies instead
            counts = inside.sum(axis=1)
            mass = np.where(counts > 0, node.row_weights / np.maximum(counts, 1), 0.0)
            known_weight = float(node.row_weights[counts > 0].sum())
            if known_weight <= 0:
                continue
            known_sums = np.ascontiguousarray(
                node.row_weights[counts > 0] @ data.evidence[node.rows[counts > 0]]
            )
            row_of_point = np.repeat(np.arange(node.n_samples), counts)
            flat = positions[inside]
            order = np.argsort(flat, kind="mergesort")
            flat = np.ascontiguousarray(flat[order])
            point_rows = row_of_point[order]
            weights = np.ascontiguousarray(mass[point_rows])
            weighted = np.ascontiguousarray(weights[:, None] * data.evidence[node.rows[point_rows]])
            base = state["impurity"](known_sums, known_weight, state["params"])
            drop, threshold, evaluations = state["kernels"].udt_scan(
                state["params"],
                flat,
                weighted,
                weights,
                known_sums,
                known_weight,
                base,
                self._least_branch_weight(rules),
            )
            state["evaluations"].append(evaluations)
            drop *= known_weight / node.weight
            if drop > -np.inf:
                share = float(weights[flat <= threshold].sum() / known_weight)
                per_feature.append((drop, int(f), threshold, share))
        drops = np.array([found[0] for found in per_feature], dtype=np.float64)
        chosen, _ = leftmost_of_best(drops, np.arange(drops.size, dtype=np.float64), drops.size)
        return per_feature[chosen] if chosen >= 0 else (-np.inf, -1, 0.0, 0.5)

    def _pruned_search(self, state, node, rules, features):
        """(drop, feature, threshold, missing share) of the pruned search over the numeric
        ``features`` (feature -1: no admissible threshold)."""
        data = state["data"]
        features = np.ascontiguousarray(features[state["sigma"][features] > 0], dtype=np.int64)
        lower, upper = node.bounds
        drop, feature, threshold, share, evaluations = state["kernels"].udt_pruned_node(
            state["params"],
            data.X,
            np.ascontiguousarray(node.rows, dtype=np.int64),
            np.ascontiguousarray(node.row_weights, dtype=np.float64),
            state["evidence"],
            state["sigma"],
            features,
            state["points"],
            np.ascontiguousarray(lower, dtype=np.float64),
            np.ascontiguousarray(upper, dtype=np.float64),
            self._least_branch_weight(rules),
            float(node.weight),
        )
        state["evaluations"].append(evaluations)
        return drop, int(feature), threshold, share

    node_field_names = ("missing_left",)


@attrs.define(slots=False)
class UDTPropagation(Propagator, UDTParams):
    """A tuple goes left with the share of its pdf (inside the node's box) left of the
    threshold, and right with the rest."""

    name: ClassVar[str] = "udt"
    handles_missing: ClassVar[bool] = True
    description: ClassVar[str] = "UDT fractional tuples: pdfs split at the threshold (Tsang et al.)"
    produces_fractional_weights: ClassVar[bool] = True
    requires: ClassVar[dict] = {"splitter": frozenset({"axis_aligned"})}

    def prepare(self, data):
        return udt_spreads(data, self.width), standard_points(self.samples)

    def propagate(self, state, data, node, split):
        if not get_registry().question(split.question).compares_threshold:
            return HardPropagator().propagate(None, data, node, split)  # only thresholds soften
        from treekit_soft_search.kernels import udt_split_rows

        sigma_all, points = state
        f = split.feature
        lower, upper = node.bounds if node.bounds is not None else (None, None)
        left_rows, left_weights, right_rows, right_weights = udt_split_rows(
            data.X,
            f,
            np.ascontiguousarray(node.rows, dtype=np.int64),
            np.ascontiguousarray(node.row_weights, dtype=np.float64),
            float(sigma_all[f]),
            points,
            -np.inf if lower is None else float(lower[f]),
            np.inf if upper is None else float(upper[f]),
            float(split.threshold),
            missing_left(split),
        )
        return (left_rows, left_weights), (right_rows, right_weights)


@attrs.define(slots=False)
class UDTEvaluation(Evaluator, UDTParams):
    """Classification splits the test tuple's pdf at every test, within the node's box."""

    name: ClassVar[str] = "udt"
    handles_missing: ClassVar[bool] = True
    description: ClassVar[str] = (
        "UDT classification: the test pdf is split across branches (Tsang et al.)"
    )
    provides: ClassVar[frozenset] = frozenset()
    requires: ClassVar[dict] = {"splitter": frozenset({"axis_aligned"})}

    def fit(self, tree, data, labeler):
        lower, upper = tested_feature_bounds(tree)
        return {
            "sigma": udt_spreads(data, self.width),
            "lower": lower,
            "upper": upper,
            "points": standard_points(self.samples),
        }

    def check_state(self, state, tree):
        """sigma per feature (>= 0), the pdf points, and ``lower`` / ``upper``: the box
        of every node on the feature it tests, which the tree itself defines, so they must
        be what its thresholds give (a file whose boxes and thresholds disagree would weigh
        a row's pdf over the wrong interval)."""
        state_array(state, "sigma", (tree.n_features,), "evaluator", minimum=0.0)
        expected = dict(zip(("lower", "upper"), tested_feature_bounds(tree), strict=True))
        for key in ("lower", "upper"):
            values = state_array(state, key, (tree.n_nodes,), "evaluator", allow_inf=True)
            differs = values != expected[key]
            if differs.any():
                node = int(np.argmax(differs))
                raise ValueError(
                    f"model file: evaluator.{key} of node {node} is {float(values[node])!r}; "
                    f"the tree's thresholds above it give {float(expected[key][node])!r}"
                )
        state_array(state, "points", (self.samples,), "evaluator")

    def predict_distribution(self, tree, X):
        from treekit_soft_search.kernels import UDT

        state = tree.component_state["evaluator"]
        return mixture(
            tree,
            X,
            UDT,
            state["sigma"],
            lower=state["lower"],
            upper=state["upper"],
            standard_points=state["points"],
        )
