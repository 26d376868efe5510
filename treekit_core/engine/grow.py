"""The grow loop: stop? -> split search -> propagate, depth first, first branch first, or
best first under ``max_leaf_nodes``.

Depth first, node ids are assigned when a node is taken from the stack, which numbers nodes
exactly as scikit-learn's depth-first builder does; best first, when its parent is split,
as scikit-learn's best-first builder does.
"""

from __future__ import annotations

import heapq

import attrs
import numpy as np

from treekit_core.engine.constraints import VALUE_LOWER, VALUE_UPPER, Constraints, child_intervals
from treekit_core.engine.questions import split_branches, training_shares
from treekit_core.engine.tree import Tree, TreeAssembler, narrow_box

#: A split whose heaviest child keeps more than 1 - this of the parent's weight is no split.
SHRINK_TOLERANCE = 1e-9
#: A tree may hold at most this many nodes per training sample and branch (plus the base):
#: a hard tree holds at most (samples - 1) x branches + 1, so only a composition that keeps
#: splitting nodes that barely shrink (fractional copies) reaches it.
NODE_BUDGET_PER_SAMPLE = 10
NODE_BUDGET_BASE = 1024


@attrs.define(eq=False)
class Node:
    """The training samples at one node while the tree grows: what a splitter's
    ``find_split(state, node, rules)`` is given for every node the stopping rules let split
    (public as ``treekit_core.Node``).

    ``rows`` index the training data the splitter's ``prepare`` saw (``data.X[node.rows]``,
    ``data.evidence[node.rows]``); ``row_weights`` are their weights here (a row's sample
    weight, times its share where it went down several branches: C4.5's fractional rows);
    ``statistics`` the target's statistics of the node (the weighted sums of its rows'
    evidence, width K) and ``weight`` their total weight; ``impurity`` the criterion's value
    of them; ``depth`` 0 at the root; ``features`` the candidate features the feature
    sampler drew for this node (a forest draws a subset per node; a splitter searches only
    these). A split must send rows down at least two branches and keep
    ``rules.min_samples_leaf`` rows (``rules.min_weight_leaf`` weight) in each."""

    rows: np.ndarray  #: int64 row ids into the training data
    row_weights: np.ndarray  #: float64 weight of each row at this node
    statistics: np.ndarray  #: weighted evidence sums (K)
    weight: float  #: total weight of the node's rows
    impurity: float  #: the criterion's impurity of ``statistics``
    depth: int  #: 0 at the root
    features: np.ndarray  #: candidate features for this node (int64)
    #: The node's box: (lower, upper) per feature from the axis-aligned tests on its path;
    #: a sample of the node's region satisfies lower < x <= upper.
    bounds: tuple = None
    #: Under monotonic constraints (else None): per feature of X, the direction the
    #: target's value must move in as the feature grows (1, -1; 0: free), float64.
    constraint_signs: np.ndarray = None
    #: Under monotonic constraints (else None): the node's value interval and the value's
    #: coefficients, as ``kernels.growth.within_bounds`` reads them. A splitter that
    #: provides ``monotonic_constraints`` admits a cut on feature f only where
    #: ``within_bounds(constraint_signs[f], value_limits, ...)`` holds.
    value_limits: np.ndarray = None
    #: The fit's random generator (the one the feature sampler draws from): a splitter
    #: that draws (the ``random`` splitter's cuts) draws from it, so a ``random_state``
    #: gives the same tree.
    rng: np.random.Generator = None

    def search_constraints(self, n_features: int) -> tuple:
        """(signs, limits) for a kernel that always takes them: the node's, or no
        constraint (signs 0, unbounded)."""
        if self.constraint_signs is None:
            return np.zeros(n_features), np.array([-np.inf, np.inf])
        return self.constraint_signs, self.value_limits

    @property
    def n_samples(self) -> int:
        return int(self.rows.shape[0])

    def effective_samples(self, original_weight: np.ndarray) -> float:
        """Rows counted by the fraction of their weight that reached this node: the row
        count under hard propagation, fewer under soft propagation, where fractional copies
        of rows spread over many nodes (C4.5 counts weight the same way)."""
        # every row at a node has a positive weight (the root leaves out the others)
        return float((self.row_weights / original_weight[self.rows]).sum())


def node_statistics(target, evidence, rows, row_weights):
    """A node's statistics (the target's: weighted sums of its rows' evidence unless the
    target summarises rows otherwise) and total weight."""
    return target.node_statistics(evidence[rows], row_weights), float(row_weights.sum())


def grow_tree(composition, data, rng: np.random.Generator) -> Tree:
    """Grow an unlabelled, unpruned tree on ``data`` with the composition's components:
    depth first, or with ``max_leaf_nodes`` best first (the leaf whose split improves most
    is split next, until the tree has that many leaves: scikit-learn's best-first builder,
    LightGBM's leaf-wise growth)."""
    splitter = composition.splitter
    rules = composition.stopping.resolve(data.n_samples, float(data.weight.sum()))
    registry = composition.registry
    announce_split = registry is not None and registry.hook_has_listeners("treekit_node_split")
    max_leaves = composition.stopping.max_leaf_nodes
    if composition.offers_fused_growth():  # a builder grows best first or declines
        tree = splitter.build_tree(composition, data, rng, rules)
        if tree is not None:
            if announce_split:
                _announce_splits(registry, tree)
            return tree
    grower = _NodeGrower(composition, data, rng, rules, announce_split)
    if max_leaves is None:
        # depth first: a node gets its id when taken from the stack (scikit-learn's
        # depth-first numbering), the first branch grown first
        stack = [grower.root()]
        while stack:
            found = grower.visit(stack.pop())
            if found is not None:
                stack.extend(reversed(grower.expand(found) or []))
    else:
        _best_first(grower, max_leaves)
    return grower.assembler.to_tree(grower.field_names)


def _best_first(grower, max_leaves: int) -> None:
    """Split the leaf whose split improves most, while the tree has fewer than
    ``max_leaves`` leaves (children get their ids when their parent is split, first branch
    first; equal improvements: the leaf found first). Terminates: every split adds at
    least one leaf, and the tree never exceeds ``max_leaves`` leaves."""
    leaves, order, frontier = 1, 0, []
    found = grower.visit(grower.root())
    if found is not None:
        heapq.heappush(frontier, (-found.gain, order, found))
    while frontier:
        _, _, found = heapq.heappop(frontier)
        if leaves + found.split.n_branches - 1 > max_leaves:
            continue  # a split with more branches may still fit; this one stays a leaf
        children = grower.expand(found)
        if children is None:
            continue
        leaves += len(children) - 1
        for child in [grower.visit(entry) for entry in children]:
            if child is not None:
                order += 1
                heapq.heappush(frontier, (-child.gain, order, child))


@attrs.define(eq=False)
class _Found:
    """A node the stopping rules let split, with the split its splitter found."""

    node: Node
    node_id: int
    split: object
    parent_entry: tuple
    count: float

    @property
    def gain(self) -> float:
        """What best-first growth ranks leaves by: the node's weight times its split's drop
        in impurity (the drop of the tree's weighted impurity; scikit-learn's improvement,
        up to the training weight)."""
        return self.node.weight * self.split.improvement


class _NodeGrower:
    """The node-by-node grower's state and its two steps: :meth:`visit` (a node from its
    rows: statistics, id, stopping rules, split search) and :meth:`expand` (the split's
    propagation and the children's entries)."""

    def __init__(self, composition, data, rng, rules, announce_split):
        # the stopping rules as the compiled grower reads them, checked by the same
        # functions (their plain Python versions): one definition for both growers
        from treekit_core.kernels.compiling import python_function
        from treekit_core.kernels.growth import accepts_split, bounded_value, may_split, rule_vector

        self.composition, self.data, self.rng, self.rules = composition, data, rng, rules
        self.announce_split = announce_split
        self.may_split = python_function(may_split)
        self.accepts_split = python_function(accepts_split)
        self.value_of = python_function(bounded_value)  # the searches' value, to the last bit
        constraints = composition.constraints
        self.monotone = (
            composition.target.monotone_value(data.n_statistics)
            if constraints.has_monotonic
            else None
        )
        self.signs = constraints.signs(self.monotone) if self.monotone is not None else None
        self.groups = constraints.groups(data.n_features) if constraints.has_interaction else None
        self.rule_values = rule_vector(rules)
        self.impurity = composition.criterion.compiled_impurity()
        self.params = composition.criterion.impurity_params(data.n_statistics)
        self.split_state = composition.splitter.prepare(data, composition.criterion, rules)
        self.propagation_state = composition.propagator.prepare(data)
        self.fractional = composition.propagator.produces_fractional_weights or data.has_missing
        self.assembler = TreeAssembler(data.n_features, data.n_statistics)
        self.widest = 2
        splitter, propagator = composition.splitter, composition.propagator
        self.field_names = (
            ("improvement",)
            + tuple(name for name in splitter.node_field_names if name != "missing_left")
            + tuple(propagator.node_field_names)
            + ((VALUE_LOWER, VALUE_UPPER) if self.monotone is not None else ())
        )

    def root(self) -> tuple:
        """The root's entry. An entry: rows, their weights, depth, parent, branch, box, the
        value interval (monotonic constraints), the features asked on the path (interaction
        constraints) and (statistics, weight) of the node where its parent summed them
        (None: neither yet; statistics None: the weight only, summed for the parent's
        shrink test). A zero-weight row is a removed row (a forest's out-of-bag rows): it
        places no threshold, counts towards no minimum and makes no leaf."""
        data = self.data
        all_rows = np.flatnonzero(data.weight > 0).astype(np.int64)
        bounds = (np.full(data.n_features, -np.inf), np.full(data.n_features, np.inf))
        return (
            all_rows,
            data.weight[all_rows].copy(),
            0,
            -1,
            0,
            bounds,
            (-np.inf, np.inf),
            frozenset(),
            None,
        )

    def visit(self, entry) -> _Found | None:
        """Add the entry's node to the tree; its split when the stopping rules let it split
        and the splitter finds one they accept, else None (a leaf)."""
        composition, data = self.composition, self.data
        rows, row_weights, depth, parent, branch, bounds, interval, used, known = entry
        if known is None:
            sums, weight = node_statistics(composition.target, data.evidence, rows, row_weights)
        elif known[0] is None:  # the parent summed the weight only
            sums, weight = (
                composition.target.node_statistics(data.evidence[rows], row_weights),
                known[1],
            )
        else:
            sums, weight = known
        features = composition.feature_sampler.draw(self.rng, data.n_features)
        if self.groups is not None:
            features = features[
                Constraints.allowed_features(self.groups, used, data.n_features)[features]
            ]
        node = Node(
            rows,
            row_weights,
            sums,
            weight,
            float(self.impurity(sums, weight, self.params)) if weight > 0 else 0.0,
            depth,
            features,
            bounds,
            rng=self.rng,
        )
        node_id = self.assembler.add_node(
            parent, branch, sums, weight, node.n_samples, node.impurity, depth
        )
        if self.monotone is not None:
            node.constraint_signs = self.signs
            node.value_limits = Constraints.limits(self.monotone, *interval)
            self.assembler.set_fields(node_id, {VALUE_LOWER: interval[0], VALUE_UPPER: interval[1]})
        count = node.effective_samples(data.weight) if self.fractional else node.n_samples
        if not self.may_split(count, weight, node.impurity, depth, self.rule_values):
            return None
        split = composition.splitter.find_split(self.split_state, node, self.rules)
        if split is not None and split.is_leaf:  # an Unsplit: a leaf, the values kept
            self.assembler.set_fields(node_id, split.node_fields)
            return None
        if split is None or not self.accepts_split(split.improvement, weight, self.rule_values):
            return None
        return _Found(node, node_id, split, entry, count)

    def expand(self, found: _Found) -> list | None:
        """Split the found node: its rows propagated down the split's branches, the
        question set; the children's entries, first branch first, or None where the split
        does not shrink every child (the node stays a leaf)."""
        composition, data, registry = self.composition, self.data, self.composition.registry
        node, node_id, split = found.node, found.node_id, found.split
        _, _, depth, _, _, bounds, interval, used, _ = found.parent_entry
        question = registry.question(split.question)
        if split.branch_shares is None:
            split.branch_shares = tuple(
                training_shares(
                    split_branches(data.X, node.rows, split, question),
                    node.row_weights,
                    split.n_branches,
                )
            )
        children = composition.propagator.propagate(self.propagation_state, data, node, split)
        question = registry.question(split.question)  # the propagator may re-ask it
        if len(children) != split.n_branches:
            raise RuntimeError(
                f"propagator {composition.propagator.name!r} returned {len(children)} branches "
                f"for a {split.question!r} split with {split.n_branches}"
            )
        # Termination: a split must leave every child lighter than its parent; one that
        # sends (nearly) all the weight down one branch is no split, and the node stays a
        # leaf.
        child_totals = [float(child_weights.sum()) for _, child_weights in children]
        if max(child_totals) >= node.weight * (1.0 - SHRINK_TOLERANCE):
            return None
        self.assembler.set_question(
            node_id,
            question,
            split.feature,
            split.threshold,
            split.branch_shares,
            {"improvement": float(split.improvement), **split.node_fields},
        )
        if self.announce_split:
            registry.plugin_manager.hook.treekit_node_split(
                node_id=node_id,
                depth=depth,
                feature=int(split.feature),
                threshold=float(split.threshold),
                improvement=float(split.improvement),
                n_samples=node.n_samples,
            )
        self.widest = max(self.widest, split.n_branches)
        budget = NODE_BUDGET_PER_SAMPLE * data.n_samples * self.widest + NODE_BUDGET_BASE
        if len(self.assembler.children) + split.n_branches > budget:
            raise RuntimeError(
                f"the tree outgrew {budget} nodes ({NODE_BUDGET_PER_SAMPLE} x {data.n_samples} "
                f"samples x {self.widest} branches): the composition {composition.describe()} "
                "keeps splitting nodes that barely shrink; set max_depth, min_samples_leaf or "
                "min_impurity_decrease"
            )
        boxes = narrow_box(bounds, question, split.feature, split.threshold, split.n_branches)
        intervals = [interval] * split.n_branches
        known = [(None, total) for total in child_totals]  # each child's weight, summed once
        if self.monotone is not None and split.n_branches == 2:
            # the children's statistics (kept for when they are grown) and unclipped values
            known = [node_statistics(composition.target, data.evidence, *c) for c in children]
            left, right = (self.value_of(node.value_limits, *stats) for stats in known)
            intervals = child_intervals(self.signs[split.feature], *interval, left, right)
        path = used | {int(split.feature)}
        return [
            (*children[b], depth + 1, node_id, b, boxes[b], intervals[b], path, known[b])
            for b in range(split.n_branches)
        ]


def _announce_splits(registry, tree) -> None:
    """A splitter that grows the whole tree in one call announces its splits afterwards,
    in node order."""
    for node in np.flatnonzero(~tree.is_leaf):
        registry.plugin_manager.hook.treekit_node_split(
            node_id=int(node),
            depth=int(tree.depth[node]),
            feature=int(tree.feature[node]),
            threshold=float(tree.threshold[node]),
            improvement=float(tree.node_fields["improvement"][node]),
            n_samples=int(tree.n_samples[node]),
        )
