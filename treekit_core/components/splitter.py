"""The splitter: finds the question a node asks."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from treekit_core.components.base import Component
from treekit_core.numerics import FEATURE_THRESHOLD  # part of the splitter contract

__all__ = ["FEATURE_THRESHOLD", "NODE_TEST_FIELDS", "Split", "Splitter", "Unsplit"]

#: The node fields of a splitter that tests hypotheses at its nodes (a conditional
#: inference tree's permutation tests): per feature of X, NaN where the node did not test
#: it, the test statistic, the p-value as the method reports it (adjusted for the number of
#: tests) and the unadjusted p-value. ``node_tests`` and the tree's text read them.
NODE_TEST_FIELDS = ("test_statistic", "test_p_value", "test_raw_p_value")


@attrs.define(slots=False)
class Split:
    """A question found by a splitter.

    ``question`` names a registered question kind (see
    :class:`treekit_core.components.Question`); its parameters, if it has any, go in
    ``node_fields`` under the kind's ``parameter_field``. ``improvement`` is the unweighted
    impurity drop. ``branch_shares`` is, per branch, the share of the node's known training
    weight that answers it (where a sample that cannot answer goes); None lets the
    propagation count it. A binary split may give ``node_fields["missing_left"]`` instead
    (read as the shares ``(missing_left, 1 - missing_left)``).
    """

    #: A split makes its node internal (an :class:`Unsplit` leaves it a leaf).
    is_leaf: ClassVar[bool] = False
    feature: int
    threshold: float
    improvement: float
    node_fields: dict = attrs.field(factory=dict)  #: per-node values the tree stores
    question: str = "threshold"
    n_branches: int = 2
    branch_shares: tuple | None = None

    def __attrs_post_init__(self):
        if self.branch_shares is None and "missing_left" in self.node_fields:
            share = float(self.node_fields.pop("missing_left"))
            if share == share:  # NaN: not given
                self.branch_shares = (share, 1.0 - share)


@attrs.define(slots=False)
class Unsplit:
    """What a splitter's ``find_split`` may return instead of None for a node it leaves a
    leaf while it has per-node values to keep there (a conditional inference tree's tests
    at a node where none was significant): the grow loop stores ``node_fields`` (names
    among :attr:`Splitter.node_field_names`) and makes the node a leaf."""

    is_leaf: ClassVar[bool] = True
    node_fields: dict = attrs.field(factory=dict)  #: per-node values the tree stores


@attrs.define(slots=False)
class Splitter(Component):
    """Finds the best question at a node.

    ``prepare`` runs once per fit and returns whatever the splitter precomputes (sorted
    orders, per-feature spreads); ``find_split`` runs once per node and returns a
    :class:`Split` or ``None`` when no admissible question exists.
    """

    kind: ClassVar[str] = "splitter"
    sees_features: ClassVar[bool] = True
    provides: ClassVar[frozenset] = frozenset({"axis_aligned", "fractional_weights"})

    node_field_names: ClassVar[tuple] = ()
    """Names of the per-node values this splitter puts in :attr:`Split.node_fields`. Read
    once per fit by the grow loop, which stores one column per name in the tree
    (``Tree.node_fields``), NaN at nodes that do not set it."""

    def companions(self) -> dict:
        """Components this splitter is meant to work with (kind -> instance), e.g. UDT's
        own propagation and evaluation with the same pdfs. Read by the conformance kit and
        the composition matrix. Default: none."""
        return {}

    def prepare(self, data, criterion, rules) -> Any:
        """Precompute what every node's search needs (sorted orders, spreads). Called once
        per grown tree, before the root, with the training data, the criterion and the
        resolved stopping rules; the result is passed to every :meth:`find_split`."""
        return None

    def find_split(self, state, node, rules):  # pragma: no cover - abstract
        """Return the best :class:`Split` for ``node`` (a :class:`treekit_core.Node`: the
        node's rows, their weights, statistics, weight, impurity, depth and candidate
        features) or None (an :class:`Unsplit` to keep per-node values at the leaf).
        ``state`` is what :meth:`prepare` returned; ``rules`` the
        resolved stopping rules (``treekit_core.engine.stopping.ResolvedRules``: honour
        ``rules.min_samples_leaf`` rows and ``rules.min_weight_leaf`` weight in every
        child). Called once per node that the stopping rules let split."""
        raise NotImplementedError

    def build_tree(self, composition, data, rng, rules):
        """Grow the whole tree in one call, or return None to let the core's node-by-node
        loop grow it. Called once per grown tree, before :meth:`prepare`, only when this
        splitter provides ``fused_builder`` and the propagator provides ``hard_partition``
        (the fused builder partitions rows itself). It must return the tree the loop would
        grow: best first under ``composition.stopping.max_leaf_nodes`` (or None to leave
        that to the loop). Default: None."""
        return None

    def grows_in_one_call(self, composition, data) -> bool:
        """Whether :meth:`build_tree` grows this composition's trees on ``data`` in one
        compiled call (which releases the GIL for the whole growth, so trees grow in
        parallel threads; the node-by-node loop is Python, and threads running it only
        contend). Called by forests once per fit, before the trees grow, to choose how to
        run them. Default: whether the splitter provides ``fused_builder`` (a builder may
        still decline some data; say so here when it does)."""
        return "fused_builder" in self.provides

    def training_leaves(self, tree, data):
        """The leaf each row of ``data`` reaches in ``tree`` (integers, one per row, in row
        order), where this splitter grew ``tree`` on ``data`` and can say so from what it
        kept of the growth (the rows' order) faster than a walk of X; None: the caller
        walks X. A row reaches one leaf, routed hard (a splitter whose answer for a row
        with a missing tested value could differ returns None). Called by gradient
        boosting once per grown tree, before its leaves are valued (every training row's
        leaf, every round), and by a regressor's fit once per tree after every tree grew,
        when it keeps its training rows' leaves for quantiles; the data they grow on then
        says so (``TrainingData.training_leaves_wanted``), so a splitter keeps what it
        needs only for trees whose leaves will be asked for, and may hand it over once
        (``treekit_core.builtins.keep_grown_rows``). Default: None."""
        return None

    def share_across_trees(self, data, n_threads: int = 1) -> None:
        """Precompute, from X alone, what every tree of a forest or of a boosting fit can
        share, into ``data.cache``, on up to ``n_threads`` threads (the fit's: a
        forest's ``n_jobs``, boosting's ``n_threads``). Called once per forest or
        boosting fit, before its trees grow (a forest's in parallel threads, which then do
        not each redo it). Default: nothing."""
