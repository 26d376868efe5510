"""The grow loop: stop? -> split search -> propagate, depth first, first branch first.

Node ids are assigned when a node is taken from the stack, which numbers nodes exactly as
scikit-learn's depth-first builder does.
"""

from __future__ import annotations

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
    """Grow an unlabelled, unpruned tree on ``data`` with the composition's components."""
    criterion, splitter, propagator = (
        composition.criterion,
        composition.splitter,
        composition.propagator,
    )
    rules = composition.stopping.resolve(data.n_samples, float(data.weight.sum()))
    registry = composition.registry
    announce_split = registry is not None and registry.hook_has_listeners("treekit_node_split")
    if composition.offers_fused_growth():
        tree = splitter.build_tree(composition, data, rng, rules)
        if tree is not None:
            if announce_split:
                _announce_splits(registry, tree)
            return tree
    # the stopping rules as the compiled grower reads them, checked by the same functions
    # (their plain Python versions): one definition for both growers
    from treekit_core.kernels.compiling import python_function
    from treekit_core.kernels.growth import accepts_split, bounded_value, may_split, rule_vector

    may_split, accepts_split = python_function(may_split), python_function(accepts_split)
    value_of = python_function(bounded_value)  # the searches' value, to the last bit
    constraints = composition.constraints
    monotone = (
        composition.target.monotone_value(data.n_statistics) if constraints.has_monotonic else None
    )
    signs = constraints.signs(monotone) if monotone is not None else None
    groups = constraints.groups(data.n_features) if constraints.has_interaction else None
    rule_values = rule_vector(rules)
    impurity = criterion.compiled_impurity()
    params = criterion.impurity_params(data.n_statistics)
    split_state = splitter.prepare(data, criterion, rules)
    propagation_state = propagator.prepare(data)
    feature_sampler = composition.feature_sampler
    fractional = propagator.produces_fractional_weights or data.has_missing

    assembler = TreeAssembler(data.n_features, data.n_statistics)
    widest = 2
    field_names = (
        ("improvement",)
        + tuple(name for name in splitter.node_field_names if name != "missing_left")
        + tuple(propagator.node_field_names)
        + ((VALUE_LOWER, VALUE_UPPER) if monotone is not None else ())
    )

    # a zero-weight row is a removed row (a forest's out-of-bag rows): it places no
    # threshold, counts towards no minimum and makes no leaf
    all_rows = np.flatnonzero(data.weight > 0).astype(np.int64)
    root_bounds = (np.full(data.n_features, -np.inf), np.full(data.n_features, np.inf))
    # a stack entry: rows, their weights, depth, parent, branch, box, the value interval
    # (monotonic constraints), the features asked on the path (interaction constraints)
    # and (statistics, weight) of the node where its parent summed them (None: neither yet;
    # statistics None: the weight only, summed for the parent's shrink test)
    unbounded = (-np.inf, np.inf)
    stack = [
        (
            all_rows,
            data.weight[all_rows].copy(),
            0,
            -1,
            0,
            root_bounds,
            unbounded,
            frozenset(),
            None,
        )
    ]
    while stack:
        rows, row_weights, depth, parent, branch, bounds, interval, used, known = stack.pop()
        if known is None:
            sums, weight = node_statistics(composition.target, data.evidence, rows, row_weights)
        elif known[0] is None:  # the parent summed the weight only
            sums, weight = (
                composition.target.node_statistics(data.evidence[rows], row_weights),
                known[1],
            )
        else:
            sums, weight = known
        features = feature_sampler.draw(rng, data.n_features)
        if groups is not None:
            features = features[
                Constraints.allowed_features(groups, used, data.n_features)[features]
            ]
        node = Node(
            rows,
            row_weights,
            sums,
            weight,
            float(impurity(sums, weight, params)) if weight > 0 else 0.0,
            depth,
            features,
            bounds,
        )
        node_id = assembler.add_node(
            parent, branch, sums, weight, node.n_samples, node.impurity, depth
        )
        if monotone is not None:
            node.constraint_signs = signs
            node.value_limits = Constraints.limits(monotone, *interval)
            assembler.set_fields(node_id, {VALUE_LOWER: interval[0], VALUE_UPPER: interval[1]})
        count = node.effective_samples(data.weight) if fractional else node.n_samples
        if not may_split(count, weight, node.impurity, depth, rule_values):
            continue
        split = splitter.find_split(split_state, node, rules)
        if split is None or not accepts_split(split.improvement, weight, rule_values):
            continue
        question = registry.question(split.question)
        if split.branch_shares is None:
            split.branch_shares = tuple(
                training_shares(
                    split_branches(data.X, rows, split, question), row_weights, split.n_branches
                )
            )
        children = propagator.propagate(propagation_state, data, node, split)
        question = registry.question(split.question)  # the propagator may re-ask it
        if len(children) != split.n_branches:
            raise RuntimeError(
                f"propagator {propagator.name!r} returned {len(children)} branches for a "
                f"{split.question!r} split with {split.n_branches}"
            )
        # Termination: a split must leave every child lighter than its parent; one that sends
        # (nearly) all the weight down one branch is no split, and the node stays a leaf.
        child_totals = [float(child_weights.sum()) for _, child_weights in children]
        if max(child_totals) >= weight * (1.0 - SHRINK_TOLERANCE):
            continue
        assembler.set_question(
            node_id,
            question,
            split.feature,
            split.threshold,
            split.branch_shares,
            {"improvement": float(split.improvement), **split.node_fields},
        )
        if announce_split:
            registry.plugin_manager.hook.treekit_node_split(
                node_id=node_id,
                depth=depth,
                feature=int(split.feature),
                threshold=float(split.threshold),
                improvement=float(split.improvement),
                n_samples=node.n_samples,
            )
        widest = max(widest, split.n_branches)
        budget = NODE_BUDGET_PER_SAMPLE * data.n_samples * widest + NODE_BUDGET_BASE
        if len(assembler.children) + split.n_branches > budget:
            raise RuntimeError(
                f"the tree outgrew {budget} nodes ({NODE_BUDGET_PER_SAMPLE} x {data.n_samples} "
                f"samples x {widest} branches): the composition {composition.describe()} keeps "
                "splitting nodes that barely shrink; set max_depth, min_samples_leaf or "
                "min_impurity_decrease"
            )
        boxes = narrow_box(bounds, question, split.feature, split.threshold, split.n_branches)
        intervals = [interval] * split.n_branches
        known = [(None, total) for total in child_totals]  # each child's weight, summed once
        if monotone is not None and split.n_branches == 2:
            # the children's statistics (kept for when they are grown) and unclipped values
            known = [node_statistics(composition.target, data.evidence, *c) for c in children]
            left, right = (value_of(node.value_limits, *stats) for stats in known)
            intervals = child_intervals(signs[split.feature], *interval, left, right)
        path = used | {int(split.feature)}
        for b in range(split.n_branches - 1, -1, -1):  # the first branch is grown first
            child_rows, child_weights = children[b]
            stack.append(
                (
                    child_rows,
                    child_weights,
                    depth + 1,
                    node_id,
                    b,
                    boxes[b],
                    intervals[b],
                    path,
                    known[b],
                )
            )
    return assembler.to_tree(field_names)


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
