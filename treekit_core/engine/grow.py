"""The grow loop: stop? -> split search -> propagate, depth first, left child first.

Node ids are assigned when a node is taken from the stack, which numbers nodes exactly as
scikit-learn's depth-first builder does.
"""

from __future__ import annotations

import attrs
import numpy as np

from treekit_core.engine.tree import LEAF, UNDEFINED_THRESHOLD, Tree

#: scikit-learn's EPSILON, the slack in the min_impurity_decrease comparison.
EPSILON = float(np.finfo(np.float64).eps)
#: A node whose impurity is at most this is pure. Larger than machine epsilon because with
#: fractional weights a pure node's impurity is rounding noise of a few 1e-16 (its class sums
#: and its weight are summed in different orders); any real impurity is far larger.
PURE_TOLERANCE = 1e-12


@attrs.define(eq=False)
class Node:
    """The training samples at one node while the tree grows."""

    rows: np.ndarray  #: int64 row ids into the training data
    row_weights: np.ndarray  #: float64 weight of each row at this node
    class_sums: np.ndarray  #: weighted evidence sums (K)
    weight: float
    impurity: float
    depth: int
    features: np.ndarray  #: candidate features for this node (int64)
    #: The node's box: (lower, upper) per feature from the axis-aligned tests on its path;
    #: a sample of the node's region satisfies lower < x <= upper.
    bounds: tuple = None

    @property
    def n_samples(self) -> int:
        return int(self.rows.shape[0])

    def effective_samples(self, original_weight: np.ndarray) -> float:
        """Rows counted by the fraction of their weight that reached this node: the row
        count under hard propagation, fewer under soft propagation, where fractional copies
        of rows spread over many nodes (C4.5 counts weight the same way)."""
        original = original_weight[self.rows]
        return float(
            np.where(
                original > 0, self.row_weights / np.where(original > 0, original, 1.0), 1.0
            ).sum()
        )


class _TreeArrays:
    """Growable per-node columns (lists; converted to arrays once at the end)."""

    def __init__(self, field_names):
        self.left, self.right, self.feature, self.threshold = [], [], [], []
        self.class_sums, self.weight, self.n_samples, self.impurity, self.depth = [], [], [], [], []
        self.fields = {name: [] for name in field_names}

    def add(self, parent, is_left, node: Node) -> int:
        node_id = len(self.left)
        if parent >= 0:
            (self.left if is_left else self.right)[parent] = node_id
        self.left.append(LEAF)
        self.right.append(LEAF)
        self.feature.append(LEAF)
        self.threshold.append(UNDEFINED_THRESHOLD)
        self.class_sums.append(node.class_sums)
        self.weight.append(node.weight)
        self.n_samples.append(node.n_samples)
        self.impurity.append(node.impurity)
        self.depth.append(node.depth)
        for values in self.fields.values():
            values.append(np.nan)
        return node_id

    def set_split(self, node_id, split) -> None:
        self.feature[node_id] = int(split.feature)
        self.threshold[node_id] = float(split.threshold)
        self.fields["improvement"][node_id] = float(split.improvement)
        for name, value in split.node_fields.items():
            self.fields[name][node_id] = value

    def to_tree(self, n_features, n_classes) -> Tree:
        n = len(self.left)
        return Tree(
            children_left=np.asarray(self.left, dtype=np.int64),
            children_right=np.asarray(self.right, dtype=np.int64),
            feature=np.asarray(self.feature, dtype=np.int64),
            threshold=np.asarray(self.threshold, dtype=np.float64),
            class_sums=np.asarray(self.class_sums, dtype=np.float64).reshape(n, n_classes),
            weight=np.asarray(self.weight, dtype=np.float64),
            n_samples=np.asarray(self.n_samples, dtype=np.int64),
            impurity=np.asarray(self.impurity, dtype=np.float64),
            depth=np.asarray(self.depth, dtype=np.int64),
            value=np.zeros((n, n_classes)),
            decision=np.zeros(n, dtype=np.int64),
            n_features=n_features,
            node_fields={k: stack_field(v) for k, v in self.fields.items()},
        )


def stack_field(values) -> np.ndarray:
    """Per-node values as one array; vector values (e.g. oblique coefficients) become rows,
    with NaN rows for nodes that have none."""
    width = next((np.size(v) for v in values if np.ndim(v) > 0), None)
    if width is None:
        return np.asarray(values, dtype=np.float64)
    out = np.full((len(values), width), np.nan)
    for i, v in enumerate(values):
        if np.ndim(v) > 0:
            out[i] = v
    return out


def node_statistics(evidence, rows, row_weights):
    """Weighted evidence sums and total weight of a node."""
    return row_weights @ evidence[rows], float(row_weights.sum())


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
    if "fused_builder" in splitter.provides and "hard_partition" in propagator.provides:
        tree = splitter.build_tree(composition, data, rng, rules)
        if tree is not None:
            if announce_split:
                _announce_splits(registry, tree)
            return tree
    impurity = criterion.compiled_impurity()
    params = criterion.impurity_params(data.n_classes)
    split_state = splitter.prepare(data, criterion, rules)
    propagation_state = propagator.prepare(data)
    feature_sampler = composition.feature_sampler
    fractional = propagator.produces_fractional_weights or data.has_missing

    arrays = _TreeArrays(("improvement",) + tuple(splitter.node_field_names))

    all_rows = np.arange(data.n_samples, dtype=np.int64)
    root_bounds = (np.full(data.n_features, -np.inf), np.full(data.n_features, np.inf))
    stack = [(all_rows, data.weight.copy(), 0, -1, False, root_bounds)]
    while stack:
        rows, row_weights, depth, parent, is_left, bounds = stack.pop()
        sums, weight = node_statistics(data.evidence, rows, row_weights)
        node = Node(
            rows,
            row_weights,
            sums,
            weight,
            float(impurity(sums, weight, params)),
            depth,
            feature_sampler.draw(rng, data.n_features),
            bounds,
        )
        node_id = arrays.add(parent, is_left, node)
        count = node.effective_samples(data.weight) if fractional else node.n_samples
        if (
            depth >= rules.max_depth
            or count < rules.min_samples_split
            or count < 2 * rules.min_samples_leaf
            or weight < 2 * rules.min_weight_leaf
            or node.impurity <= PURE_TOLERANCE
        ):
            continue
        split = splitter.find_split(split_state, node, rules)
        if split is None:
            continue
        weighted_drop = weight / rules.total_weight * split.improvement
        if weighted_drop + EPSILON < rules.min_impurity_decrease:
            continue
        if rules.min_gain is not None and split.improvement <= rules.min_gain:
            continue
        arrays.set_split(node_id, split)
        if announce_split:
            registry.plugin_manager.hook.treekit_node_split(
                node_id=node_id,
                depth=depth,
                feature=int(split.feature),
                threshold=float(split.threshold),
                improvement=float(split.improvement),
                n_samples=node.n_samples,
            )
        (left_rows, left_weights), (right_rows, right_weights) = propagator.propagate(
            propagation_state, data, node, split
        )
        left_bounds, right_bounds = child_bounds(bounds, split)
        stack.append((right_rows, right_weights, depth + 1, node_id, False, right_bounds))
        stack.append((left_rows, left_weights, depth + 1, node_id, True, left_bounds))
    return arrays.to_tree(data.n_features, data.n_classes)


def child_bounds(bounds, split):
    """The children's boxes: the left child's upper bound and the right child's lower
    bound on the split feature become the threshold."""
    lower, upper = bounds
    left_upper, right_lower = upper.copy(), lower.copy()
    if split.feature >= 0:
        left_upper[split.feature] = min(upper[split.feature], split.threshold)
        right_lower[split.feature] = max(lower[split.feature], split.threshold)
    return (lower, left_upper), (right_lower, upper)


def _announce_splits(registry, tree) -> None:
    """A splitter that grows the whole tree in one call announces its splits afterwards,
    in node order."""
    for node in np.flatnonzero(tree.children_left >= 0):
        registry.plugin_manager.hook.treekit_node_split(
            node_id=int(node),
            depth=int(tree.depth[node]),
            feature=int(tree.feature[node]),
            threshold=float(tree.threshold[node]),
            improvement=float(tree.node_fields["improvement"][node]),
            n_samples=int(tree.n_samples[node]),
        )
