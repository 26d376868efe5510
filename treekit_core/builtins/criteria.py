"""The classic impurity measures (Cambridge handout; Breiman et al.; Quinlan).

Each impurity is a plain Python function following the criterion ABI of
:mod:`treekit_core.kernels.compiling`, compiled by the core exactly as a third party's would be.
``class_sums`` are weighted class counts; proportions are ``class_sums / total_weight``.
"""

from __future__ import annotations

import math
import numbers
from typing import ClassVar

import attrs
import numpy as np

from treekit_core.builtins.competing_risk_target import CODE_COLUMN, cause_column, n_causes_of
from treekit_core.builtins.competing_risks import gray_scores, logrank_scores
from treekit_core.components import Criterion
from treekit_core.components.criterion import improvement_decreases


def gini_impurity(class_sums, total_weight, params):
    """1 - sum_c p_c^2 (= sum over c != d of p_c p_d)."""
    if total_weight <= 0.0:
        return 0.0
    squares = 0.0
    for k in range(class_sums.shape[0]):
        p = class_sums[k] / total_weight
        squares += p * p
    return 1.0 - squares


def entropy_impurity(class_sums, total_weight, params):
    """-sum_c p_c log2 p_c, in bits (0 log 0 = 0)."""
    if total_weight <= 0.0:
        return 0.0
    h = 0.0
    for k in range(class_sums.shape[0]):
        p = class_sums[k] / total_weight
        if p > 0.0:
            h -= p * math.log2(p)
    return h


def misclassification_impurity(class_sums, total_weight, params):
    """1 - max_c p_c."""
    if total_weight <= 0.0:
        return 0.0
    largest = 0.0
    for k in range(class_sums.shape[0]):
        if class_sums[k] > largest:
            largest = class_sums[k]
    return 1.0 - largest / total_weight


def variance_impurity(class_sums, total_weight, params):
    """p_1 p_2 (two classes; the handout's variance impurity)."""
    if total_weight <= 0.0:
        return 0.0
    return (class_sums[0] / total_weight) * (class_sums[1] / total_weight)


def gini_of_outputs_impurity(class_sums, total_weight, params):
    """The mean of the outputs' Gini impurities, 1 - sum_c p_c^2 / k, for the class counts
    of k outputs side by side (target ``class_label_sets``: each output's counts sum to
    the weight, so the shares sum to k, which is read from them), as scikit-learn's."""
    if total_weight <= 0.0:
        return 0.0
    squares = 0.0
    shares = 0.0
    for k in range(class_sums.shape[0]):
        p = class_sums[k] / total_weight
        squares += p * p
        shares += p
    return 1.0 - squares / max(math.floor(shares + 0.5), 1.0)


def entropy_of_outputs_impurity(class_sums, total_weight, params):
    """The mean of the outputs' entropies in bits, -sum_c p_c log2 p_c / k, for the class
    counts of k outputs side by side (k read from the shares, as
    :func:`gini_of_outputs_impurity` reads it), as scikit-learn's."""
    if total_weight <= 0.0:
        return 0.0
    h = 0.0
    shares = 0.0
    for k in range(class_sums.shape[0]):
        p = class_sums[k] / total_weight
        shares += p
        if p > 0.0:
            h -= p * math.log2(p)
    return h / max(math.floor(shares + 0.5), 1.0)


class OfOutputs:
    """What a criterion of several outputs adds (placed before its one-output criterion
    among the bases): it is its own :meth:`~treekit_core.Criterion.for_outputs`."""

    def for_outputs(self):
        return self


def check_nonnegative_parameter(value, name: str, criterion: str) -> None:
    """A criterion's parameter ``name`` is a finite real number >= 0, or a ValueError
    naming the criterion and the parameter."""
    real = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if not (real and math.isfinite(value) and value >= 0):
        raise ValueError(
            f"criterion {criterion!r}: {name} must be a finite number >= 0, got {value}"
        )


@attrs.define(slots=False)
class Gini(Criterion):
    name: ClassVar[str] = "gini"
    description: ClassVar[str] = "Gini impurity 1 - sum p_c^2 (CART)"
    impurity = staticmethod(gini_impurity)
    concave: ClassVar[bool] = True

    def for_outputs(self):
        """:class:`GiniOfOutputs`, the mean of the outputs' Gini impurities."""
        return GiniOfOutputs()


@attrs.define(slots=False)
class GiniOfOutputs(OfOutputs, Gini):
    """``gini`` for the class counts of several outputs side by side (a 2-D y of labels):
    the mean of the outputs' Gini impurities (scikit-learn's multi-output Gini). A
    function of its own, so one output's Gini pays nothing for it."""

    impurity = staticmethod(gini_of_outputs_impurity)


@attrs.define(slots=False)
class Entropy(Criterion):
    name: ClassVar[str] = "entropy"
    description: ClassVar[str] = "Shannon entropy in bits (ID3/C4.5)"
    impurity = staticmethod(entropy_impurity)
    concave: ClassVar[bool] = True

    def for_outputs(self):
        """:class:`EntropyOfOutputs`, the mean of the outputs' entropies."""
        return EntropyOfOutputs()


@attrs.define(slots=False)
class EntropyOfOutputs(OfOutputs, Entropy):
    """``entropy`` for the class counts of several outputs side by side: the mean of the
    outputs' entropies (scikit-learn's multi-output entropy)."""

    impurity = staticmethod(entropy_of_outputs_impurity)


@attrs.define(slots=False)
class Misclassification(Criterion):
    name: ClassVar[str] = "misclassification"
    description: ClassVar[str] = "misclassification impurity 1 - max p_c"
    impurity = staticmethod(misclassification_impurity)
    concave: ClassVar[bool] = True


@attrs.define(slots=False)
class Variance(Criterion):
    name: ClassVar[str] = "variance"
    description: ClassVar[str] = "variance impurity p1 * p2 (two classes only)"
    impurity = staticmethod(variance_impurity)

    def check_data(self, data) -> None:
        if data.n_statistics != 2:
            raise ValueError(
                f"criterion 'variance' is defined for two classes only (p1 * p2), but the "
                f"data has {data.n_statistics} classes; use 'gini', its K-class generalisation"
            )


def squared_error_impurity(sums, total_weight, params):
    """The weighted variance of y from (sum of y, sum of y^2): S2 / W - (S1 / W)^2, as
    scikit-learn's squared_error and rpart's anova compute a node's."""
    if total_weight <= 0.0:
        return 0.0
    mean = sums[0] / total_weight
    return sums[1] / total_weight - mean * mean


#: How far above squared error's weighted proxy drop its bound sits, relative to the
#: parent's sum of w y^2 (and the proxy): the computed drop times w_t differs from the
#: proxy's by a few roundings of numbers no larger than those (2^-30 leaves a margin of
#: about 10^5 over them).
SQUARED_ERROR_SLACK = 2.0**-30


def squared_error_drop_bound(
    left_sums, left_weight, parent_sums, parent_weight, parent_impurity, params
):
    """An upper bound of w_t times squared error's computed drop from two divisions
    instead of five (scikit-learn's ``proxy_impurity_improvement``): in exact arithmetic
    w_L i(L) + w_R i(R) = S2_L + S2_R - P with P = S1_L^2 / w_L + S1_R^2 / w_R, so
    w_t times the drop is w_t i(t) + P - S2_t. The computed drop differs from that by a
    few roundings of terms no larger than S2_t (weights are not negative, so
    S1^2 / w <= S2 on each side and w_t i(t) <= S2_t), which the slack covers. +inf where
    a side has no weight (no bound: the drop is computed). No division by w_t: LLVM does
    not hoist it out of the search's loop, and a third division cost more than the bound
    saved."""
    right_weight = parent_weight - left_weight
    if left_weight <= 0.0 or right_weight <= 0.0:
        return np.inf
    right_sum = parent_sums[0] - left_sums[0]
    proxy = left_sums[0] * left_sums[0] / left_weight + right_sum * right_sum / right_weight
    magnitude = abs(parent_sums[1]) + abs(proxy)
    return (
        parent_impurity * parent_weight + (proxy - parent_sums[1]) + SQUARED_ERROR_SLACK * magnitude
    )


def squared_error_of_outputs_impurity(sums, total_weight, params):
    """The mean of the outputs' weighted variances for several outputs (a pair of sums
    each, (S1, S2) per output), as scikit-learn's multi-output squared error. A function
    of its own: the loop over outputs in the one-output function cost a regression
    tree's fit 40% (1.23 s against 1.74 s at 100 000 x 20)."""
    if total_weight <= 0.0:
        return 0.0
    n_outputs = sums.shape[0] // 2
    total = 0.0
    for output in range(n_outputs):
        mean = sums[2 * output] / total_weight
        total += sums[2 * output + 1] / total_weight - mean * mean
    return total / n_outputs


class PairedMoments:
    """What a criterion of (sum of y, sum of f(y)) pairs adds (placed before Criterion among
    its bases): the weighted impurity is f's sum plus a function of y's sum and the
    weight, so every pair's second sum cancels out of a split's drop."""

    def drop_free_statistics(self, n_statistics: int) -> tuple:
        """Each pair's second sum (one pair per output), where the impurity is one this
        module wrote for it: a subclass with an impurity of its own declares nothing
        unless it says so (a histogram would score its cuts wrongly, silently)."""
        if type(self).impurity not in PAIRED_MOMENT_IMPURITIES:
            return ()
        return tuple(range(1, n_statistics, 2))


@attrs.define(slots=False)
class SquaredError(PairedMoments, Criterion):
    """Squared error: a node's impurity is the weighted variance of its responses, so a
    split's drop is the fall in the sum of squared deviations over the node's weight
    (CART's least squares regression, rpart's ``method = "anova"``, scikit-learn's
    ``criterion="squared_error"``). Reads the ``mean`` target's rows (y, y^2)."""

    name: ClassVar[str] = "squared_error"
    description: ClassVar[str] = "weighted variance of y (regression: rpart's anova)"
    evidence: ClassVar[str] = "moments"
    default_target: ClassVar[str] = "mean"
    impurity = staticmethod(squared_error_impurity)
    drop_bound = staticmethod(squared_error_drop_bound)
    fixed_statistics: ClassVar[int] = 2

    def for_outputs(self):
        """:class:`SquaredErrorOfOutputs`, the mean of the outputs' variances."""
        return SquaredErrorOfOutputs()


@attrs.define(slots=False)
class SquaredErrorOfOutputs(OfOutputs, SquaredError):
    """``squared_error`` for several outputs' pairs of sums: the mean of the outputs'
    variances (scikit-learn's multi-output squared error)."""

    impurity = staticmethod(squared_error_of_outputs_impurity)


def absolute_error_impurity(summary, total_weight, params):
    """The mean absolute deviation from the node's weighted median, from the ``median``
    target's summary (median, sum of w |y - median|)."""
    if total_weight <= 0.0:
        return 0.0
    return summary[1] / total_weight


@attrs.define(slots=False)
class AbsoluteError(Criterion):
    """Absolute error: a node's impurity is the weighted mean absolute deviation of its
    responses from their weighted median, the value the node predicts (scikit-learn's
    ``criterion="absolute_error"``). A median is no function of summed statistics, so the
    splitter scores cuts from the node's rows (:attr:`row_search`); reads the ``median``
    target's node summaries."""

    name: ClassVar[str] = "absolute_error"
    description: ClassVar[str] = "mean absolute deviation from the median (regression)"
    evidence: ClassVar[str] = "median_summaries"
    default_target: ClassVar[str] = "median"
    row_search: ClassVar[str] = "absolute_deviation_search"
    impurity = staticmethod(absolute_error_impurity)


#: scikit-learn's EPSILON: a node whose mean response is at most this has an infinite
#: Poisson deviance (its log is undefined), so no split may make such a child.
POISSON_EPSILON = 2.220446049250313e-16


def poisson_impurity(sums, total_weight, params):
    """Half the Poisson deviance per weight from (sum of y, sum of y log y), with the
    node's mean m = S / W as prediction: (sum y log y - S log m) / W; +inf when m <=
    EPSILON (scikit-learn's Poisson criterion: a child without response is no candidate)."""
    if total_weight <= 0.0:
        return 0.0
    mean = sums[0] / total_weight
    if mean <= POISSON_EPSILON:
        return math.inf
    return (sums[1] - sums[0] * math.log(mean)) / total_weight


def poisson_of_outputs_impurity(sums, total_weight, params):
    """:func:`poisson_impurity` for several outputs (a pair of sums each): the mean over
    the outputs, +inf when any output's mean is at most EPSILON, as scikit-learn's."""
    if total_weight <= 0.0:
        return 0.0
    n_outputs = sums.shape[0] // 2
    total = 0.0
    for output in range(n_outputs):
        mean = sums[2 * output] / total_weight
        if mean <= POISSON_EPSILON:
            return math.inf
        total += (sums[2 * output + 1] - sums[2 * output] * math.log(mean)) / total_weight
    return total / n_outputs


@attrs.define(slots=False)
class Poisson(PairedMoments, Criterion):
    """scikit-learn's ``criterion="poisson"``: half the Poisson deviance of the node's mean,
    per weight; y >= 0 with a positive sum. A split that leaves a child without response
    (mean <= EPSILON) has an infinite child impurity and is never chosen. Reads the
    ``poisson_mean`` target's rows (y, y log y); leaves predict the weighted mean."""

    name: ClassVar[str] = "poisson"
    description: ClassVar[str] = "half Poisson deviance (scikit-learn's poisson regression)"
    evidence: ClassVar[str] = "poisson_moments"
    default_target: ClassVar[str] = "poisson_mean"
    infinite_impurity: ClassVar[bool] = True
    impurity = staticmethod(poisson_impurity)
    fixed_statistics: ClassVar[int] = 2

    def for_outputs(self):
        """:class:`PoissonOfOutputs`, the mean of the outputs' half deviances."""
        return PoissonOfOutputs()


@attrs.define(slots=False)
class PoissonOfOutputs(OfOutputs, Poisson):
    """``poisson`` for several outputs' pairs of sums: the mean of the outputs' half
    deviances (scikit-learn's multi-output Poisson criterion)."""

    impurity = staticmethod(poisson_of_outputs_impurity)


#: The impurities whose pairs' second sums cancel out of a drop (PairedMoments).
PAIRED_MOMENT_IMPURITIES = (
    squared_error_impurity,
    squared_error_of_outputs_impurity,
    poisson_impurity,
    poisson_of_outputs_impurity,
)


def rpart_poisson_impurity(sums, total_weight, params):
    """rpart's Poisson deviance per weight at the node's unshrunk rate from (events, time,
    sum of d log(d / t)): 2 (sum d log(d / t) - D log(D / T)) / W, 0 without events."""
    # every time is > 0, so a side with weight has time; where a side's sums come from
    # subtracting the other's (a soft split's smoothed sides) rounding can leave its time
    # at 0 with events left over: that side is empty, as one without events
    if total_weight <= 0.0 or sums[0] <= 0.0 or sums[1] <= 0.0:
        return 0.0
    return 2.0 * (sums[2] - sums[0] * math.log(sums[0] / sums[1])) / total_weight


@attrs.define(slots=False)
class RpartPoisson(Criterion):
    """rpart's ``method = "poisson"`` split search: the fall in Poisson deviance at the
    children's unshrunk rates, 2 (d_L log r_L + d_R log r_R - d log r) (children without
    events allowed; a node without events is pure, so never split). Reads the
    ``rpart_poisson`` target's rows (events, time, d log(d / t)), whose leaves hold rpart's
    shrunk rate."""

    name: ClassVar[str] = "rpart_poisson"
    description: ClassVar[str] = "rpart's Poisson deviance (event rates; rpart method poisson)"
    evidence: ClassVar[str] = "events_time"
    default_target: ClassVar[str] = "rpart_poisson"
    impurity = staticmethod(rpart_poisson_impurity)


@attrs.define(slots=False)
class Exponential(RpartPoisson):
    """rpart's ``method = "exp"`` for censored follow-up: its Poisson method's split search
    on rpart's rescaled times (the ``rpart_exponential`` target rescales them)."""

    name: ClassVar[str] = "exponential"
    description: ClassVar[str] = "rpart's exponential method (censored follow-up, event rates)"
    default_target: ClassVar[str] = "rpart_exponential"


def event_share_impurity(sums, total_weight, params):
    """The node's share of events (the ``survival`` target's statistics: weighted events,
    follow-up): 0 for a node without events, which no log-rank cut can split."""
    if total_weight <= 0.0:
        return 0.0
    return sums[0] / total_weight


@attrs.define(slots=False)
class Logrank(Criterion):
    """The log-rank statistic between the two children (LeBlanc and Crowley 1993;
    scikit-survival's ``SurvivalTree``): a cut scores |U| / sqrt(V), U the observed minus
    expected events of the left child over the node's event times, V its variance; the
    largest wins. No sum of statistics gives it, so the splitter scores cuts from the rows
    (:attr:`row_search`, ``kernels/logrank.py``). The impurity, the node's share of events,
    only stops growth where there is no event; reads the ``survival`` target's rows."""

    name: ClassVar[str] = "logrank"
    description: ClassVar[str] = "log-rank statistic between the children (survival trees)"
    evidence: ClassVar[str] = "event_time"
    default_target: ClassVar[str] = "survival"
    #: the split's score (``improvement``) is |U| / sqrt(V), a standard normal deviate
    #: under no difference: what split-complexity pruning squares
    provides: ClassVar[frozenset] = Criterion.provides | {"standardised_split_statistic"}
    row_search: ClassVar[str] = "logrank_search"
    impurity = staticmethod(event_share_impurity)

    def two_sample_statistic(self, rows, groups) -> float:
        """The chi-square (1 df) of the test the criterion splits by, on ``rows`` (the
        target's rows of some held-out sample, counted unweighted) in two ``groups``
        (0/1): the log-rank test of the events the criterion reads (``survdiff``'s, rows
        at risk in (entry, time]); 0 where a group is empty or no event happens. Called
        by split-complexity pruning on held-out rows (the capability
        ``standardised_split_statistic`` promises it)."""
        event_column, time_column, entry_column = self.row_columns((0, 1, 2), rows.shape[1])
        event, time = rows[:, event_column] > 0, rows[:, time_column]
        entry = rows[:, entry_column]
        if np.unique(groups).size < 2 or not event.any():
            return 0.0
        late = entry if (entry > 0).any() else None
        difference, covariance, _ = logrank_scores(time, event, groups, late)
        kept = np.flatnonzero(np.diag(covariance) > 0)[1:]
        if not kept.size:
            return 0.0
        d, v = difference[kept], covariance[np.ix_(kept, kept)]
        return float(d @ np.linalg.solve(v, d))

    def node_decreases(self, tree) -> np.ndarray:
        """A split node's weight times the log-rank statistic of its cut (the
        ``improvement`` the search stored), as an impurity criterion's node is credited its
        weight times its impurity drop: the node's share of events is additive over the
        children, so its decrease is 0 at every split (and importances were noise).
        Non-negative: a cut is taken only where its statistic is positive."""
        return improvement_decreases(tree)


def _check_cause(instance, attribute, value) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"cause must be an event code >= 1 (an int) or None, got {value!r}")


@attrs.define(slots=False)
class LogrankCause(Logrank):
    """The log-rank statistic of one cause's cause-specific hazard between the children
    (issue 62): :class:`Logrank`'s statistic with the events of ``cause`` as events and
    every other row, censored or ended by another cause, as censored at its time (the
    cause-specific log-rank test, ``survival::survdiff`` on that cause's indicator). Reads
    the ``competing_risks`` target's rows (their column of that cause). ``cause``: the
    event code (default 1), or None for every cause combined: Ishwaran et al.'s (2014)
    composite log-rank, sum_c U_c / sqrt(sum_c V_c) over the causes' observed-minus-
    expected events and variances (randomForestSRC's ``splitrule = "logrank"`` for
    competing risks; the any-event log-rank but for ties of different causes at a time)."""

    name: ClassVar[str] = "logrank_cause"
    description: ClassVar[str] = "log-rank statistic of one cause's hazard (competing risks)"
    default_target: ClassVar[str] = "competing_risks"
    cause: int | None = attrs.field(default=1, validator=_check_cause)

    def row_columns(self, default: tuple, n_columns: int) -> tuple:
        """(the cause's events, or every row's event code for all causes combined, the
        time, the entry) of the competing-risks rows."""
        if self.cause is None:
            return (CODE_COLUMN, 1, 2)
        column = cause_column(self.cause)
        if column >= n_columns:
            raise ValueError(
                f"criterion {self.name!r} has cause={self.cause}, but y's event codes are "
                f"1..{n_causes_of(n_columns)}"
            )
        return (column, 1, 2)

    def two_sample_statistic(self, rows, groups) -> float:
        """The criterion's test on held-out ``rows``: the cause's log-rank test, or for
        every cause combined the composite (sum_c U_c)^2 / sum_c V_c."""
        if self.cause is not None:
            return super().two_sample_statistic(rows, groups)
        if np.unique(groups).size < 2:
            return 0.0
        code, time, entry = rows[:, CODE_COLUMN], rows[:, 1], rows[:, 2]
        late = entry if (entry > 0).any() else None
        observed, variance = 0.0, 0.0
        for cause in np.unique(code[code > 0]):
            difference, covariance, _ = logrank_scores(time, code == cause, groups, late)
            observed += difference[1]
            variance += covariance[1, 1]
        return float(observed**2 / variance) if variance > 0 else 0.0


def _check_gray_cause(instance, attribute, value) -> None:
    if value is None:
        raise ValueError("criterion 'gray' tests one cause: cause must be an event code >= 1")
    _check_cause(instance, attribute, value)


def _check_cuts(instance, attribute, value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"n_cuts must be an int >= 0 (0: every cut), got {value!r}")


@attrs.define(slots=False)
class Gray(LogrankCause):
    """Gray's two-sample test of one cause's cumulative incidence between the children
    (Gray 1988: the subdistribution log-rank test, cmprsk's ``cuminc`` Tests with rho 0;
    randomForestSRC's ``logrankCR``), |score| / sqrt(variance), the largest wins: for
    competing risks, where the cause-specific log-rank compares hazards, Gray's compares
    the incidences a clinician reads. Scored cut by cut from the node's rows
    (``kernels/gray.py``): ``n_cuts`` candidate cuts per feature spread over its sorted
    rows (randomForestSRC's ``nsplit``; default 10; 0: every cut). ``cause``: the event
    code (default 1). Rows with delayed entry are refused (Gray's test has no risk sets
    from entry). Reads the ``competing_risks`` target's rows."""

    name: ClassVar[str] = "gray"
    description: ClassVar[str] = "Gray's test of one cause's incidence (competing risks)"
    row_search: ClassVar[str] = "gray_search"
    cause: int = attrs.field(default=1, validator=_check_gray_cause)
    n_cuts: int = attrs.field(default=10, validator=_check_cuts)

    def row_columns(self, default: tuple, n_columns: int) -> tuple:
        """(the cause's events, the time, any event, the entry)."""
        column, time, entry = super().row_columns(default, n_columns)
        return (column, time, 0, entry)

    def row_search_arguments(self) -> tuple:
        return (int(self.n_cuts),)

    def two_sample_statistic(self, rows, groups) -> float:
        """Gray's chi-square of the cause between ``groups`` on held-out ``rows``
        (cmprsk's, unweighted); 0 where a group is empty or the test is undefined."""
        column, time_column, any_column, _ = self.row_columns((), rows.shape[1])
        if np.unique(groups).size < 2:
            return 0.0
        code = np.where(rows[:, column] > 0, 1, np.where(rows[:, any_column] > 0, 2, 0))
        if not (code == 1).any():
            return 0.0
        scores, covariance = gray_scores(rows[:, time_column], code, groups, 1)
        if not covariance[0, 0] > 0:
            return 0.0
        return float(scores[0] ** 2 / covariance[0, 0])
