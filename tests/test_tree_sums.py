"""The compiled per-node passes over a fitted tree (kernels/tree_sums.py): subtree sums and
every node's impurity, equal to the loops they replace."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_core import TreeClassifier, TreeRegressor
from treekit_core.engine.tree import Tree
from treekit_core.estimators.honesty import node_impurities


def subtree_sums_by_hand(tree, values):
    """Each node's value plus its children's subtree sums, children in their order (the
    float sum a loop over the children makes), by recursion."""
    values = np.asarray(values)
    out = values.copy()
    start, ids = tree.child_start, tree.child_ids

    def total(node):
        sum_ = values[node].copy() if values.ndim > 1 else values[node]
        for position in range(start[node], start[node + 1]):
            sum_ = sum_ + total(int(ids[position]))
        out[node] = sum_
        return sum_

    total(0)
    return out


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n=st.integers(2, 200),
    columns=st.integers(1, 3),
    integers=st.booleans(),
)
def test_subtree_sums_equal_the_recursive_sum_bit_for_bit(seed, n, columns, integers):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    tree = TreeRegressor(random_state=0).fit(X, X[:, 0] + rng.normal(size=n)).tree_
    shape = (tree.n_nodes,) if columns == 1 else (tree.n_nodes, columns)
    values = rng.integers(-5, 5, size=shape) if integers else rng.normal(size=shape) * 1e3
    summed = tree.subtree_sums(values)
    assert summed.dtype == values.dtype and summed.shape == values.shape
    np.testing.assert_array_equal(summed, subtree_sums_by_hand(tree, values))
    np.testing.assert_array_equal(values, values.copy())  # the input is left as it was


def test_multiway_trees_and_children_numbered_before_their_parents():
    """A C4.5 tree's multi-way nodes sum every branch in order; a tree whose child is
    numbered before its parent (a model file may say so) is summed level by level."""
    pytest.importorskip("treekit_core.builtins.c45_nominal")
    rng = np.random.default_rng(1)
    X = rng.integers(0, 4, size=(300, 3)).astype(float)
    y = (X[:, 0] + X[:, 1] > 3).astype(int)
    tree = (
        TreeClassifier(
            criterion="entropy",
            splitter_params={"nominal_split": "multiway"},
            categorical_features=[0, 1, 2],
        )
        .fit(X, y)
        .tree_
    )
    assert (np.diff(tree.child_start) > 2).any()
    values = rng.normal(size=(tree.n_nodes, 2))
    np.testing.assert_array_equal(tree.subtree_sums(values), subtree_sums_by_hand(tree, values))
    # root 0 -> (1, 3), node 3 -> (2, 4): node 2 is numbered before its parent
    n = 5
    odd = Tree.from_children(
        child_start=[0, 2, 2, 2, 4, 4],
        child_ids=np.array([1, 3, 2, 4]),
        child_shares=np.full(4, 0.5),
        feature=np.zeros(n, dtype=np.int64),
        threshold=np.zeros(n),
        statistics=np.ones((n, 1)),
        weight=np.ones(n),
        n_samples=np.ones(n, dtype=np.int64),
        impurity=np.zeros(n),
        depth=np.array([0, 1, 2, 1, 2]),
        value=np.ones((n, 1)),
        decision=np.zeros(n, dtype=np.int64),
        n_features=1,
    )
    values = np.array([1.0, 10.0, 100.0, 1000.0, 10000.0])
    np.testing.assert_array_equal(odd.subtree_sums(values), [11111.0, 10.0, 100.0, 11100.0, 1e4])


@pytest.mark.parametrize("criterion", ["squared_error", "gini", "entropy"])
def test_node_impurities_are_the_criterion_s_per_node_and_0_without_weight(criterion):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 3))
    if criterion == "squared_error":
        model = TreeRegressor(criterion=criterion).fit(X, X[:, 0] + rng.normal(size=300))
    else:
        model = TreeClassifier(criterion=criterion, pruner="none").fit(X, X[:, 0] + X[:, 1] > 0)
    tree = model.tree_
    tree.weight[3] = 0.0  # as an honest tree's node no estimation row reached
    computed = node_impurities(model.composition_, tree)
    criterion_ = model.composition_.criterion
    expected = [
        criterion_.node_impurity(tree.statistics[node], tree.weight[node], tree.statistics.shape[1])
        if tree.weight[node] > 0
        else 0.0
        for node in range(tree.n_nodes)
    ]
    np.testing.assert_array_equal(computed, expected)
    assert computed[3] == 0.0


@settings(max_examples=30, deadline=None)
@given(
    nodes=st.lists(st.integers(0, 9), min_size=0, max_size=300),
    extra=st.integers(0, 3),
)
def test_grouping_by_node_is_the_stable_argsort(nodes, extra):
    from treekit_core.kernels.tree_sums import group_by_node

    nodes = np.asarray(nodes, dtype=np.int64)
    n_nodes = (int(nodes.max()) + 1 if nodes.size else 0) + extra
    order, starts = group_by_node(nodes, n_nodes)
    expected = np.argsort(nodes, kind="stable")
    np.testing.assert_array_equal(order, expected)
    np.testing.assert_array_equal(starts, np.searchsorted(nodes[expected], np.arange(n_nodes + 1)))
