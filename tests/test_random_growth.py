"""The random cuts' grower (kernels/random_growth.py, issue 64): a node's passes over its
rows, each against a plain numpy computation of the same thing (hypothesis), compiled and
as plain Python (numba checks no bounds: ``NUMBA_DISABLE_JIT=1`` runs these bodies with
Python's), and every training row's leaf from the growth's row order
(builtins/grown_rows.py): the leaves a walk of X finds, kept only where they are asked for."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_core import ExtraTreesClassifier, ExtraTreesRegressor, TreeRegressor
from treekit_core.builtins import grown_rows
from treekit_core.kernels import random_growth
from treekit_core.kernels.compiling import python_function
from treekit_core.testing import assert_same_quantiles


def _kernel(name, compiled):
    kernel = getattr(random_growth, name)
    return kernel if compiled else python_function(kernel)


@st.composite
def _node(draw):
    """X (Fortran order, as the splitter hands it), a node's rows (ascending ids, as the
    stable partition keeps them), the row table and a threshold among the values."""
    n = draw(st.integers(1, 60))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    X = np.asfortranarray(rng.integers(-3, 4, size=(n, 3)) * draw(st.sampled_from([1.0, 0.25])))
    count = draw(st.integers(1, n))
    rows = np.sort(rng.choice(n, size=count, replace=False)).astype(np.int32)
    n_stats = draw(st.integers(1, 4))
    table = np.ascontiguousarray(rng.normal(size=(n, 1 + n_stats)))
    threshold = float(rng.choice(X[rows, 1]))
    return X, rows, table, threshold


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
@settings(max_examples=60, deadline=None)
@given(node=_node(), left_side=st.booleans())
def test_a_nodes_passes_are_the_numpy_computations(compiled, node, left_side):
    X, rows, table, threshold = node
    count, feature = rows.size, 1
    values = np.full(X.shape[0] + 3, np.nan)
    low, high = _kernel("gather_range", compiled)(X, rows, feature, values)
    np.testing.assert_array_equal(values[:count], X[rows, feature])
    assert (low, high) == (X[rows, feature].min(), X[rows, feature].max())
    goes_left = values[:count] <= threshold
    assert _kernel("count_at_most", compiled)(values, count, threshold) == goes_left.sum()
    side = np.zeros(X.shape[0], dtype=np.int32)
    n_side = _kernel("list_side", compiled)(rows, values, threshold, left_side, side)
    listed = rows[goes_left == left_side]
    assert n_side == listed.size
    np.testing.assert_array_equal(side[:n_side], listed)  # in the node's order
    sums = np.full(table.shape[1] - 1, np.nan)
    weight = _kernel("sum_rows", compiled)(table, side, n_side, sums)
    expected = np.zeros(table.shape[1])
    for r in listed:  # added in the listed order: the same bits
        expected += table[r]
    assert weight == expected[0]
    np.testing.assert_array_equal(sums, expected[1:])
    partitioned, scratch = rows.copy(), np.zeros(count, dtype=np.int32)
    n_left = _kernel("partition_rows", compiled)(partitioned, values, threshold, scratch)
    assert n_left == goes_left.sum()
    np.testing.assert_array_equal(partitioned, np.concatenate([rows[goes_left], rows[~goes_left]]))


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
@settings(max_examples=60, deadline=None)
@given(node=_node(), start=st.integers(0, 5))
def test_a_split_moves_every_columns_run_as_the_partition_moves_the_rows(compiled, node, start):
    """X's columns kept in the rows' order: a node's run of each column and its row ids
    moved to the places of a stable partition (the rows going left first, each side in
    its order), the columns outside the node untouched."""
    X, rows, _, threshold = node
    samples = np.concatenate([np.arange(start, dtype=np.int32) + X.shape[0], rows])
    columns = np.vstack([np.arange(start) + 100.0 * (f + 1) for f in range(X.shape[1])])
    columns = np.ascontiguousarray(np.hstack([columns, X[rows].T]))
    end = samples.size
    run = columns[1, start:end]
    low, high = _kernel("run_range", compiled)(run)
    assert (low, high) == (run.min(), run.max())
    n_left = int((run <= threshold).sum())
    places = np.full(end - start, -1, dtype=np.int64)
    _kernel("split_places", compiled)(run, threshold, n_left, places)
    goes_left = X[rows, 1] <= threshold
    order = np.concatenate([np.flatnonzero(goes_left), np.flatnonzero(~goes_left)])
    np.testing.assert_array_equal(np.argsort(places), order)
    before = columns.copy()
    node_samples = samples[start:end]
    _kernel("move_runs", compiled)(
        columns, start, end, node_samples, places, np.zeros(end, np.int32), np.zeros(end)
    )
    np.testing.assert_array_equal(samples[start:], rows[order])
    np.testing.assert_array_equal(columns[:, start:], before[:, start:][:, order])
    np.testing.assert_array_equal(columns[:, :start], before[:, :start])


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_columns_in_node_order_grow_the_tree_read_at_the_rows(monkeypatch, task):
    """Either way of reading a node's values (X's columns kept in the rows' order, or X
    read at the node's rows) grows the same trees, bit for bit."""
    from treekit_core.builtins import random_splitter

    rng = np.random.default_rng(11)
    X = rng.normal(size=(800, 6)).round(1)
    y = X[:, 0] - X[:, 1] + rng.normal(size=800)
    make = ExtraTreesRegressor if task == "regression" else ExtraTreesClassifier
    y = y if task == "regression" else (y > 0).astype(int)
    found = {}
    for in_node_order in (False, True):
        monkeypatch.setattr(
            random_splitter, "keeps_columns_in_node_order", lambda *a, flag=in_node_order: flag
        )
        forest = make(n_estimators=3, random_state=2, max_features=0.5).fit(X, y)
        found[in_node_order] = forest
    for a, b in zip(found[False].estimators_, found[True].estimators_, strict=True):
        np.testing.assert_array_equal(a.feature, b.feature)
        np.testing.assert_array_equal(a.threshold, b.threshold)
        np.testing.assert_array_equal(a.value, b.value)


def test_columns_in_node_order_where_most_features_are_drawn_and_the_copy_is_small():
    from treekit_core.builtins.random_splitter import NODE_ORDER_BYTES, keeps_columns_in_node_order

    assert keeps_columns_in_node_order(20, 20, 100_000)  # a regression forest's default
    assert keeps_columns_in_node_order(10, 20, 100_000)
    assert not keeps_columns_in_node_order(4, 20, 100_000)  # sqrt(20): read at the rows
    assert not keeps_columns_in_node_order(20, 20, NODE_ORDER_BYTES // 160 + 1)


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("bootstrap", [False, True])
def test_a_forests_quantiles_read_the_growths_leaves_as_the_walk_finds_them(
    monkeypatch, n_jobs, bootstrap
):
    """Every tree's training rows' leaves come from the order its growth left the rows
    in, handed over once after the last tree grew (threads grow trees on data of their
    own): the kept leaf members, and so the quantiles, equal the walk's; with a bootstrap
    (rows of no weight are in no leaf's rows) the walk answers for every tree."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1500, 5))
    y = X[:, 0] * 2 + np.sin(3 * X[:, 1]) + rng.normal(size=1500)
    answered = []
    own = grown_rows.grown_leaves

    def counting(data, tree):
        found = own(data, tree)
        answered.append(found is not None)
        return found

    params = {"n_estimators": 6, "random_state": 3, "n_jobs": n_jobs, "bootstrap": bootstrap}
    monkeypatch.setattr(grown_rows, "grown_leaves", counting)
    monkeypatch.setattr("treekit_core.builtins.random_splitter.grown_leaves", counting)
    fast = ExtraTreesRegressor(**params).fit(X, y)
    assert answered == [not bootstrap] * 6
    monkeypatch.setattr(
        "treekit_core.builtins.random_splitter.grown_leaves", lambda data, tree: None
    )
    walked = ExtraTreesRegressor(**params).fit(X, y)
    assert_same_quantiles(fast, walked, X)
    assert not any(tree in grown_rows._GROWN for tree in fast.estimators_)  # handed over


def test_the_growths_leaves_are_the_walks_leaves_for_a_single_tree():
    """A random-cut regression tree's leaves from the growth, row by row, are where the
    tree sends each training row."""
    rng = np.random.default_rng(8)
    X = rng.integers(0, 5, size=(300, 3)) * 1.0
    y = X[:, 0] + rng.normal(size=300)
    model = TreeRegressor(splitter="random", random_state=0, min_samples_leaf=3)
    composition = model.fit(X, y).composition_
    data = model._validate_training(X, y, None, composition)[0]
    assert data.training_leaves_wanted  # a regressor keeps its leaves' responses
    tree = composition.grow(data, np.random.default_rng(1))
    leaves = composition.splitter.training_leaves(tree, data)
    np.testing.assert_array_equal(leaves, _walk(tree, X))
    assert composition.splitter.training_leaves(tree, data) is None  # handed over once


def _walk(tree, X):
    found = np.empty(X.shape[0], dtype=np.int64)
    for r in range(X.shape[0]):
        node = 0
        while tree.children_left[node] >= 0:
            go_left = X[r, tree.feature[node]] <= tree.threshold[node]
            node = tree.children_left[node] if go_left else tree.children_right[node]
        found[r] = node
    return found


def test_a_classifiers_forest_keeps_no_rows():
    """Nothing asks for a classifier's training leaves, so its growth keeps none."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(500, 4))
    y = (X[:, 0] > 0).astype(int)
    forest = ExtraTreesClassifier(n_estimators=4, random_state=0).fit(X, y)
    assert not any(tree in grown_rows._GROWN for tree in forest.estimators_)
