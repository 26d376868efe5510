"""The fused builder grows exactly the tree the node-by-node loop grows."""

from typing import ClassVar

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_core import TreeClassifier, hookimpl, registered
from treekit_core.builtins.splitters import Exhaustive
from treekit_core.testing import assert_same_tree


@attrs.define(slots=False)
class NodeByNode(Exhaustive):
    """The exhaustive splitter without its fused fast path."""

    name: ClassVar[str] = "node_by_node"

    def build_tree(self, composition, data, rng, rules):
        return None


class Plugin:
    @hookimpl
    def treekit_splitters(self):
        return [NodeByNode]


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 300),
    d=st.integers(1, 6),
    k=st.integers(2, 4),
    criterion=st.sampled_from(["gini", "entropy", "misclassification"]),
    min_samples_leaf=st.integers(1, 10),
    max_depth=st.one_of(st.none(), st.integers(1, 6)),
    weighted=st.booleans(),
    levels=st.integers(2, 20),
)
def test_fused_equals_node_by_node(
    seed, n, d, k, criterion, min_samples_leaf, max_depth, weighted, levels
):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, d)).astype(float)  # few levels: many equal values
    y = rng.integers(0, k, size=n)
    y[:2] = [0, 1]
    # Integer-valued weights keep every sum exact: with fractional weights a zero-gain
    # plateau (misclassification) yields drops of +-1e-16 whose sign depends on the order
    # of summation, which the two paths legitimately differ in.
    w = rng.integers(1, 4, size=n).astype(float) if weighted else None
    settings_ = dict(
        criterion=criterion,
        min_samples_leaf=min_samples_leaf,
        max_depth=max_depth,
        min_weight_fraction_leaf=0.02 if weighted else 0.0,
    )
    fused = TreeClassifier(**settings_).fit(X, y, sample_weight=w)
    with registered(Plugin(), name="node-by-node"):
        slow = TreeClassifier(splitter="node_by_node", **settings_).fit(X, y, sample_weight=w)
    assert_same_tree(fused.tree_, slow.tree_)


def test_fractional_weights_on_real_data():
    from treekit_core.datasets import load_dataset

    data = load_dataset("wisconsin", dropna=True)
    w = np.random.default_rng(0).uniform(0.2, 2.0, size=data.X.shape[0])
    for criterion in ("gini", "entropy"):
        fused = TreeClassifier(criterion=criterion, min_samples_leaf=3).fit(
            data.X, data.y, sample_weight=w
        )
        with registered(Plugin(), name="node-by-node"):
            slow = TreeClassifier(
                splitter="node_by_node", criterion=criterion, min_samples_leaf=3
            ).fit(data.X, data.y, sample_weight=w)
        assert_same_tree(fused.tree_, slow.tree_)


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(
        st.one_of(
            st.sampled_from([0.0, -0.0, 1.0, 2.5, np.nan, -np.nan, np.inf, -np.inf, 5e-324]),
            st.floats(-1e3, 1e3, allow_nan=False),
        ),
        max_size=80,
    ),
    strided=st.booleans(),
)
def test_the_presort_order_is_numpys_stable_order(values, strided):
    """The presorted builder's radix order is exactly numpy's stable argsort: ties in row
    order, -0.0 with 0.0, infinities, subnormals, NaN of either sign last; on a contiguous
    column or a column of a C-ordered matrix."""
    from treekit_core.kernels.builder import stable_order

    column = np.array(values, dtype=float)
    if strided:
        column = np.stack([column, column[::-1]], axis=1)[:, 0]
    assert np.array_equal(stable_order(column), np.argsort(column, kind="stable"))


def test_the_presort_order_on_long_columns_of_many_ties_and_wide_ranges():
    from treekit_core.kernels.builder import stable_order

    rng = np.random.default_rng(0)
    column = rng.integers(0, 3, 100_000).astype(float)
    column[::7] = np.nan
    assert np.array_equal(stable_order(column), np.argsort(column, kind="stable"))
    wide = rng.standard_normal(100_000) * 10.0 ** rng.integers(-300, 300, 100_000)
    assert np.array_equal(stable_order(wide), np.argsort(wide, kind="stable"))
    assert stable_order(np.zeros(0)).shape == (0,)


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 60),
    d=st.integers(1, 4),
    removed=st.floats(0.0, 1.0),
    layout=st.sampled_from(["C", "F"]),
)
def test_the_rows_a_tree_keeps_come_first_with_their_sorted_values(seed, n, d, removed, layout):
    """kept_first is numpy's stable partition of every feature's order by "weight > 0"
    (a forest's out-of-bag rows last, both sides still sorted) and sorted_values reads each
    feature's values in that order, from a C- or Fortran-ordered X."""
    from treekit_core.kernels.builder import kept_first, presort, sorted_values

    rng = np.random.default_rng(seed)
    X = np.array(rng.integers(0, 5, size=(n, d)).astype(float), order=layout)
    weight = np.where(rng.random(n) < removed, 0.0, rng.integers(1, 3, n).astype(float))
    order = presort(X)
    expected = np.take_along_axis(order, np.argsort(weight[order] <= 0, axis=1, kind="stable"), 1)
    moved, n_kept = kept_first(order.copy(), weight)
    assert n_kept == int((weight > 0).sum())
    assert np.array_equal(moved, expected)
    values = sorted_values(X, moved)
    assert np.array_equal(values, X[moved.T, np.arange(d)].T)
    assert np.all(np.diff(values[:, :n_kept], axis=1) >= 0)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 300),
    d=st.integers(1, 5),
    signs=st.lists(st.sampled_from([-1, 0, 1]), min_size=5, max_size=5),
    min_samples_leaf=st.integers(1, 10),
    max_depth=st.one_of(st.none(), st.integers(1, 6)),
    weighted=st.booleans(),
    regression=st.booleans(),
)
def test_fused_equals_node_by_node_under_monotonic_constraints(
    seed, n, d, signs, min_samples_leaf, max_depth, weighted, regression
):
    """The presorted builder keeps every node's value interval as the loop does: the same
    tree, the same intervals (integer data and weights: every sum exact in any order)."""
    from treekit_core import TreeRegressor

    rng = np.random.default_rng(seed)
    X = rng.integers(0, 12, size=(n, d)).astype(float)
    y = rng.integers(0, 2, size=n)
    y[:2] = [0, 1]
    w = rng.integers(1, 4, size=n).astype(float) if weighted else None
    estimator = TreeRegressor if regression else TreeClassifier
    if regression:
        y = y * 3 + rng.integers(0, 5, size=n)
    cst = signs[:d] if any(signs[:d]) else [1] + signs[1:d]  # at least one constraint
    params = dict(monotonic_cst=cst, min_samples_leaf=min_samples_leaf, max_depth=max_depth)
    fused = estimator(**params).fit(X, y, sample_weight=w)
    with registered(Plugin(), name="node-by-node"):
        slow = estimator(splitter="node_by_node", **params).fit(X, y, sample_weight=w)
    assert_same_tree(fused.tree_, slow.tree_)
    for field in ("value_lower", "value_upper"):
        np.testing.assert_array_equal(
            fused.tree_.node_fields[field], slow.tree_.node_fields[field], err_msg=field
        )


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 200),
    n_numeric=st.integers(0, 2),
    levels=st.lists(st.integers(1, 14), min_size=1, max_size=3),
    k=st.integers(2, 4),
    regression=st.booleans(),
    min_samples_leaf=st.integers(1, 6),
    max_depth=st.one_of(st.none(), st.integers(1, 5)),
    weighted=st.booleans(),
    nominal_split=st.sampled_from(["subset", "multiway"]),
)
def test_fused_nominal_questions_equal_node_by_node(
    seed, n, n_numeric, levels, k, regression, min_samples_leaf, max_depth, weighted, nominal_split
):
    """Nominal features without missing values grow in the presorted builder, asked by
    subset questions (the tree of the node-by-node loop: ordered categories for two classes
    and for means, every subset up to the limit for more classes, the majority heuristic
    past it) or by multi-way questions (a branch per category, an empty leaf for a category
    absent from the node), question kinds numbered as the loop numbers them, and the same
    predictions. The builder is the one that grows it."""
    import pandas as pd

    from treekit_core import TreeRegressor
    from treekit_core.kernels import builder

    rng = np.random.default_rng(seed)
    columns = {f"x{j}": rng.integers(0, 6, n).astype(float) for j in range(n_numeric)}
    for j, m in enumerate(levels):
        columns[f"c{j}"] = pd.Categorical(rng.integers(0, m, n), categories=range(m))
    X = pd.DataFrame(columns)
    y = rng.integers(0, k, size=n)
    y[: min(n, 2)] = [0, 1][: min(n, 2)]
    w = rng.integers(1, 4, size=n).astype(float) if weighted else None
    settings_ = dict(
        min_samples_leaf=min_samples_leaf,
        max_depth=max_depth,
        splitter_params={"nominal_split": nominal_split},
    )
    estimator = TreeRegressor if regression else TreeClassifier
    target = y * 1.5 + rng.integers(0, 2, n) if regression else y
    grown = []
    original = builder.build_table

    def spy(*args, **kwargs):
        grown.append(kwargs.get("nominal", args[-1] if len(args) > 12 else None))
        return original(*args, **kwargs)

    builder.build_table = spy
    try:
        fused = estimator(**settings_).fit(X, target, sample_weight=w)
    finally:
        builder.build_table = original
    assert len(grown) == 1 and grown[0] is not None
    with registered(Plugin(), name="node-by-node"):
        slow = estimator(splitter="node_by_node", **settings_).fit(X, target, sample_weight=w)
    assert_same_tree(fused.tree_, slow.tree_)
    assert [q.name for q in fused.tree_.questions] == [q.name for q in slow.tree_.questions]
    np.testing.assert_array_equal(
        fused.tree_.node_fields.get("category_mask", np.full(fused.tree_.n_nodes, np.nan)),
        slow.tree_.node_fields.get("category_mask", np.full(slow.tree_.n_nodes, np.nan)),
    )
    np.testing.assert_array_equal(fused.predict(X), slow.predict(X))


def test_a_table_with_multiway_questions_makes_the_tree_its_depth_first_numbering_says():
    """A compiled grower's table holds a multi-way node's first and last child only; the
    others are the nodes one level deeper between them (depth-first numbering). Worked by
    hand: root 0 asks a 3-way question; its second child (node 2) a binary one; node 5 is
    an empty branch."""
    from treekit_core import tree_from_table
    from treekit_core.kernels import growth

    n_stats = 1
    depth = [0, 1, 1, 2, 2, 1]
    left = [1, -1, 3, -1, -1, -1]
    right = [5, -1, 4, -1, -1, -1]
    weight = [6.0, 2.0, 4.0, 1.0, 3.0, 0.0]
    branches = [3.0, np.nan, np.nan, np.nan, np.nan, np.nan]
    table = np.zeros((6, growth.SUMS + n_stats + len(growth.TRAILING_COLUMNS)))
    table[:, growth.LEFT], table[:, growth.RIGHT] = left, right
    table[:, growth.DEPTH], table[:, growth.WEIGHT] = depth, weight
    tree = tree_from_table(table, 2, n_stats, n_branches=np.array(branches))
    assert [list(tree.children(i)) for i in range(6)] == [[1, 2, 5], [], [3, 4], [], [], []]
    np.testing.assert_array_equal(tree.child_shares, [2 / 6, 4 / 6, 0.0, 1 / 4, 3 / 4])
    table[3, growth.DEPTH] = 3  # node 3 one level too deep: no parent above it
    with pytest.raises(ValueError, match="not numbered depth first"):
        tree_from_table(table, 2, n_stats, n_branches=np.array(branches))


def test_a_table_handed_over_in_a_list_is_freed_before_the_tree_is_made():
    """A grown-out tree's node table is as large as the tree; handed over in a list, the
    table is freed once its columns are copied out, so the fit's memory never holds the
    table and the whole tree at once (issue 38's peak memory). The same tree either way."""
    import tracemalloc
    import weakref

    from treekit_core import tree_from_table
    from treekit_core.engine.tree import ARRAY_FIELDS
    from treekit_core.kernels import NODE_COLUMNS, growth

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 5))
    y = (X[:, 0] + rng.normal(size=20_000) > 0).astype(int)  # noisy: grown out, ~10 000 nodes
    model = TreeClassifier().fit(X, y)
    tree = model.tree_
    table = np.zeros((tree.n_nodes, growth.SUMS + tree.statistics.shape[1]))  # NODE_COLUMNS
    internal = tree.child_start[1:] > tree.child_start[:-1]
    first = np.minimum(tree.child_start[:-1], tree.child_ids.size - 2)
    table[:, growth.LEFT] = np.where(internal, tree.child_ids[first], -1)
    table[:, growth.RIGHT] = np.where(internal, tree.child_ids[first + 1], -1)
    for name in ("feature", "threshold", "weight", "n_samples", "impurity", "depth"):
        table[:, NODE_COLUMNS.index(name)] = getattr(tree, name)
    table[:, growth.SUMS :] = tree.statistics

    def made(hand_over):
        tracemalloc.start()  # traces the table's copy too: it is made here
        try:
            copy = table.copy()
            freed = weakref.ref(copy)
            argument = [copy] if hand_over else copy
            if hand_over:
                del copy
            made_tree = tree_from_table(argument, tree.n_features)
            if hand_over:  # emptied, and nothing else kept the table
                assert argument == [] and freed() is None
            else:
                assert freed() is not None
            return made_tree, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    kept, peak_kept = made(hand_over=False)  # the caller keeps it: alive throughout
    handed, peak_handed = made(hand_over=True)
    # The tree a binary table makes holds its links, not child lists (issue 59): smaller
    # than the columns copied out of the table, so with the hand-over the peak is now
    # reached while those columns are copied (the table still alive), and what the
    # hand-over saves is the table beside the tree's own arrays: measured 0.66 x its size.
    assert peak_kept - peak_handed >= 0.5 * table.nbytes
    grown = set(ARRAY_FIELDS) - {"value", "decision"}  # the labeler's, not in a table
    for name in grown:
        np.testing.assert_array_equal(getattr(handed, name), getattr(kept, name))
        np.testing.assert_array_equal(getattr(handed, name), getattr(tree, name))


def test_more_statistics_than_the_stack_holds_grow_the_same_tree():
    """A threshold sweep keeps its running sums on the stack for up to STACK_STATS
    statistics and in heap arrays beyond (``kernels.compiling.stack_scratch``); 70 classes
    take the heap arrays in both the presorted builder and the node-by-node loop, and both
    grow scikit-learn's tree (the hypothesis test above covers the stack arrays)."""
    from sklearn.tree import DecisionTreeClassifier
    from sklearn_parity import assert_same_tree as assert_same_as_sklearn
    from sklearn_parity import float32_exact

    from treekit_core.kernels.compiling import STACK_STATS

    rng = np.random.default_rng(5)
    X = float32_exact(rng.normal(size=(3000, 4)))
    y = np.floor((X[:, 0] - X.min()) * 12 + rng.integers(0, 3, 3000)).astype(int)
    assert np.unique(y).size > STACK_STATS
    fused = TreeClassifier(min_samples_leaf=20).fit(X, y)
    with registered(Plugin(), name="node-by-node"):
        slow = TreeClassifier(splitter="node_by_node", min_samples_leaf=20).fit(X, y)
    assert_same_tree(fused.tree_, slow.tree_)
    peer = DecisionTreeClassifier(min_samples_leaf=20, random_state=0).fit(X, y)
    assert_same_as_sklearn(fused.tree_, peer.tree_)


def test_the_table_keeps_interval_and_question_columns_only_for_trees_that_ask_for_them():
    """Value intervals, category masks and branch counts are columns of the presorted
    grower's table only where some feature is constrained or nominal: four columns of
    every node of a grown-out tree otherwise (issue 38's peak memory). The rule, then the
    tables a fit makes on one and on two threads (the threaded builder's blocks) and under
    a constraint; the tree is the node-by-node loop's either way (the tests above)."""
    from treekit_core.kernels import builder, growth

    rng = np.random.default_rng(3)
    X = rng.normal(size=(60_000, 20))  # 1.2M cells: the threaded path on two threads
    y = X[:, 0] + rng.normal(size=60_000)
    n_stats = 2  # squared error: sum of y, sum of y^2
    free, nominal = np.zeros(20), np.zeros(20, dtype=np.int64)
    assert growth.table_width(n_stats, free, nominal) == growth.SUMS + n_stats
    constrained = free.copy()
    constrained[3] = -1.0
    with_categories = nominal.copy()
    with_categories[7] = 4
    for signs, categories in ((constrained, nominal), (free, with_categories)):
        width = growth.table_width(n_stats, signs, categories)
        assert width == growth.SUMS + n_stats + len(growth.TRAILING_COLUMNS)

    from treekit_core import TreeRegressor

    widths = []
    original = builder.build_table

    def spy(*args, **kwargs):
        table = original(*args, **kwargs)
        widths.append(table.shape[1])
        return table

    builder.build_table = spy
    try:
        for threads in (1, 2):
            plain = TreeRegressor(max_depth=8, n_threads=threads).fit(X, y)
        cst = [0] * 20
        cst[0] = 1
        bounded = TreeRegressor(max_depth=8, monotonic_cst=cst).fit(X, y)
    finally:
        builder.build_table = original
    assert widths == [growth.SUMS + n_stats] * 2 + [
        growth.SUMS + n_stats + len(growth.TRAILING_COLUMNS)
    ]
    assert "value_lower" not in plain.tree_.node_fields
    assert np.isfinite(bounded.tree_.node_fields["value_lower"]).any()
