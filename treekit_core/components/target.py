"""The target: what a tree predicts, from what ``fit`` is given to what ``predict`` returns."""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.components.base import Component


@attrs.frozen
class TargetRows:
    """What :meth:`Target.encode` returns."""

    #: float64, n x S: one row of statistics per sample; a node's statistics are the
    #: weighted sums of its rows (the criterion scores them).
    rows: np.ndarray
    #: Names of what the tree decides among (class labels, ``classes_``), in the order of
    #: the decisions' indices; None for a target whose prediction is not a choice.
    labels: np.ndarray | None = None


@attrs.frozen
class MonotoneValue:
    """What :meth:`Target.monotone_value` returns: the value of a node that monotonic
    constraints order, as a ratio of linear functions of the node's weight and statistics
    (computed by the split searches for both sides of every candidate cut, so it must
    come from sums), and where the node's values hold it."""

    #: The numerator's coefficients of (weight, statistic 1, ..., statistic S).
    numerator: tuple = attrs.field(converter=tuple)
    #: The denominator's coefficients of (weight, statistic 1, ..., statistic S).
    denominator: tuple = attrs.field(converter=tuple)
    #: 1 when the value rises as the prediction the user constrains does; -1 when it falls
    #: (class labels order the first class's share, as scikit-learn does: P(second class)
    #: = 1 - it).
    sign: int = 1
    #: The column of :meth:`Target.node_values`' values that holds the value (clipped to a
    #: node's interval by :meth:`Target.clip_node_values`, read by the model-file check).
    column: int = 0


@attrs.define(slots=False)
class Target(Component):
    """What a tree predicts: it turns ``y`` into per-row statistics, a node's summed
    statistics into what the node stores, and that into what prediction returns; it says
    what pruning minimises, how folds and bootstrap samples are stratified, and what a model
    file's node statistics must satisfy.

    The defaults are those of a classification target, whose decision rule is the
    composition's labeler (:attr:`decides_with_labeler`): a node stores the labeler's
    distribution and decision, prediction returns the label of the decided index, and the
    risk and sample errors are the labeler's. A target that is not a choice among labels
    (the means of a measurement, a survival curve) sets ``decides_with_labeler = False``
    and overrides :meth:`node_values`, :meth:`decide`, :meth:`predictions`,
    :meth:`node_risk`, :meth:`sample_loss` and :meth:`strata`.
    """

    kind: ClassVar[str] = "target"
    provides: ClassVar[frozenset] = frozenset({"class_decisions", "node_risk"})

    evidence: ClassVar[str] = "one_hot"
    """The kind of rows :meth:`encode` writes. Read at fit: the criterion (and, when
    :attr:`decides_with_labeler`, the labeler) must read the same kind (their ``evidence``),
    or the composition is refused naming both."""

    fit_arguments: ClassVar[frozenset] = frozenset({"y"})
    """The arguments of ``fit`` that carry the target (``y``, ``counterexamples``,
    ``classes``) this target reads. Read by ``fit``, which refuses any other, naming this
    target and the argument."""

    nonnegative_response: ClassVar[bool] = False
    """True when :meth:`encode` refuses a negative ``y`` (counts, rates). Read by the
    regressor's scikit-learn tags (``positive_only``), so scikit-learn's checks give it
    the responses it accepts."""

    several_outputs: ClassVar[bool] = False
    """True when :meth:`encode` accepts a 2-D ``y`` of several outputs (scikit-learn's
    multi-output regression and classification, n x k), whose node values hold each
    output's values and whose :meth:`predictions` are n x k (class labels of several
    outputs: labels that are a list of one array per output). Read by the estimators'
    scikit-learn tags (``multi_output``), so scikit-learn's checks fit them on several
    outputs, and by fit, which then refuses a criterion that scores one output."""

    decides_with_labeler: ClassVar[bool] = True
    """Whether the composition's labeler turns node statistics into values and decisions
    (classification). Read at fit (the labeler's evidence is checked only then) and by
    ``predict`` (labels and abstentions, or :meth:`predictions`)."""

    decides_among_labels: ClassVar[bool | None] = None
    """Whether each decision is one of the labels :meth:`encode` names, so ``predict``
    returns labels (abstentions included), ``predict_proba`` the node values as a
    distribution over them and ``decide`` both. None (the default): as
    :attr:`decides_with_labeler`. True with ``decides_with_labeler = False`` declares a
    target that decides among its labels by its own rule (:meth:`decide` overridden: an
    ordinal target's median class), whose node values are a distribution over the labels.
    Read through :meth:`predicts_labels`."""

    def predicts_labels(self) -> bool:
        """Whether ``predict`` returns labels (:attr:`decides_among_labels`). Called by
        ``predict``, ``predict_proba``, ``decide``, ``score``, the model-file reader and
        the exporters, which refuse a decision rule they cannot reproduce."""
        if self.decides_among_labels is None:
            return bool(self.decides_with_labeler)
        return bool(self.decides_among_labels)

    def encode(self, y, n_samples: int, **given) -> TargetRows:  # pragma: no cover - abstract
        """Validate what ``fit`` was given and return the per-row statistics (and labels).
        Called once per fit, before anything else is allocated. ``y`` is fit's ``y`` (None
        when not given); ``given`` holds fit's other target arguments that were set
        (``counterexamples``, ``classes``; only those in :attr:`fit_arguments` reach it).
        Raise ValueError naming the argument and what was expected."""
        raise NotImplementedError

    def with_labels(self, labels) -> "Target":
        """The target to use with these ``labels`` (what :meth:`encode` returned, or what a
        model file holds): itself (the default), or, for a target whose arithmetic
        depends on its labels, one that knows them (class labels of several outputs: where
        each output's classes lie among the columns; ``class_labels`` given a 2-D y hands
        over to ``class_label_sets``). Called by fit right after :meth:`encode`, by the
        model-file reader before :meth:`check_tree` and by every refit of a fitted
        estimator's parameters (cross-validation copies, ``prune``)."""
        return self

    summarises_rows: ClassVar[bool] = False
    """False (the default) when a node's statistics are the weighted sums of its rows, so
    a split search may score cuts from running sums; True when :meth:`node_statistics`
    summarises a node's rows in a way no sum gives (a median): then only a criterion
    that searches cuts from the rows themselves can score this target's splits
    (:attr:`Criterion.row_search`), and the rows' evidence kind pairs the two. Read by the
    conformance kit."""

    def node_statistics(self, rows: np.ndarray, row_weights: np.ndarray) -> np.ndarray:
        """The statistics (S) of a node from its training rows (:meth:`encode`'s rows, n x S)
        and their weights at the node. Called by the grow loop for every node it makes and
        by the conformance kit. Default: the weighted sums ``row_weights @ rows``."""
        return row_weights @ rows

    def defines_value(self, statistics: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Whether the statistics and weight of each node define its value (a bool per
        node). Called by honest estimation with ``honest_prune_leaves``: a node with a child
        whose estimation rows define no value becomes a leaf (a treatment effect needs
        both arms). Default: weight > 0 (a node no row reached has no value of its own)."""
        return np.asarray(weights, dtype=np.float64) > 0

    def node_values(self, statistics: np.ndarray, weights: np.ndarray, labeler):
        """(values n_nodes x V, decisions n_nodes int64) of nodes with these summed
        ``statistics`` (n_nodes x S) and ``weights``. Called on every node after growing and
        pruning and when a model file is read (what a file holds is never trusted).
        Default: the labeler's distribution and its decision (-1: abstain)."""
        values = np.asarray(labeler.distribution(statistics, weights), dtype=np.float64)
        return values, np.asarray(labeler.decide(values), dtype=np.int64)

    def decide(self, values: np.ndarray, labeler) -> np.ndarray:
        """Decision index per sample from its values (leaf values mixed by the evaluator).
        Called at every prediction. Default: the labeler's decision."""
        return np.asarray(labeler.decide(values), dtype=np.int64)

    def predictions(self, values: np.ndarray, decisions: np.ndarray, labels) -> np.ndarray:
        """What ``predict`` returns for samples with these values and decisions (no
        abstention among them: the estimator fills those in). Called by ``predict``.
        Default: the label of each decision."""
        if labels is None:
            raise ValueError(
                f"target {self.name!r} predicts the label of each decision, but predict has "
                "no labels to take them from: a target that decides among its labels by its "
                "own rule declares decides_among_labels = True; one that predicts values "
                "overrides predictions"
            )
        return np.asarray(labels).take(decisions)

    def node_risk(self, statistics: np.ndarray, weights: np.ndarray, labeler) -> np.ndarray:
        """The loss of each node's own prediction on its training rows, in weight units (the
        risk cost-complexity pruning minimises, the errors pessimistic pruning estimates
        from). Called by the pruners. Default: the labeler's weighted errors."""
        return labeler.node_error(statistics, weights)

    def node_risks_in_order(self, rows: np.ndarray, weights: np.ndarray, node_rows, labeler):
        """:meth:`node_risk` of every node computed from its training rows, summed row by
        row in the order given: ``node_rows[t]`` indexes the rows of node t (``rows`` and
        ``weights`` are all of them; ``node_rows[0]`` is every row in file order). For a
        target that reproduces a peer's arithmetic to the last bit (rpart sums each
        node's rows in its own order, so its cp table's complexities depend on it). Called
        by the cost-complexity pruner's ``sequence="rpart"`` when every training row
        reaches one node. Default: None (the pruner uses :meth:`node_risk`)."""
        return None

    def influence(self, rows: np.ndarray) -> np.ndarray:
        """The response's influence function h(y) of every row (n x q), what a
        permutation test of independence between a feature and the response correlates
        the feature with (partykit's ``ytrafo``; Hothorn, Hornik & Zeileis 2006): a
        target that provides ``"influence"`` defines it. Called by splitters that choose
        features by such tests (conditional inference trees), once per fit on the whole
        learning sample. Default: refused (the splitter requires the capability, so a
        composition without it is refused before any fit)."""
        raise NotImplementedError(f"target {self.name!r} defines no influence function")

    def sample_loss(self, rows: np.ndarray, values: np.ndarray, decisions, labeler) -> np.ndarray:
        """Loss per sample (0..1 for a decision: 1 is an error, an abstention included) of
        predicting ``values`` / ``decisions`` for samples with these statistics ``rows``.
        Called by cross-validated pruning and the rejection rules (a loss below 0.5 counts
        as correct). Default: the labeler's sample errors."""
        return labeler.sample_errors(rows, decisions)

    def strata(self, rows: np.ndarray, labeler) -> np.ndarray:
        """An int64 stratum per row (folds and bootstrap samples keep the strata's
        proportions). Called by cross-validation and forests. Default: the labeler's class
        of each row."""
        return np.asarray(labeler.row_labels(rows), dtype=np.int64)

    def responses(self, rows: np.ndarray):
        """The response of every training row (a number), from the rows :meth:`encode`
        wrote, or None when the target has none to take quantiles of. Called once per fit
        of a regressor, which keeps them for ``predict(X, quantiles=...)``. Default: None."""
        return None

    def observed(self, rows: np.ndarray):
        """What every row observed, on the scale of what ``predict`` returns (a number per
        row), from the rows :meth:`encode` wrote, or None. Called by a regressor's
        ``score`` when y has several columns (rpart's ``cbind(time, events)``: the rate).
        Default: :meth:`responses`."""
        return self.responses(rows)

    def category_order(self, sums: np.ndarray, weights: np.ndarray):
        """A score per category (``sums``: the categories' summed statistics, one row each;
        ``weights``: their weights, all > 0) whose ascending order makes the best subset
        question "category in S" one of the prefixes of the ordered categories, or None
        when no such order is known (the subset search then tries every subset up to its
        limit, and past it orders by the share of the node's majority class). Called by
        the subset search once per node, with the categories of all the nominal features
        searched there stacked (one row each), so a category's score must depend on its
        own row only; None applies to every feature. Default: for two statistic columns,
        the share of the second (exact for two classes and any concave impurity: Breiman
        et al., theorem 4.5); else None."""
        if sums.shape[1] == 2:
            return np.divide(sums[:, 1], weights, out=np.zeros(len(weights)), where=weights > 0)
        return None

    def category_order_column(self, n_statistics: int):
        """The statistic column whose share of a category's weight is
        :meth:`category_order`'s score (``sums[:, j] / weights``, 0 for no weight); -1
        when :meth:`category_order` returns None for rows of this width (no order known);
        or None when the order is neither (then :meth:`category_order` is called). Read by
        the subset search once per node (and once per fit by the presorted builder, which
        asks subset questions only where this is not None), which then orders the
        categories in its compiled kernel instead of calling :meth:`category_order`; the
        conformance kit checks that the two agree. Default: where :meth:`category_order`
        is the default one, 1 for two statistic columns (the same order) and -1 otherwise;
        else None."""
        if type(self).category_order is Target.category_order:
            return 1 if n_statistics == 2 else -1
        return None

    def monotone_value(self, n_statistics: int):
        """The node value monotonic constraints order (a :class:`MonotoneValue`), or None
        when this target has none (then a composition with ``monotonic_cst`` is refused
        naming it). Called once per fit with monotonic constraints, when the composition
        is checked, with the width of the rows :meth:`encode` wrote; may raise ValueError
        saying why the data has no such value (class labels: more than two classes).
        Default: None."""
        return None

    def clip_node_values(self, values: np.ndarray, lower, upper, value: MonotoneValue):
        """``values`` (n_nodes x V, as :meth:`node_values` returns them) with each node's
        monotone value (``value``, what :meth:`monotone_value` returned) held within
        [lower, upper] and whatever depends on it made consistent. Called by every
        labelling of a tree grown under monotonic constraints (after growth, after pruning,
        on reading a model file), before the decisions are taken from the values.
        Default: column ``value.column`` clipped."""
        values = np.array(values, dtype=np.float64)
        values[:, value.column] = np.clip(values[:, value.column], lower, upper)
        return values

    def fit_state(self, y, rows: np.ndarray, tree, memberships) -> dict:
        """What the target keeps of the training data in the fitted tree (its
        ``component_state["target"]``, which model files keep and :meth:`check_state`
        checks when one is read): ``y`` as ``fit`` was given it, ``rows`` as :meth:`encode`
        wrote them without the rows of weight 0, ``memberships`` (rows, nodes, weights)
        each kept row's weight in each leaf it reaches. Called once per fit, after pruning,
        by the estimators that predict from such state (survival curves). Default: {}."""
        return {}

    state_per_node: ClassVar[bool] = False
    """True when :meth:`fit_state` keeps something per node (a survival curve per leaf),
    so a tree pruned from the grown one takes its nodes' part of the grown tree's state
    (:meth:`state_of_nodes`), the grown tree's state holding every node's. Read by the
    survival estimators when they keep the grown tree's state and by ``prune()``."""

    def state_of_nodes(self, state: dict, nodes: np.ndarray) -> dict:
        """The fitted state of a tree made of ``nodes`` of the tree ``state`` was fitted
        for (their ids there, in the new tree's node order), for a target whose state is
        per node (:attr:`state_per_node`). Called by ``prune()`` on the grown tree's
        state. Default: the state unchanged (a state not per node)."""
        return state

    def check_tree(self, tree, labels) -> None:
        """Raise ValueError naming the tree field when a model file's node statistics (or
        the values and decisions it holds) cannot come from this target with these
        ``labels``: their columns, signs, bounds. Called when a model file is read, after
        the tree's structure is checked and before anything runs on it. Default: accept."""
