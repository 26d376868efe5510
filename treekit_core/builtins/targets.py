"""Built-in targets: ``class_labels`` (y holds class labels, a node stores the labeler's class
distribution and decision, prediction returns labels) and ``mean`` (y holds a measurement,
a node stores the weighted mean of its rows' y, prediction returns it: regression), its
variants for counts (``poisson_mean``, ``rpart_poisson``) and ``median`` (absolute error)."""

from __future__ import annotations

import math
from typing import ClassVar

import attrs
import numpy as np

from treekit_core.builtins.label_sets import ClassLabelSets
from treekit_core.builtins.r_numerics import r_approx, r_cumsum, r_group_sums, r_quantile7
from treekit_core.builtins.survival_curves import (
    check_jumps,
    curve_steps,
    curves_at_times,
    jumps_of_nodes,
    leaf_jumps,
    risk_scores,
    survival_bands,
    unique_times,
)
from treekit_core.components import MonotoneValue, Target, TargetRows, one_hot
from treekit_core.components.base import state_array
from treekit_core.engine.validation import (
    MAX_ABS_RESPONSE,
    check_entry,
    check_statistics_size,
    check_survival_y,
    check_weight_sums,
    check_y,
    check_y_numeric,
    check_y_outputs,
    split_entry,
    y_columns,
)
from treekit_core.numerics import in_order_sum


def check_statistics_width(tree, expected: int, meaning: str) -> None:
    """Refuse a model file's tree whose statistics do not have ``expected`` columns,
    saying what they hold (``meaning``)."""
    if tree.statistics.shape[1] != expected:
        raise ValueError(
            f"tree field 'statistics' has {tree.statistics.shape[1]} columns, expected "
            f"{expected} ({meaning})"
        )


def check_class_statistics(n_samples: int, n_classes: int, name: str = "y") -> None:
    """Refuse class labels whose statistics (a column per class) would not fit in memory
    (:func:`~treekit_core.engine.validation.check_statistics_size`), with a hint when nearly
    every row has a class of its own."""
    hint = (
        "; nearly every row has a class of its own: is the target an ID column, or a "
        "measurement rather than a class?"
        if n_classes * 2 > n_samples
        else ""
    )
    check_statistics_size(n_samples, n_classes, name, "classes", hint)


@attrs.define(slots=False)
class ClassLabels(Target):
    """y holds one class label per sample; its row is one-hot (1 in the column of its
    class), so a node's statistics are its weighted class counts. The labeler decides."""

    name: ClassVar[str] = "class_labels"
    description: ClassVar[str] = "class labels: class counts per node, the labeler decides"
    several_outputs: ClassVar[bool] = True  # a 2-D y: handed over to class_label_sets
    provides: ClassVar[frozenset] = frozenset({"class_decisions", "node_risk", "influence"})

    def encode(self, y, n_samples, **given):
        """One-hot rows and the classes; a 2-D y of several columns (several outputs) as
        ``class_label_sets`` encodes it (:meth:`with_labels` then hands over to it)."""
        if y_columns(y) > 1:
            return ClassLabelSets().encode(y, n_samples, **given)
        classes, encoded = check_y(y, n_samples)
        check_class_statistics(n_samples, classes.shape[0])
        return TargetRows(one_hot(encoded, classes.shape[0]), classes)

    def with_labels(self, labels):
        """Itself; for the labels of several outputs (a list of class arrays) the
        ``class_label_sets`` target that knows them (scikit-learn's classifiers take a 2-D y
        as they take a 1-D one)."""
        if isinstance(labels, list):
            return ClassLabelSets().with_labels(labels)
        return self

    def influence(self, rows):
        """Dummy codes of the classes, one column per class; for two classes the second
        class's column alone (partykit's ``.y2infl``). A row that is no one-hot label
        (a counterexample's) is refused."""
        if not (np.isin(rows, (0.0, 1.0)).all() and (rows.sum(axis=1) == 1.0).all()):
            raise ValueError(
                "an influence function needs one class label per row; these rows mark "
                "several classes (counterexamples)"
            )
        return rows[:, 1:2].copy() if rows.shape[1] == 2 else rows.copy()

    def monotone_value(self, n_statistics):
        """The first class's share, falling as P(second class) rises (scikit-learn
        constrains the first class's share with the signs flipped, so the bounds and
        clipped values have its bits); two classes only."""
        if n_statistics != 2:
            raise ValueError(
                f"monotonic constraints need two classes (they order P(classes_[1])); y has "
                f"{n_statistics}"
            )
        return MonotoneValue((0.0, 1.0, 0.0), (1.0, 0.0, 0.0), sign=-1)

    def clip_node_values(self, values, lower, upper, value):
        """The first class's share clipped, the second's its complement (scikit-learn's)."""
        values = np.array(values, dtype=np.float64)
        values[:, 0] = np.clip(values[:, 0], lower, upper)
        values[:, 1] = 1.0 - values[:, 0]
        return values

    def check_tree(self, tree, labels) -> None:
        """Sums of weights per class: one column per label, >= 0 and within the bound fit
        puts on weights; distributions >= 0; decisions index a label or abstain (-1)."""
        n_labels = len(labels)
        check_statistics_width(tree, n_labels, "one per class")
        check_weight_sums(tree.statistics)
        if tree.value.shape[1] != n_labels or (tree.value < 0).any():
            raise ValueError(
                f"tree field 'value' must hold {n_labels} finite probabilities >= 0 per node"
            )
        if ((tree.decision < -1) | (tree.decision >= n_labels)).any():
            raise ValueError("tree field 'decision' holds a class index out of range")


def _means(statistics, weights):
    """Column 0 of the statistics over the weights (0 for a node without weight)."""
    weights = np.asarray(weights, dtype=np.float64)
    safe = np.where(weights > 0, weights, 1.0)
    return np.where(weights > 0, statistics[:, 0] / safe, 0.0)


class PredictsOneNumber:
    """What targets whose nodes hold one number (a mean, a rate, an event share) and decide
    among nothing share: every decision is 0, and ``predict`` returns the number. Placed
    before :class:`~treekit_core.Target` among the bases."""

    decides_with_labeler: ClassVar[bool] = False

    def decide(self, values, labeler):
        return np.zeros(values.shape[0], dtype=np.int64)

    def predictions(self, values, decisions, labels):
        return np.asarray(values[:, 0], dtype=np.float64)


def check_response_bound(tree, sums, bound: float, what: str) -> None:
    """A node's weighted sum of ``what`` is at most its weight times ``bound`` in size,
    the bound fit puts on every response (:data:`MAX_ABS_RESPONSE`): a model file's sums
    beyond it would make predictions infinite."""
    limit = np.maximum(tree.weight, 0.0) * bound * (1 + 1e-9)
    if (np.abs(sums) > limit).any():
        node = int(np.flatnonzero(np.abs(sums) > limit)[0])
        raise ValueError(
            f"tree field 'statistics': node {node}'s weighted sum of {what} is {sums[node]:.3g}, "
            f"beyond its weight times {bound:g} (fit refuses responses beyond {MAX_ABS_RESPONSE:g})"
        )


def _check_order(inst, attribute, value):
    if value is not None and (
        isinstance(value, (str, bytes)) or len(value) < 2 or len(set(value)) != len(value)
    ):
        raise ValueError(
            f"ordinal_labels order must be None (read from an ordered pandas Categorical y) "
            f"or a list of two or more distinct labels, lowest first; got {value!r}"
        )


@attrs.define(slots=False)
class OrdinalLabels(ClassLabels):
    """Ordered class labels (a grade, a stage): one-hot rows as class labels, the classes in
    their order (``order``, lowest first, or the categories of an ordered pandas
    Categorical y), decided and predicted as classes (probabilities per class, the most
    probable class); a conditional inference tree tests them by their scores 1, 2, ..., K
    (partykit's ordered response)."""

    name: ClassVar[str] = "ordinal_labels"
    description: ClassVar[str] = "ordered class labels: class counts, tested by their ranks"
    several_outputs: ClassVar[bool] = False
    order: list | None = attrs.field(default=None, validator=_check_order)

    def encode(self, y, n_samples, **given):
        order = self.order
        if order is None:
            categories = getattr(getattr(y, "cat", y), "categories", None)
            if categories is None or not getattr(getattr(y, "cat", y), "ordered", False):
                raise ValueError(
                    "target 'ordinal_labels' needs the order of the classes: give y as an "
                    "ordered pandas Categorical, or target_params={'order': [lowest, ..., "
                    "highest]}"
                )
            order = list(categories)
        labels = np.asarray(y, dtype=object)
        if labels.shape != (n_samples,):
            raise ValueError(f"y has shape {labels.shape}; expected ({n_samples},) labels")
        position = {label: k for k, label in enumerate(order)}
        unknown = [v for v in labels.tolist() if v not in position]
        if unknown:
            raise ValueError(
                f"y holds {unknown[0]!r}, which is not among the ordered classes {list(order)}"
            )
        codes = np.array([position[v] for v in labels.tolist()], dtype=np.int64)
        check_class_statistics(n_samples, len(order))
        return TargetRows(one_hot(codes, len(order)), np.asarray(order))

    def influence(self, rows):
        """The classes' scores 1, 2, ..., K (partykit's default scores of an ordered
        response), one column."""
        return (rows @ np.arange(1.0, rows.shape[1] + 1.0))[:, None]


def _output_pairs(statistics) -> int:
    """The outputs of rows or statistics that hold a pair of columns per output (k
    outputs: 2k columns, output j's pair in columns 2j and 2j + 1)."""
    return statistics.shape[1] // 2


def _output_means(statistics, weights):
    """Each output's mean (n_nodes x k): the first column of its pair over the weights, 0
    for a node without weight (:func:`_means` per output)."""
    weights = np.asarray(weights, dtype=np.float64)[:, None]
    safe = np.where(weights > 0, weights, 1.0)
    return np.where(weights > 0, statistics[:, 0::2] / safe, 0.0)


def _output_pair_rows(response, second) -> np.ndarray:
    """The rows of a response of k outputs (n x k) as k pairs (y_j, ``second(y_j)``):
    columns 2j and 2j + 1 (one output: (y, second(y)), today's rows)."""
    rows = np.empty((response.shape[0], 2 * response.shape[1]))
    rows[:, 0::2] = response
    rows[:, 1::2] = second(response)
    return rows


class PredictsOutputs(PredictsOneNumber):
    """What targets of one or several numeric outputs share (scikit-learn's multi-output
    regression: a 2-D y, n x k): rows hold a pair of columns per output, a node's value is
    one number per output, and ``predict`` returns a number per row (one output) or a row
    of k numbers (several)."""

    def predictions(self, values, decisions, labels):
        if values.shape[1] == 1:
            return np.asarray(values[:, 0], dtype=np.float64)
        return np.asarray(values, dtype=np.float64)

    def node_values(self, statistics, weights, labeler):
        return _output_means(statistics, weights), np.zeros(statistics.shape[0], np.int64)

    def responses(self, rows):
        """y itself: one column (1-D) or k (n x k), the first column of every pair."""
        if rows.shape[1] == 2:
            return np.asarray(rows[:, 0], dtype=np.float64)
        return np.ascontiguousarray(rows[:, 0::2], dtype=np.float64)

    def strata(self, rows, labeler):
        return np.zeros(rows.shape[0], dtype=np.int64)

    def monotone_value(self, n_statistics):
        """The mean of a single output, sum of w y over the weight; several outputs are
        refused (a constraint names no output; scikit-learn refuses them too)."""
        if n_statistics != 2:
            raise ValueError(
                f"monotonic_cst constrains one output's prediction; y has {n_statistics // 2} "
                "outputs (fit one model per output to constrain each)"
            )
        return MonotoneValue((0.0, 1.0, 0.0), (1.0, 0.0, 0.0))

    def check_outputs(self, tree, meaning: str) -> int:
        """The outputs of a model file's tree: a pair of statistic columns per output
        (``meaning``: what a pair holds) and one value per output."""
        width = tree.statistics.shape[1]
        if width < 2 or width % 2:
            raise ValueError(
                f"tree field 'statistics' has {width} columns, expected 2 per output ({meaning})"
            )
        if tree.value.shape[1] != width // 2:
            raise ValueError(
                f"tree field 'value' has {tree.value.shape[1]} columns, expected "
                f"{width // 2} (a mean per output)"
            )
        return width // 2


@attrs.define(slots=False)
class Mean(PredictsOutputs, Target):
    """y holds one number per sample (or k, a 2-D y: several outputs); its row is (y, y^2)
    per output, so a node's statistics are the weighted sum and sum of squares of each
    output's responses. A node predicts their weighted means (CART's regression tree,
    rpart's ``anova``, scikit-learn's regressor, multi-output as scikit-learn's); its risk
    is the weighted sum of squared deviations from them over the outputs, a sample's loss
    the squared error summed over the outputs."""

    name: ClassVar[str] = "mean"
    description: ClassVar[str] = "a measurement: the weighted mean per node (regression)"
    several_outputs: ClassVar[bool] = True
    evidence: ClassVar[str] = "moments"
    provides: ClassVar[frozenset] = frozenset({"node_risk", "influence"})

    def encode(self, y, n_samples, **given):
        return TargetRows(_output_pair_rows(check_y_outputs(y, n_samples), np.square), None)

    def influence(self, rows):
        """The response itself (partykit's h(y) = y for a number; a column per output)."""
        return np.ascontiguousarray(rows[:, 0::2])

    def node_risk(self, statistics, weights, labeler):
        """The weighted sum of squared deviations from the node's mean, S2 - S1^2 / W (never
        below 0: the subtraction may round a pure node's to -1e-17), summed over the
        outputs."""
        weights = np.asarray(weights, dtype=np.float64)[:, None]
        safe = np.where(weights > 0, weights, 1.0)
        sums = statistics[:, 0::2]
        spread = np.where(
            weights > 0, np.maximum(statistics[:, 1::2] - sums * sums / safe, 0.0), 0.0
        )
        return spread.sum(axis=1)  # one output: its own column, exactly

    def node_risks_in_order(self, rows, weights, node_rows, labeler):
        """rpart's ``anovass``: the weighted mean (the sums of w y and of w, each summed in
        the rows' order), then the sum of (y - mean)^2 w in that order: two passes where
        :meth:`node_risk` subtracts S1^2 / W from S2 (equal to about 1e-13)."""
        risks = np.zeros(len(node_rows))
        for node, members in enumerate(node_rows):
            if members.size:
                weight = weights[members]
                for output in range(_output_pairs(rows)):
                    response = rows[members, 2 * output]
                    mean = in_order_sum(response * weight) / in_order_sum(weight)
                    deviation = response - mean
                    risks[node] += in_order_sum(deviation * deviation * weight)
        return risks

    def sample_loss(self, rows, values, decisions, labeler):
        """The squared error, summed over the outputs."""
        errors = (rows[:, 0::2] - values) ** 2
        return errors.sum(axis=1)  # one output: its own column, exactly

    def category_order(self, sums, weights):
        """The categories' means: ordered by mean response, the best subset question for
        squared error is a prefix (Breiman et al., section 9.4; rpart orders so). None for
        several outputs (no one order is known to make the best subset a prefix)."""
        return _means(sums, weights) if sums.shape[1] == 2 else None

    def category_order_column(self, n_statistics):
        """Column 0 (the mean is the share of the weighted sum of y), where
        :meth:`category_order` is this class's; -1 (no order) for several outputs."""
        if type(self).category_order is not Mean.category_order:
            return None
        return 0 if n_statistics == 2 else -1

    def check_tree(self, tree, labels) -> None:
        """Two statistic columns per output (sums of y and y^2, the second >= 0) and one
        value per output, all finite."""
        self.check_outputs(tree, "the weighted sums of y and y^2")
        if (tree.statistics[:, 1::2] < 0).any():
            raise ValueError("tree field 'statistics': a weighted sum of y^2 is negative")
        for output in range(tree.value.shape[1]):
            check_response_bound(tree, tree.statistics[:, 2 * output], MAX_ABS_RESPONSE, "y")
            check_response_bound(
                tree, tree.statistics[:, 2 * output + 1], MAX_ABS_RESPONSE**2, "y^2"
            )


@attrs.define(slots=False)
class Median(Mean):
    """y holds one number per sample; a node predicts the weighted median of its responses
    (scikit-learn's ``criterion="absolute_error"``: the smallest response whose cumulative
    weight reaches half the node's weight, the midpoint with the next one when it is
    exactly half); its risk is the weighted sum of absolute deviations from it, a sample's
    loss the absolute error. No sum of per-row numbers gives a median, so a node's
    statistics are a summary of its rows (:attr:`summarises_rows`): (median, sum of
    w |y - median|); a sample's row is (y, 0), the summary of a node holding it alone."""

    name: ClassVar[str] = "median"
    description: ClassVar[str] = "a measurement: the weighted median per node (absolute error)"
    several_outputs: ClassVar[bool] = False
    evidence: ClassVar[str] = "median_summaries"
    summarises_rows: ClassVar[bool] = True

    def encode(self, y, n_samples, **given):
        if y_columns(y) > 1:
            raise ValueError(
                f"y has {y_columns(y)} outputs; target 'median' (criterion "
                "'absolute_error') takes one: use 'squared_error' or 'poisson' for several "
                "outputs, or fit one model per output"
            )
        response = check_y_numeric(y, n_samples)
        return TargetRows(np.column_stack([response, np.zeros_like(response)]), None)

    def monotone_value(self, n_statistics):
        """None: a median comes from no sums, so no search can score a cut's sides by it
        from running sums (scikit-learn's absolute error keeps medians per candidate)."""
        return None

    def node_statistics(self, rows, row_weights):
        """(weighted median, weighted absolute deviations from it) of the rows' responses."""
        from treekit_core.kernels.absolute_deviation import median_summary

        values = np.ascontiguousarray(rows[:, 0], dtype=np.float64)
        weights = np.ascontiguousarray(row_weights, dtype=np.float64)
        return np.array(median_summary(values, weights))

    def node_values(self, statistics, weights, labeler):
        return statistics[:, :1].copy(), np.zeros(statistics.shape[0], np.int64)

    def node_risk(self, statistics, weights, labeler):
        """The weighted absolute deviations from the node's median (its summary)."""
        return np.maximum(statistics[:, 1], 0.0)

    def sample_loss(self, rows, values, decisions, labeler):
        return np.abs(rows[:, 0] - values[:, 0])

    def category_order(self, sums, weights):
        return None  # no order of categories is known to make the best subset a prefix

    def check_tree(self, tree, labels) -> None:
        """Two statistic columns (the median and the absolute deviations from it, >= 0) and
        one value per node, the median."""
        check_statistics_width(
            tree, 2, "the weighted median and the weighted absolute deviations from it"
        )
        if (tree.statistics[:, 1] < 0).any():
            raise ValueError(
                "tree field 'statistics': a sum of absolute deviations (column 1) is negative"
            )
        if tree.value.shape[1] != 1:
            raise ValueError(
                f"tree field 'value' has {tree.value.shape[1]} columns, expected 1 (the median)"
            )


def _x_log_x(values):
    """x log x, 0 at x = 0."""
    out = np.zeros_like(values)
    positive = values > 0
    out[positive] = values[positive] * np.log(values[positive])
    return out


@attrs.define(slots=False)
class PoissonMean(Mean):
    """y holds a count or a rate per sample (y >= 0, sum > 0); its row is (y, y log y). A
    node predicts the weighted mean (scikit-learn's Poisson regression); its risk and a
    sample's loss are the half Poisson deviance of that mean."""

    name: ClassVar[str] = "poisson_mean"
    description: ClassVar[str] = "a count (y >= 0): the weighted mean per node, Poisson deviance"
    evidence: ClassVar[str] = "poisson_moments"
    nonnegative_response: ClassVar[bool] = True

    def encode(self, y, n_samples, **given):
        response = check_y_outputs(y, n_samples)
        if (response < 0).any():
            row, output = np.argwhere(response < 0)[0]
            where = f"row {row}" + (f", output {output}" if response.shape[1] > 1 else "")
            raise ValueError(
                f"y holds {response[row, output]:g} at {where}; Poisson regression needs "
                "y >= 0 (counts or rates)"
            )
        sums = response.sum(axis=0)
        if (sums <= 0).any():
            output = "" if sums.size == 1 else f" of output {int(np.argmax(sums <= 0))}"
            raise ValueError(f"Sum of y{output} is not positive, which Poisson regression needs")
        return TargetRows(_output_pair_rows(response, _x_log_x), None)

    def node_risk(self, statistics, weights, labeler):
        """Half the Poisson deviance of the node's mean, sum y log y - S log(S / W), summed
        over the outputs."""
        weights = np.asarray(weights, float)[:, None]
        deviance = (
            statistics[:, 1::2] - _x_log_x(_output_means(statistics, weights[:, 0])) * weights
        )
        deviance = np.maximum(deviance, 0.0)
        return deviance.sum(axis=1)  # one output: its own column, exactly

    def sample_loss(self, rows, values, decisions, labeler):
        """Half the Poisson deviance of predicting ``values`` for y: y log(y / m) - y + m
        (infinite where m = 0 < y), summed over the outputs."""
        y, mean = rows[:, 0::2], values
        # where y = 0 the term is 0 whatever the mean: the branch not taken may compute
        # 0 * inf there, which must not warn
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio_log = np.where(y > 0, y * (np.log(np.where(y > 0, y, 1.0)) - np.log(mean)), 0.0)
        loss = ratio_log - y + mean
        return loss.sum(axis=1)  # one output: its own column, exactly

    def check_tree(self, tree, labels) -> None:
        """Two statistic columns per output (sums of y >= 0 and y log y) and one value >= 0
        per output."""
        self.check_outputs(tree, "the weighted sums of y and y log y")
        if (tree.statistics[:, 0::2] < 0).any():
            raise ValueError("tree field 'statistics': a weighted sum of y is negative")
        if (tree.value < 0).any():
            raise ValueError("tree field 'value' must hold means >= 0")


def _check_shrink(instance, attribute, value):
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not (np.isfinite(value) and value >= 0)
    ):
        raise ValueError(f"shrink must be a finite number >= 0 (0: no shrinkage), got {value!r}")


@attrs.define(slots=False)
class RpartPoissonRate(PredictsOneNumber, Target):
    """rpart's ``method = "poisson"``: y holds event counts (exposure 1 each), or is an
    n x 2 array of (time, events) as rpart's ``cbind(time, events)`` response (time > 0,
    events >= 0). A row is (events, time, d log(d / t)). A node's rate is rpart's shrunk
    estimate (events + a) / (time + b), a = 1 / shrink^2 and b = a / r, r the root's rate
    (the first node given: :meth:`node_values` sees a tree's nodes root first); shrink 0:
    the unshrunk rate events / time. Its risk is the Poisson deviance at that rate, a
    sample's loss its deviance (rpart's xval rule "deviance"); ``predict`` returns the
    rate (rpart's ``predict``)."""

    name: ClassVar[str] = "rpart_poisson"
    description: ClassVar[str] = "event counts or (time, events): rpart's shrunk Poisson rate"
    evidence: ClassVar[str] = "events_time"
    nonnegative_response: ClassVar[bool] = True
    provides: ClassVar[frozenset] = frozenset({"node_risk"})
    shrink: float = attrs.field(default=1.0, validator=_check_shrink)

    def encode(self, y, n_samples, **given):
        array = None if y is None else np.asarray(y)
        if array is not None and array.ndim == 2 and array.shape[1] == 2:
            time = check_y_numeric(array[:, 0], n_samples, name="y[:, 0] (time)")
            events = check_y_numeric(array[:, 1], n_samples, name="y[:, 1] (events)")
            if (time <= 0).any():
                row = int(np.flatnonzero(time <= 0)[0])
                raise ValueError(f"y[:, 0] (time) is {time[row]:g} at row {row}; times must be > 0")
        else:
            events = check_y_numeric(y, n_samples)
            time = np.ones_like(events)
        if (events < 0).any():
            row = int(np.flatnonzero(events < 0)[0])
            raise ValueError(f"the event count is {events[row]:g} at row {row}; counts are >= 0")
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.where(
                events > 0, events * np.log(np.where(events > 0, events, 1.0) / time), 0.0
            )
        return TargetRows(np.column_stack([events, time, logs]), None)

    def observed(self, rows):
        """Each row's observed rate, events / time (its count where the exposure is 1)."""
        return rows[:, 0] / rows[:, 1]

    def responses(self, rows):
        """The observed rates (:meth:`observed`): a leaf's quantiles are its rows' rates
        (counts, for unit exposures), each row weighed by its sample weight, not by its
        exposure."""
        return np.asarray(self.observed(rows), dtype=np.float64)

    def rates(self, statistics):
        """The shrunk rate of every node (root first)."""
        events, time = statistics[:, 0], statistics[:, 1]
        if self.shrink == 0 or statistics.shape[0] == 0:
            return np.divide(events, time, out=np.zeros_like(events), where=time > 0)
        a = 1.0 / (self.shrink * self.shrink)
        root = events[0] / time[0] if time[0] > 0 else 0.0
        if root <= 0:
            return np.zeros_like(events)  # rpart: b = a / 0, every rate 0
        return (events + a) / (time + a / root)

    def node_values(self, statistics, weights, labeler):
        return self.rates(statistics)[:, None], np.zeros(statistics.shape[0], np.int64)

    def monotone_value(self, n_statistics):
        """The unshrunk rate, events over time (the shrunk rate a node predicts is clipped
        to the interval the unshrunk ones set)."""
        return MonotoneValue((0.0, 1.0, 0.0, 0.0), (0.0, 0.0, 1.0, 0.0))

    def node_risk(self, statistics, weights, labeler):
        """rpart's deviance at the node's shrunk rate r:
        2 (r T - D - D log r + sum d log(d / t))."""
        rate = self.rates(statistics)
        events, time = statistics[:, 0], statistics[:, 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            d_log_r = np.where(events > 0, events * np.log(np.where(rate > 0, rate, 1.0)), 0.0)
        return np.maximum(2.0 * (rate * time - events - d_log_r + statistics[:, 2]), 0.0)

    def node_risks_in_order(self, rows, weights, node_rows, labeler):
        """rpart's ``poissondev`` on each node's rows in their order: the rate
        (D + a) / (T + b) from the sums of w d and w t (a and b from the root's sums in file
        order, as rpart's ``poissoninit``), then the deviance -2 sum w (d log(r t / d) -
        (r t - d)), its two terms added row by row; logarithms by the C library's ``log``
        (``math.log``), as rpart's."""
        events, time = rows[:, 0], rows[:, 1]
        a = b = 0.0
        if self.shrink > 0:
            root = node_rows[0]
            a = 1.0 / (self.shrink * self.shrink)
            rate = in_order_sum(events[root] * weights[root]) / in_order_sum(
                time[root] * weights[root]
            )
            with np.errstate(divide="ignore"):
                b = a / rate if rate != 0 else np.inf  # rpart's a / 0: every rate 0
        risks = np.zeros(len(node_rows))
        for node, members in enumerate(node_rows):
            if members.size == 0:
                continue
            d, t, w = events[members], time[members], weights[members]
            rate = (in_order_sum(d * w) + a) / (in_order_sum(t * w) + b)
            terms = np.zeros((members.size, 2))
            terms[:, 0] = -((rate * t - d) * w)
            some = np.flatnonzero((d > 0) & (w > 0))  # a row of weight 0 adds nothing
            # (the C library's log, as rpart's; log 0 is -inf there too: an infinite risk)
            logs = [
                math.log(v) if v > 0 else -math.inf for v in (rate * t[some] / d[some]).tolist()
            ]
            terms[some, 1] = d[some] * np.asarray(logs, dtype=np.float64) * w[some]
            risks[node] = -2.0 * in_order_sum(terms.ravel())
        return risks

    def sample_loss(self, rows, values, decisions, labeler):
        """rpart's poissonpred with the deviance rule: -2 (d - r t + d log(r t / d))."""
        events, time, rate = rows[:, 0], rows[:, 1], values[:, 0]
        expected = rate * time
        with np.errstate(divide="ignore", invalid="ignore"):
            log_term = np.where(
                events > 0,
                events
                * np.log(np.where(expected > 0, expected, 1.0) / np.where(events > 0, events, 1.0)),
                0.0,
            )
            log_term = np.where((events > 0) & (expected <= 0), -np.inf, log_term)
        return -2.0 * (events - expected + log_term)

    def strata(self, rows, labeler):
        return np.zeros(rows.shape[0], dtype=np.int64)

    def category_order(self, sums, weights):
        """The categories' event rates, largest first (minus the rate): rpart's poisson
        ranks them so, ties in category order, and the first best prefix wins, so where
        two categories share a rate this order picks rpart's subset."""
        rate = np.divide(sums[:, 0], sums[:, 1], out=np.zeros(len(sums)), where=sums[:, 1] > 0)
        return -rate

    def check_tree(self, tree, labels) -> None:
        """Three statistic columns (events >= 0, time > 0 where a node has weight, the sum of
        d log(d / t)) and one rate >= 0 per node."""
        check_statistics_width(tree, 3, "events, time, sum of d log(d / t)")
        if (tree.statistics[:, 0] < 0).any() or (tree.statistics[:, 1] < 0).any():
            raise ValueError("tree field 'statistics': negative events or time")
        if tree.value.shape[1] != 1 or (tree.value < 0).any():
            raise ValueError("tree field 'value' must hold one rate >= 0 per node")


#: rpart.exp's most intervals of constant hazard (more death times are thinned to the
#: 1001 quantiles of the death times).
RPART_EXP_INTERVALS = 1000


def rpart_exponential_table(time: np.ndarray, event: np.ndarray):
    """(interval ends, cumulative hazard at them) of rpart's rescaling of time: see
    :func:`rpart_exponential_time`."""
    deaths = np.unique(time[event])
    if deaths.size > 1:  # rpartexp2: drop death times within delta of the last kept one
        delta = np.finfo(np.float64).eps * (
            deaths[(3 * deaths.size) // 4] - deaths[deaths.size // 4]
        )
        keep = np.zeros(deaths.size, dtype=bool)
        keep[0], last = True, deaths[0]
        for i in range(1, deaths.size):
            if deaths[i] - last > delta:
                keep[i], last = True, deaths[i]
        deaths = deaths[keep]
    if deaths.size > RPART_EXP_INTERVALS:
        deaths = r_quantile7(deaths, np.arange(RPART_EXP_INTERVALS + 1) / RPART_EXP_INTERVALS)
    table = np.concatenate([[0.0], deaths[:-1], [time.max()]])
    lengths = np.diff(table)
    # the interval (table[k-1], table[k]] each follow-up ends in, the first closed at 0
    index = np.maximum(np.searchsorted(table, time, side="left"), 1) - 1
    groups = lengths.size
    ending = np.bincount(index, minlength=groups)
    later = np.concatenate([np.cumsum(ending[::-1])[::-1][1:], [0]])
    # R's arithmetic throughout (rpart.exp is R code): its sums in long double
    exposure = lengths * later + r_group_sums(index, time - table[index], groups)
    rate = np.bincount(index, weights=event.astype(np.float64), minlength=groups) / exposure
    hazard = r_cumsum(np.concatenate([[0.0], rate * lengths]))
    return table, hazard


def rpart_exponential_time(time: np.ndarray, event: np.ndarray) -> np.ndarray:
    """rpart's rescaled follow-up time (``rpart.exp``, rpart 4.1.19): the hazard is taken as
    constant between successive distinct death times (the first interval from 0, the last
    to the largest time; death times closer than machine epsilon times their interquartile
    range merged, as rpart's C routine ``rpartexp2`` does; more than 1000 intervals thinned
    to the quantiles of the death times), its rate per interval the deaths over the time
    spent there, and every time is replaced by the cumulative hazard at it, interpolated
    linearly. The overall death rate becomes 1, and the data look Poisson. Case weights do
    not enter (rpart's ``drate2`` ignores them)."""
    table, hazard = rpart_exponential_table(time, event)
    return r_approx(table, hazard, time)


@attrs.define(slots=False)
class RpartExponential(RpartPoissonRate):
    """rpart's ``method = "exp"``: y is censored follow-up (:func:`check_survival_y`: a
    structured (event, time) array as scikit-survival's ``Surv``, or columns (time, event));
    times must be > 0 and some must end in the event. Each time is rescaled to rpart's
    cumulative hazard (:func:`rpart_exponential_time`), and the rows are then rpart's
    Poisson method's three columns (events, scaled time, events log(events / scaled
    time)): a node's rate is the shrunk event rate relative to the whole sample (the
    root's is 1), its risk the deviance at it."""

    name: ClassVar[str] = "rpart_exponential"
    description: ClassVar[str] = "censored follow-up: rpart's exponential scaling, Poisson rates"

    provides: ClassVar[frozenset] = frozenset({"node_risk", "survival_curves"})
    #: The state is rpart's rescaling, not per node: a pruned tree keeps it.
    state_per_node: ClassVar[bool] = False

    def encode(self, y, n_samples, **given):
        event, time = check_survival_y(y, n_samples)
        if (time <= 0).any():
            row = int(np.flatnonzero(time <= 0)[0])
            raise ValueError(
                f"the time of row {row} is {time[row]:g}; rpart's exponential method needs "
                "times > 0"
            )
        if not event.any():
            raise ValueError(
                "y holds no event (every time is censored); rpart's exponential method needs deaths"
            )
        scaled = rpart_exponential_time(time, event)
        return super().encode(np.column_stack([scaled, event.astype(np.float64)]), n_samples)

    def fit_state(self, y, rows, tree, memberships):
        """rpart's rescaling of time (its interval table and the cumulative hazard at its
        ends), so that a leaf of rate r has the cumulative hazard r Lambda(t), Lambda the
        rescaling: what the survival functions read."""
        event, time = check_survival_y(y, len(y))
        table, hazard = rpart_exponential_table(time, event)
        return {**_time_grid(event, time), "table": table, "table_hazard": hazard}

    def check_state(self, state, tree) -> None:
        if not state:
            return  # (a survival estimator requires it: SurvivalEstimator._read_trees)
        _check_time_grid(state)
        size = np.shape(state.get("table", []))
        table = state_array(state, "table", size, "target", minimum=0.0)
        hazard = state_array(state, "table_hazard", size, "target", minimum=0.0)
        if table.ndim != 1 or (np.diff(table) <= 0).any() or (np.diff(hazard) < 0).any():
            raise ValueError("model file: target.table must rise, target.table_hazard not fall")

    def hazard_curves(self, state, tree, nodes, grid):
        """Cumulative hazard of each of ``nodes`` at the ``grid`` times: the node's rate
        times rpart's rescaled time."""
        baseline = np.interp(
            grid, np.asarray(state["table"], float), np.asarray(state["table_hazard"], float)
        )
        return tree.value[nodes, 0][:, None] * baseline[None, :]

    def survival_curves(self, state, tree, nodes, grid):
        return np.exp(-self.hazard_curves(state, tree, nodes, grid))

    def curve_steps(self, state, tree, nodes, which):
        """None: an exponential curve changes at every grid time (rate times rpart's
        rescaled time); survival estimators read it dense."""
        return None

    def risk_scores(self, state, tree, nodes):
        """Each of ``nodes``' rate relative to the whole sample (rpart's ``predict``)."""
        return tree.value[nodes, 0]


@attrs.define(slots=False)
class SurvivalCurves(PredictsOneNumber, Target):
    """Censored follow-up for log-rank trees (scikit-survival's ``SurvivalTree``): y as
    :func:`check_survival_y` reads it (times >= 0); a row is (event, time), so a node's
    statistics are its weighted events and follow-up. A leaf predicts the Nelson-Aalen
    cumulative hazard and the Kaplan-Meier survival of the training rows that reach it
    (kept per leaf after fitting: :meth:`fit_state`), on the grid of every distinct training
    time; ``predict`` sums the cumulative hazard over the event times (scikit-survival's
    risk score). A node's value is its share of events. It has no node risk, so
    cost-complexity pruning is refused: log-rank trees grow unpruned, as
    scikit-survival's, or prune by LeBlanc & Crowley's split complexity
    (``split_complexity``, which reads the criterion's statistics)."""

    name: ClassVar[str] = "survival"
    description: ClassVar[str] = "censored follow-up: Nelson-Aalen and Kaplan-Meier per leaf"
    evidence: ClassVar[str] = "event_time"
    provides: ClassVar[frozenset] = frozenset({"survival_curves", "influence"})
    #: The state holds a curve per leaf of the fitted tree.
    state_per_node: ClassVar[bool] = True
    #: The state's arrays with an entry per jump (sliced by node runs by
    #: :meth:`state_of_nodes`).
    jump_keys: ClassVar[tuple] = ("jump_index", "hazard", "survival", "greenwood")

    def state_of_nodes(self, state, nodes):
        """The runs of jumps (and last follow-up times) of ``nodes``
        (:func:`~treekit_core.builtins.survival_curves.jumps_of_nodes`)."""
        keys = tuple(key for key in self.jump_keys if key in state)
        return jumps_of_nodes(state, nodes, keys)

    def survival_bands(self, state, tree, nodes, grid):
        """(lower, upper): each of ``nodes``' 95% Kaplan-Meier band at the ``grid`` times
        (:func:`~treekit_core.builtins.survival_curves.survival_bands`, survfit's default),
        1 before the first training time. Called by ``predict_survival_function(...,
        return_conf_int=True)`` and the pictures."""
        if "greenwood" not in state:
            raise ValueError(
                "this model's curves were kept without Greenwood's variances (a model file "
                "written before the bands were kept): refit it for confidence bands"
            )
        return survival_bands(state, nodes, grid)

    fit_arguments: ClassVar[frozenset] = frozenset({"y", "entry"})

    def encode(self, y, n_samples, entry=None, **given):
        """Rows (event, time, entry): ``entry`` each row's delayed entry (fit's
        ``entry=`` or y's ``entry`` field; 0: followed from the start)."""
        y, field = split_entry(y)
        event, time = check_survival_y(y, n_samples)
        entry = check_entry(entry, time, field)
        if n_samples and not event.any():
            raise ValueError(
                "y holds no event: every one of its times is censored, so no curve can fall "
                "and no log-rank cut can be scored (scikit-survival refuses it too)"
            )
        return TargetRows(np.column_stack([event.astype(np.float64), time, entry]), None)

    def influence(self, rows):
        """Log-rank scores, coin's ``logrank_trafo`` with mid-ranks for ties (partykit's
        h(y) for censored follow-up): each row's Nelson-Aalen cumulative hazard at its
        own time less its event indicator, the hazard counted on the rows (unweighted)."""
        event, time = rows[:, 0], rows[:, 1]
        times, first, inverse = np.unique(time, return_index=True, return_inverse=True)
        at_risk = time.size - np.searchsorted(np.sort(time), times, side="left")
        if rows.shape[1] > 2 and (rows[:, 2] > 0).any():  # not yet entered at a time
            entered = rows[:, 2]
            late = entered[entered > 0]
            at_risk = at_risk - (late.size - np.searchsorted(np.sort(late), times, side="left"))
        events = np.bincount(inverse, weights=event, minlength=times.size)
        hazard = np.cumsum(events / at_risk)
        return (hazard[inverse] - event)[:, None]

    def node_values(self, statistics, weights, labeler):
        return _means(statistics, weights)[:, None], np.zeros(statistics.shape[0], np.int64)

    def node_risk(self, statistics, weights, labeler):
        raise NotImplementedError("the survival target has no node risk (see its docstring)")

    def sample_loss(self, rows, values, decisions, labeler):
        """The squared difference between the event indicator and the event share."""
        return (rows[:, 0] - values[:, 0]) ** 2

    def strata(self, rows, labeler):
        """Folds and bootstrap samples keep the share of events."""
        return (rows[:, 0] > 0).astype(np.int64)

    def category_order(self, sums, weights):
        return None

    def fit_state(self, y, rows, tree, memberships):
        """The grid of every distinct training time, which of them saw an event, and every
        leaf's Nelson-Aalen and Kaplan-Meier jumps (:func:`leaf_jumps`)."""
        event, time = rows[:, 0] > 0, rows[:, 1]
        grid = _time_grid(event, time)
        entry = rows[:, 2] if rows.shape[1] > 2 else None
        jumps = leaf_jumps(event, time, grid["grid"], *memberships, tree.n_nodes, entry=entry)
        return {**grid, **jumps}

    def check_state(self, state, tree) -> None:
        if not state:
            return  # (a survival estimator requires it: SurvivalEstimator._read_trees)
        size = _check_time_grid(state)
        check_jumps(state, tree.n_nodes, size, "target")

    def hazard_curves(self, state, tree, nodes, grid):
        """Cumulative hazard of each of ``nodes`` at the ``grid`` times."""
        return curves_at_times(state, nodes, grid, "hazard")

    def risk_scores(self, state, tree, nodes):
        """Each of ``nodes``' cumulative hazard summed over the training event times."""
        return risk_scores(state, nodes)

    def survival_curves(self, state, tree, nodes, grid):
        return curves_at_times(state, nodes, grid, "survival")

    def curve_steps(self, state, tree, nodes, which):
        """Each of ``nodes``' ``which`` curve ("hazard" or "survival") as its steps on the
        training grid (:func:`~treekit_core.builtins.survival_curves.curve_steps`): what
        survival estimators mix instead of dense curves."""
        return curve_steps(state, nodes, which)

    def check_tree(self, tree, labels) -> None:
        """Statistic columns (weighted events, follow-up and entry times, >= 0; files
        written before entry times were kept have the first two), events at most the
        weight, and one value per node, the event share in [0, 1]."""
        if tree.statistics.shape[1] != 2:
            check_statistics_width(tree, 3, "the weighted events, follow-up and entry times")
        if (tree.statistics < 0).any():
            raise ValueError("tree field 'statistics': negative events or follow-up")
        if (tree.statistics[:, 0] > tree.weight * (1 + 1e-9) + 1e-12).any():
            raise ValueError("tree field 'statistics': more events than weight at a node")
        if tree.value.shape[1] != 1:
            raise ValueError("tree field 'value' must hold one event share per node")


def _time_grid(event, time) -> dict:
    """Every distinct training time and whether an event happened at it, as a survival
    target's state keeps them (the estimator's ``unique_times_``, ``is_event_time_``)."""
    grid, has_event = unique_times(event, time)
    return {"grid": grid, "is_event_time": has_event.astype(np.float64)}


def _check_time_grid(state) -> int:
    """Refuse a model file's time grid that is not rising, or event flags not 0/1; the
    number of grid times."""
    size = (np.shape(state.get("grid", [])) or (0,))[0]
    grid = state_array(state, "grid", (size,), "target", minimum=0.0)
    if (np.diff(grid) <= 0).any():
        raise ValueError("model file: target.grid must rise")
    flags = state_array(state, "is_event_time", (size,), "target", integer=True)
    if ((flags != 0) & (flags != 1)).any():
        raise ValueError("model file: target.is_event_time must hold 0 or 1")
    return size
