"""C4.5's error-based (pessimistic) pruning, as Weka's J48 (docs/algorithms.md section 1.2).

A leaf's estimated errors are U = E + addErrs(N, E) with E its training errors (as the
labeler counts them) among N weighted samples. Bottom-up, a node becomes a leaf when its
leaf estimate is at most the subtree's (+0.1) and at most its largest branch's (+0.1); else
its largest branch replaces it (subtree raising) when that is at most the subtree's + 0.1,
and the node's training data is sent through the raised branch. Before pruning, subtrees
that do not reduce training errors are collapsed. Fractional weights need no change.
"""

from __future__ import annotations

import math
from typing import ClassVar

import attrs
import numpy as np

from treekit_core.components import Pruner, Split
from treekit_core.engine.grow import Node
from treekit_core.engine.questions import split_branches, training_shares
from treekit_core.engine.tree import NODE_WIDE_FIELDS, Tree, TreeAssembler, narrow_box

#: Weka's comparison tolerance (Utils.SMALL).
SMALL = 1e-6


def add_errors(n: float, e: float, confidence: float) -> float:
    """Extra errors of the upper confidence bound (Weka's ``Stats.addErrs``)."""
    from scipy.special import ndtri

    if e < 1:
        base = n * (1 - confidence ** (1 / n))
        if e == 0:
            return base
        return base + e * (add_errors(n, 1, confidence) - base)
    if e + 0.5 >= n:
        return max(n - e, 0.0)
    z = float(ndtri(1 - confidence))
    f = (e + 0.5) / n
    r = (f + z * z / (2 * n) + z * math.sqrt(f / n - f * f / n + z * z / (4 * n * n))) / (
        1 + z * z / n
    )
    return r * n - e


@attrs.define(eq=False)
class _Node:
    """Mutable node while pruning: the question, children and the data reaching it."""

    question: object  #: the Question instance (None at a leaf)
    feature: int
    threshold: float
    fields: dict
    shares: tuple
    children: list | None
    rows: np.ndarray
    row_weights: np.ndarray
    bounds: tuple = None
    sums: np.ndarray = None
    weight: float = 0.0
    #: training and estimated errors of the node as a leaf, kept until its data changes
    #: (collapsing and pruning ask for them at every level above)
    leaf_errors: float | None = None
    leaf_estimate: float | None = None

    @property
    def is_leaf(self) -> bool:
        return self.children is None


class _Pruning:
    def __init__(self, pruner, context):
        self.pruner = pruner
        self.context = context
        self.data = context.data
        self.labeler, self.target = context.labeler, context.target
        self.propagator = context.composition.propagator
        self.propagation_state = self.propagator.prepare(self.data)

    # -- data through the tree ------------------------------------------------------
    def split_rows(self, node: _Node, rows, row_weights, keep_shares: bool = False):
        """The rows of each branch of ``node``. As J48 (resetDistribution), a row that
        cannot answer is shared by the branches' shares of *these* rows' known weight, so a
        raised subtree re-shares missing values by the data it now receives; with
        ``keep_shares`` the node keeps those shares (they decide predictions too)."""
        split = self.split_of(node)
        shares = training_shares(
            split_branches(self.data.X, rows, split, node.question), row_weights, split.n_branches
        )
        split.branch_shares = tuple(shares)
        if keep_shares:
            node.shares = split.branch_shares
        probe = Node(rows, row_weights, None, 0.0, 0.0, 0, None, node.bounds)
        return self.propagator.propagate(self.propagation_state, self.data, probe, split)

    @staticmethod
    def split_of(node: _Node) -> Split:
        return Split(
            node.feature,
            node.threshold,
            0.0,
            dict(node.fields),
            question=node.question.name,
            n_branches=len(node.shares),
            branch_shares=node.shares,
        )

    def child_bounds(self, node: _Node):
        split = self.split_of(node)
        return narrow_box(
            node.bounds, node.question, split.feature, split.threshold, split.n_branches
        )

    def statistics(self, rows, row_weights):
        sums = row_weights @ self.data.evidence[rows]
        return sums, float(row_weights.sum())

    def set_data(self, node: _Node, rows, row_weights, bounds) -> None:
        node.rows, node.row_weights, node.bounds = rows, row_weights, bounds
        node.sums, node.weight = self.statistics(rows, row_weights)
        node.leaf_errors = node.leaf_estimate = None

    def node_errors(self, node: _Node) -> float:
        if node.leaf_errors is None:
            node.leaf_errors = self.errors(node.sums, node.weight)
        return node.leaf_errors

    def node_estimate(self, node: _Node) -> float:
        if node.leaf_estimate is None:
            errors = self.node_errors(node)
            node.leaf_estimate = self.estimated(node.sums, node.weight, errors)
        return node.leaf_estimate

    def fill_errors(self, root: _Node) -> None:
        """The training errors as a leaf of every node under ``root`` that has none yet,
        from one call of the labeler (a call per node would cost more than the pruning)."""
        waiting, stack = [], [root]
        while stack:
            node = stack.pop()
            if node.leaf_errors is None:
                waiting.append(node)
            stack.extend(node.children or ())
        weighed = [node for node in waiting if node.weight > 0]
        for node in waiting:
            node.leaf_errors = 0.0
        if weighed:
            errors = self.target.node_risk(
                np.stack([node.sums for node in weighed]),
                np.array([node.weight for node in weighed]),
                self.labeler,
            )
            for node, error in zip(weighed, errors, strict=True):
                node.leaf_errors = float(error)

    def errors(self, sums, weight) -> float:
        if weight <= 0:
            return 0.0
        return float(self.target.node_risk(sums[None, :], np.array([weight]), self.labeler)[0])

    def estimated(self, sums, weight, errors: float | None = None) -> float:
        """U = E + addErrs(N, E); ``errors`` E when already known."""
        if weight <= 0:
            return 0.0
        e = self.errors(sums, weight) if errors is None else errors
        return e + add_errors(weight, e, self.pruner.confidence_factor)

    # Every walk below is a loop over an explicit stack, not a recursion: a grown tree may
    # be thousands of levels deep (Python's recursion limit is 1000).

    def build(self, tree: Tree, rows, row_weights, bounds) -> _Node:
        """The pruning nodes of ``tree`` with the data reaching each."""
        root = None
        stack = [(0, rows, row_weights, bounds, None, 0)]
        while stack:
            node_id, rows, row_weights, bounds, parent, branch = stack.pop()
            fields = {k: v[node_id] for k, v in tree.node_fields.items()}
            node = _Node(
                tree.question_of(node_id),
                int(tree.feature[node_id]),
                float(tree.threshold[node_id]),
                fields,
                tuple(tree.shares(node_id)),
                None,
                rows,
                row_weights,
                bounds,
            )
            self.set_data(node, rows, row_weights, bounds)
            if parent is None:
                root = node
            else:
                parent.children[branch] = node
            kids = tree.children(node_id)
            if kids.size:
                branches = self.split_rows(node, rows, row_weights, keep_shares=True)
                boxes = self.child_bounds(node)
                node.children = [None] * kids.size
                stack.extend(
                    (int(child), r, w, box, node, b)
                    for b, (child, (r, w), box) in reversed(
                        list(enumerate(zip(kids, branches, boxes, strict=True)))
                    )
                )
        return root

    def redistribute(self, node: _Node, rows, row_weights, bounds) -> None:
        stack = [(node, rows, row_weights, bounds)]
        while stack:
            node, rows, row_weights, bounds = stack.pop()
            self.set_data(node, rows, row_weights, bounds)
            if not node.is_leaf:
                branches = self.split_rows(node, rows, row_weights, keep_shares=True)
                stack.extend(
                    (child, r, w, box)
                    for child, (r, w), box in zip(
                        node.children, branches, self.child_bounds(node), strict=True
                    )
                )

    @staticmethod
    def _branch_sum(root, expand, leaf_value) -> float:
        """The sum over the leaves below ``root`` of ``leaf_value(item)``, where
        ``expand(item)`` gives an item's children (None at a leaf), added up as the
        recursive ``sum(children's sums)`` adds them (the same float), without recursion.
        Items are expanded breadth first and dropped once expanded, so only the frontier's
        data is held."""
        items, children, values = [root], [None], [0.0]
        i = 0
        while i < len(items):
            kids = expand(items[i])
            if kids is None:
                values[i] = leaf_value(items[i])
            else:
                start = len(items)
                items.extend(kids)
                children[i] = range(start, len(items))
                children.extend([None] * len(kids))
                values.extend([0.0] * len(kids))
            items[i] = None
            i += 1
        for i in range(len(values) - 1, -1, -1):  # children have larger indices
            if children[i] is not None:
                values[i] = sum(values[j] for j in children[i])
        return values[0]

    # -- J48's procedures -----------------------------------------------------------
    def collapse(self, root: _Node) -> None:
        # top-down, a node's subtree is still the grown one when it is asked: the subtree
        # sums, computed once bottom-up, stay valid through the whole pass
        order, stack = [], [root]
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(node.children or ())
        subtree_errors = {}
        for node in reversed(order):  # children before parents
            subtree_errors[id(node)] = (
                self.node_errors(node)
                if node.is_leaf
                else sum(subtree_errors[id(child)] for child in node.children)
            )
        stack = [root]
        while stack:
            node = stack.pop()
            if node.is_leaf:
                continue
            if subtree_errors[id(node)] >= self.node_errors(node) - 1e-3:
                node.children = None
            else:
                stack.extend(node.children)

    def estimated_errors(self, node: _Node) -> float:
        return self._branch_sum(node, lambda n: n.children, self.node_estimate)

    def estimated_errors_for_branch(self, node: _Node, rows, row_weights) -> float:
        def expand(item):
            node, rows, row_weights = item
            if node.is_leaf:
                return None
            branches = self.split_rows(node, rows, row_weights)
            return [(child, r, w) for child, (r, w) in zip(node.children, branches, strict=True)]

        return self._branch_sum(
            (node, rows, row_weights),
            expand,
            lambda item: self.estimated(*self.statistics(item[1], item[2])),
        )

    def prune(self, root: _Node) -> None:
        # bottom-up, children left to right, as J48's recursion; a node whose largest
        # branch was raised into it is pruned again (its new children first). Each raise
        # replaces a subtree by one of its branches, a strictly smaller subtree, so the
        # loop ends.
        stack = [(root, False)]
        while stack:
            node, children_done = stack.pop()
            if node.is_leaf:
                continue
            if not children_done:
                stack.append((node, True))
                stack.extend((child, False) for child in reversed(node.children))
                continue
            if self.prune_node(node):
                stack.append((node, False))

    def prune_node(self, node: _Node) -> bool:
        """J48's decision at ``node``, its children pruned: keep the subtree, make it a
        leaf, or raise its largest branch into it (True: to be pruned again)."""
        largest = int(np.argmax([child.weight for child in node.children]))
        if self.pruner.subtree_raising:
            errors_largest = self.estimated_errors_for_branch(
                node.children[largest], node.rows, node.row_weights
            )
        else:
            errors_largest = math.inf
        errors_leaf = self.node_estimate(node)
        errors_tree = self.estimated_errors(node)
        if errors_leaf <= errors_tree + 0.1 + SMALL and errors_leaf <= errors_largest + 0.1 + SMALL:
            node.children = None
            return False
        if errors_largest <= errors_tree + 0.1 + SMALL:
            branch = node.children[largest]
            node.question, node.feature, node.threshold = (
                branch.question,
                branch.feature,
                branch.threshold,
            )
            node.fields, node.shares, node.children = branch.fields, branch.shares, branch.children
            self.redistribute(node, node.rows, node.row_weights, node.bounds)
            self.fill_errors(node)
            return True
        return False

    # -- back to arrays -------------------------------------------------------------
    def to_tree(self, root: _Node, template: Tree) -> Tree:
        impurity = self.context.criterion.compiled_impurity()
        params = self.context.criterion.impurity_params(self.data.n_statistics)
        assembler = TreeAssembler(template.n_features, template.n_statistics)

        stack = [(root, -1, 0, 0)]  # depth first, first branch first, as the grown tree
        while stack:
            node, parent, branch, depth = stack.pop()
            sums = np.ascontiguousarray(node.sums)
            node_id = assembler.add_node(
                parent,
                branch,
                sums,
                node.weight,
                node.rows.shape[0],
                float(impurity(sums, node.weight, params)) if node.weight > 0 else 0.0,
                depth,
            )
            assembler.set_fields(
                node_id,
                {name: node.fields[name] for name in NODE_WIDE_FIELDS if name in node.fields},
            )
            if node.is_leaf:
                continue
            assembler.set_question(
                node_id, node.question, node.feature, node.threshold, node.shares, node.fields
            )
            children = list(enumerate(node.children))
            stack.extend((child, node_id, b, depth + 1) for b, child in reversed(children))

        tree = assembler.to_tree(tuple(template.node_fields), template.component_state)
        tree.relabel(self.context.target, self.labeler)
        return tree


def _check_confidence(inst, attribute, value):
    if not (isinstance(value, (int, float)) and 0 < value <= 0.5):
        raise ValueError(f"confidence_factor must be in (0, 0.5], got {value!r}")


@attrs.define(slots=False)
class Pessimistic(Pruner):
    """J48's pruning. ``unpruned=True`` only collapses (J48's -U)."""

    name: ClassVar[str] = "pessimistic"
    description: ClassVar[str] = (
        "C4.5 / J48 error-based pruning with confidence factor and subtree raising"
    )
    # the binomial bound counts misclassified rows: a regression tree has none
    requires: ClassVar[dict] = {"target": frozenset({"class_decisions"})}
    confidence_factor: float = attrs.field(default=0.25, validator=_check_confidence)
    subtree_raising: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))
    collapse: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))
    unpruned: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))

    def prune(self, tree, context):
        work = _Pruning(self, context)
        d = context.data.n_features
        root = work.build(
            tree,
            np.arange(context.data.n_samples, dtype=np.int64),
            context.data.weight.copy(),
            (np.full(d, -np.inf), np.full(d, np.inf)),
        )
        work.fill_errors(root)
        if self.collapse:
            work.collapse(root)
        if not self.unpruned:
            work.prune(root)
        return work.to_tree(root, tree)
