"""Conditional inference trees (Hothorn, Hornik & Zeileis 2006; partykit 1.2's ``ctree``):
at every node each candidate feature's independence from the response is tested by a
permutation test (:mod:`treekit_ctree.permutation_tests`), the feature of the smallest
adjusted p-value is split where it is significant, and the node stays a leaf where none is.
Every node keeps the statistic and p-value of every feature it tested."""

from __future__ import annotations

import math
from typing import ClassVar

import attrs
import numpy as np

from treekit_core import NODE_TEST_FIELDS, Split, Splitter, Unsplit, hookimpl
from treekit_ctree.node_sums import every_feature_sums, feature_sums
from treekit_ctree.permutation_tests import best_cut, best_subset, linear_test, numeric_tests
from treekit_ctree.surrogates import ConditionalSurrogates

#: The treekit plugin API this plugin is written for (see treekit_core's CHANGELOG.md).
TREEKIT_PLUGIN_API = 4

TESTSTATS = ("quadratic", "maximum")
TESTTYPES = ("Bonferroni", "Univariate", "Teststatistic")
#: partykit's tie rule compares log(1 - p) within sqrt(.Machine$double.xmin)
TIED = math.sqrt(np.finfo(np.float64).tiny)


def _probability(inst, attribute, value):
    if not (isinstance(value, (int, float)) and 0.0 <= value <= 1.0):
        raise ValueError(f"ctree {attribute.name} must be a number in [0, 1], got {value!r}")


def _positive_int(inst, attribute, value):
    if not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
        raise ValueError(f"ctree {attribute.name} must be an int >= 1, got {value!r}")


@attrs.define(slots=False)
class ConditionalInference(Splitter):
    """partykit's ``ctree`` with its defaults. Parameters (``splitter_params``):

    teststat : "quadratic" (default) or "maximum": how the linear statistic is made a
        number for the choice of the feature (chi-squared p-value on the covariance's rank;
        multivariate normal p-value of the largest standardised entry).
    splitstat : the same for the choice of the cut of the chosen feature (default
        "quadratic").
    testtype : "Bonferroni" (default: the smallest p-value adjusted for the number of
        features tested as partykit adjusts it, 1 - (1 - p)^k, Sidak's), "Univariate" (not
        adjusted) or "Teststatistic" (the feature of the largest statistic; no p-value
        stops growth, mincriterion then bounds the statistic).
    mincriterion : split only where 1 - p (adjusted) exceeds it (0.95).
    minprob : each child of a split keeps at least this share of the node's weight (0.01),
        and the estimator's ``min_samples_leaf`` rows (partykit's ``minbucket``).
    splittry : how many of the most significant features to try when the best one has no
        admissible cut (2).
    intersplit : a numeric cut halfway to the next value of the feature (False: at a value).
    """

    name: ClassVar[str] = "ctree"
    description: ClassVar[str] = (
        "conditional inference (partykit's ctree): the feature of the smallest adjusted "
        "permutation-test p-value, split where significant"
    )
    requires: ClassVar[dict] = {"target": frozenset({"influence"})}
    provides: ClassVar[frozenset] = frozenset(
        {
            "axis_aligned",
            "fractional_weights",
            "interaction_constraints",
            "own_split_statistic",
            "stops_by_test",
        }
    )
    # every node a test ran at keeps it (NODE_TEST_FIELDS: NaN for a feature not tested,
    # constant at the node or not a candidate); the p-value as partykit reports it
    node_field_names: ClassVar[tuple] = (*NODE_TEST_FIELDS, "category_mask")
    # a row missing a feature is left out of that feature's test and cut (partykit's
    # rule); the propagator sends it down the split
    handles_missing: ClassVar[bool] = True

    teststat: str = attrs.field(default="quadratic", validator=attrs.validators.in_(TESTSTATS))
    splitstat: str = attrs.field(default="quadratic", validator=attrs.validators.in_(TESTSTATS))
    testtype: str = attrs.field(default="Bonferroni", validator=attrs.validators.in_(TESTTYPES))
    mincriterion: float = attrs.field(default=0.95, validator=_probability)
    minprob: float = attrs.field(default=0.01, validator=_probability)
    splittry: int = attrs.field(default=2, validator=_positive_int)
    intersplit: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))

    def prepare(self, data, criterion, rules):
        """The response's influence h(y) on the whole learning sample (partykit with
        ``update = FALSE`` computes it once), and each numeric feature's distinct values
        (``intersplit`` cuts halfway to the next one)."""
        target = data.target
        if target is None:
            raise ValueError("splitter 'ctree' needs the target that encoded y")
        influence = np.asarray(target.influence(data.evidence), dtype=np.float64)
        if influence.ndim != 2 or influence.shape[0] != data.n_samples:
            raise ValueError(
                f"target {target.name!r}'s influence function gave shape {influence.shape}, "
                f"expected ({data.n_samples}, q)"
            )
        categories = np.zeros(data.n_features, dtype=np.int64)
        if data.n_categories is not None:
            categories = np.asarray(data.n_categories, dtype=np.int64)
        return {"influence": influence, "X": data.X, "categories": categories, "values": {}}

    def find_split(self, state, node, rules):
        X, H, nominal = state["X"], state["influence"], state["categories"] > 0
        n_features = X.shape[1]
        statistic = np.full(n_features, np.nan)
        p_value = np.full(n_features, np.nan)
        features = np.sort(node.features)
        numeric = features[~nominal[features]]
        if numeric.size:  # every numeric feature's sums in one pass over the rows
            statistic[numeric], p_value[numeric] = numeric_tests(
                _numeric_sums(X, node, H, numeric), self.teststat
            )
        for feature in features[nominal[features]].tolist():  # g: the levels' dummy codes
            x = X[node.rows, feature]
            known = ~np.isnan(x)
            if not known.any():
                continue
            _, codes = np.unique(x[known], return_inverse=True)
            statistic[feature], p_value[feature] = linear_test(
                np.eye(codes.max() + 1)[codes],
                H[node.rows[known]],
                node.row_weights[known],
                self.teststat,
            )
        tested = ~np.isnan(p_value)
        if not tested.any():
            return None  # partykit: no test, no information at the node
        criterion, adjusted = self._criteria(statistic, p_value, tested)
        fields = dict(
            zip(
                NODE_TEST_FIELDS,
                (np.where(tested, np.maximum(statistic, EPS), np.nan), adjusted, p_value),
                strict=True,
            )
        )
        # partykit's logmincriterion: log(1 - p) (log(statistic) with "Teststatistic")
        # must exceed it; R's log(0) is -Inf
        bound = math.log(self.mincriterion) if self.mincriterion > 0 else -math.inf
        if not (criterion > bound).any():
            return Unsplit(fields)
        minbucket = max(
            float(rules.min_samples_leaf),
            float(rules.min_weight_leaf),
            math.ceil(float(node.row_weights.sum()) * self.minprob),
        )
        finite = int(np.isfinite(criterion).sum())
        ranked = _descending(criterion)[: min(finite, self.splittry)]
        for feature in (f for f in ranked if criterion[f] > bound):
            split = self._split(state, node, int(feature), minbucket, rules, fields)
            if split is not None:
                return split
        return Unsplit(fields)

    def _criteria(self, statistic, p_value, tested):
        """(partykit's criterion per feature, log(1 - p) or log(statistic), tie-broken as
        partykit breaks ties; the p-values as it reports them)."""
        with np.errstate(divide="ignore"):
            log_complement = np.where(tested, np.log1p(-p_value), np.nan)
            if self.testtype == "Bonferroni":  # (1 - p)^k: Sidak's adjustment of k tests
                log_complement = log_complement * tested.sum()
            adjusted = np.where(tested, -np.expm1(log_complement), np.nan)
            if self.testtype == "Teststatistic":
                criterion = np.where(tested, np.log(np.maximum(statistic, EPS)), -np.inf)
            else:
                criterion = np.where(tested, log_complement, -np.inf)
        best = criterion.max()
        ties = np.flatnonzero(np.abs(criterion - best) < TIED)
        if ties.size > 1:
            # partykit adds rank(statistic) / (sum of the tied columns' positions x 1000),
            # the positions those of its model frame, where the response comes first
            ranks = _average_ranks(np.maximum(statistic[ties], EPS))
            criterion[ties] += ranks / ((ties + 2).sum() * 1000.0)
        return criterion, adjusted

    def _split(self, state, node, feature, minbucket, rules, fields):
        """The cut of ``feature`` that maximises the split statistic (None: no cut keeps
        ``minbucket`` weight and ``rules.min_samples_leaf`` rows each side)."""
        x = state["X"][node.rows, feature]
        known = ~np.isnan(x)
        rows, xs, ws = node.rows[known], x[known], node.row_weights[known]
        if state["categories"][feature] > 0:
            H = state["influence"][rows]
            found = best_subset(xs.astype(np.int64), H, ws, minbucket, self.splitstat)
            if found is None:
                return None
            second, value = found
            first = np.setdiff1d(np.unique(xs.astype(np.int64)), second)
            in_first = np.isin(xs, first)
            if not _enough_rows(in_first, rules):
                return None
            # a category the node has not seen goes with the heavier side (partykit
            # draws a side for it at random, by the sides' shares)
            if ws[in_first].sum() >= ws[~in_first].sum():
                first = np.setdiff1d(np.arange(state["categories"][feature]), second)
            mask = float(sum(2 ** int(c) for c in first))
            return Split(feature, 0.0, value, {**fields, "category_mask": mask}, question="subset")
        found = best_cut(xs, rows, state["influence"], ws, minbucket, self.splitstat)
        if found is None:
            return None
        cut, value = found
        if not _enough_rows(xs <= cut, rules):
            return None
        if self.intersplit:  # halfway to the feature's next value in the learning sample
            values = state["values"].get(feature)
            if values is None:
                column = state["X"][:, feature]
                values = state["values"][feature] = np.unique(column[~np.isnan(column)])
            above = values[values > cut]
            if above.size:
                cut = (cut + above[0]) / 2.0
        return Split(feature, float(cut), value, dict(fields))


EPS = float(np.finfo(np.float64).eps)


def _numeric_sums(X, node, H, numeric):
    """:func:`feature_sums` of the node's ``numeric`` features; by the faster
    :func:`every_feature_sums` where they are all of X's features and h has one column,
    unless a feature misses a value at the node (its sums come out NaN)."""
    if numeric.size == X.shape[1] and H.shape[1] == 1:
        sums = every_feature_sums(X, node.rows, node.row_weights, H)
        if not np.isnan(sums[1]).any():
            return sums
    return feature_sums(X, node.rows, node.row_weights, H, numeric.astype(np.int64))


def _descending(criterion: np.ndarray) -> np.ndarray:
    """R's ``rev(order(criterion))``: largest first, equal values the later index first."""
    order = np.argsort(criterion, kind="stable")
    return order[::-1]


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """R's ``rank`` (ties averaged), 1-based."""
    order = np.argsort(values, kind="stable")
    ranks = np.empty(values.size)
    ranks[order] = np.arange(1, values.size + 1)
    for value in np.unique(values):  # equal values share their ranks' mean
        same = values == value
        ranks[same] = ranks[same].mean()
    return ranks


def _enough_rows(left: np.ndarray, rules) -> bool:
    """Whether both sides keep ``rules.min_samples_leaf`` rows."""
    count = int(left.sum())
    return count >= rules.min_samples_leaf and left.size - count >= rules.min_samples_leaf


@hookimpl
def treekit_splitters():
    return [ConditionalInference]


@hookimpl
def treekit_propagators():
    return [ConditionalSurrogates]
