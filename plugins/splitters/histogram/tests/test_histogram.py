"""The histogram splitter: the exhaustive splitter's partitions where every distinct value has
a bin, the node-by-node loop's tree, missing values, nominal features, pruners, forests and
the validation of max_bins."""

import contextlib
from typing import ClassVar

import attrs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from treekit_histogram import Histogram
from treekit_histogram.binning import bin_features

from treekit_core import (
    Criterion,
    ForestClassifier,
    TrainingData,
    TreeClassifier,
    TreeRegressor,
    hookimpl,
    registered,
)
from treekit_core.testing import assert_same_quantiles


def skewed_impurity(class_sums, total_weight, params):
    """A plain-Python criterion (not symmetric in the classes): the specialised histogram
    kernels must inline a third-party impurity as they do the built-in ones."""
    if total_weight <= 0.0:
        return 0.0
    h = 0.0
    for k in range(class_sums.shape[0]):
        p = class_sums[k] / total_weight
        h += params[k] * p * (1.0 - p)
    return h


@attrs.define(slots=False)
class Skewed(Criterion):
    name: ClassVar[str] = "skewed"
    impurity = staticmethod(skewed_impurity)

    def impurity_params(self, n_classes):
        return np.linspace(1.0, 2.0, n_classes)


@attrs.define(slots=False)
class HistogramNodeByNode(Histogram):
    """The histogram splitter without its fused grower."""

    name: ClassVar[str] = "histogram_node_by_node"

    def build_tree(self, composition, data, rng, rules):
        return None


class TestPlugin:
    @hookimpl
    def treekit_criteria(self):
        return [Skewed]

    @hookimpl
    def treekit_splitters(self):
        return [HistogramNodeByNode]


def fit(splitter, X, y, sample_weight=None, **params):
    with registered(TestPlugin(), name="histogram-tests"):
        return TreeClassifier(splitter=splitter, **params).fit(X, y, sample_weight=sample_weight)


def leaf_partition(model, X):
    """The training rows grouped by leaf, as a set of frozensets (node ids and thresholds
    may differ between splitters making the same partition)."""
    leaves = model.apply(X)
    return {frozenset(np.flatnonzero(leaves == leaf)) for leaf in np.unique(leaves)}


def assert_same_structure(a, b):
    for field in ("children_left", "children_right", "feature", "n_samples", "depth"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
    np.testing.assert_allclose(a.statistics, b.statistics, rtol=1e-12, atol=1e-12)


def integer_data(seed, n, d, k, levels):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, d)).astype(float) * 0.37
    y = (X[:, 0] + X[:, -1] + rng.normal(size=n) > 0.37 * (levels - 1)).astype(int)
    if k > 2:
        y = y + (X[:, 1 % d] > 0.37 * levels / 2)
    y[:2] = [0, 1]
    return X, y


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 300),
    d=st.integers(1, 5),
    k=st.integers(2, 3),
    levels=st.integers(2, 30),
    criterion=st.sampled_from(["gini", "entropy", "skewed"]),
    min_samples_leaf=st.integers(1, 8),
    max_depth=st.one_of(st.none(), st.integers(1, 6)),
)
def test_same_partitions_as_the_exhaustive_splitter_when_every_value_has_a_bin(
    seed, n, d, k, levels, criterion, min_samples_leaf, max_depth
):
    X, y = integer_data(seed, n, d, k, levels)
    params = dict(criterion=criterion, min_samples_leaf=min_samples_leaf, max_depth=max_depth)
    exact = fit("exhaustive", X, y, **params)
    binned = fit("histogram", X, y, splitter_params={"max_bins": 30}, **params)
    assert_same_structure(exact.tree_, binned.tree_)
    assert leaf_partition(exact, X) == leaf_partition(binned, X)


def test_real_data_with_few_values_gives_the_exhaustive_tree():
    from treekit_core.datasets import load_dataset

    data = load_dataset("wisconsin", dropna=True)  # integer features 1..10
    for criterion in ("gini", "entropy", "skewed"):
        exact = fit("exhaustive", data.X, data.y, criterion=criterion)
        binned = fit("histogram", data.X, data.y, criterion=criterion)
        assert_same_structure(exact.tree_, binned.tree_)
        assert leaf_partition(exact, data.X) == leaf_partition(binned, data.X)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 300),
    d=st.integers(1, 4),
    levels=st.integers(2, 400),
    max_bins=st.integers(2, 40),
    missing=st.floats(0.0, 0.4),
    weighted=st.booleans(),
    criterion=st.sampled_from(["gini", "entropy", "skewed"]),
)
def test_the_fused_grower_grows_the_node_by_node_tree(
    seed, n, d, levels, max_bins, missing, weighted, criterion
):
    X, y = integer_data(seed, n, d, 2, levels)
    rng = np.random.default_rng(seed)
    X[rng.random(X.shape) < missing] = np.nan
    # Integer weights keep every sum exact: the two paths add in different orders.
    w = rng.integers(1, 4, size=n).astype(float) if weighted else None
    params = dict(criterion=criterion, min_samples_leaf=2, splitter_params={"max_bins": max_bins})
    fused = fit("histogram", X, y, w, **params)
    slow = fit("histogram_node_by_node", X, y, w, **params)
    assert_same_structure(fused.tree_, slow.tree_)
    np.testing.assert_array_equal(fused.tree_.threshold, slow.tree_.threshold)
    np.testing.assert_array_equal(fused.tree_.child_shares, slow.tree_.child_shares)
    np.testing.assert_array_equal(fused.predict_proba(X), slow.predict_proba(X))


def test_missing_values_go_wholly_to_the_better_side():
    rng = np.random.default_rng(0)
    n = 600
    x = rng.uniform(0, 10, n)
    y = (x > 5).astype(int)
    # The missing values belong to class 1: they must join the right branch (x > 5).
    missing = rng.random(n) < 0.2
    y[missing] = 1
    X = np.column_stack([np.where(missing, np.nan, x)])
    model = fit("histogram", X, y, max_depth=1)
    tree = model.tree_
    assert tree.feature[0] == 0 and 4.5 < tree.threshold[0] < 5.5
    np.testing.assert_array_equal(tree.child_shares[:2], [0.0, 1.0])
    assert tree.n_samples[tree.children_right[0]] == (x[~missing] > tree.threshold[0]).sum() + (
        missing.sum()
    )
    assert model.predict(np.array([[np.nan]]))[0] == 1
    # ... and the other way round when they belong to class 0
    y2 = np.where(missing, 0, (x > 5).astype(int))
    tree2 = fit("histogram", X, y2, max_depth=1).tree_
    np.testing.assert_array_equal(tree2.child_shares[:2], [1.0, 0.0])
    # The exhaustive splitter's C4.5 rule would share them by the known weight instead.
    loaded = TreeClassifier.from_json(model.to_json())
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))


def test_nominal_features_are_searched_as_categories():
    rng = np.random.default_rng(1)
    n = 500
    colour = rng.integers(0, 6, n).astype(float)
    size = rng.integers(0, 20, n).astype(float)
    y = (np.isin(colour, [1, 4]) ^ (size > 14)).astype(int)
    X = np.column_stack([colour, size])
    params = dict(categorical_features=[0], max_depth=4)
    exact = fit("exhaustive", X, y, **params)
    binned = fit("histogram", X, y, **params)
    assert_same_structure(exact.tree_, binned.tree_)
    assert leaf_partition(exact, X) == leaf_partition(binned, X)
    assert binned.score(X, y) == 1.0
    names = {binned.tree_.questions[q].name for q in binned.tree_.question if q >= 0}
    assert names == {"subset", "threshold"}


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 250),
    levels=st.lists(st.integers(1, 14), min_size=1, max_size=3),
    k=st.integers(2, 4),
    numeric_missing=st.floats(0.0, 0.3),
    weighted=st.booleans(),
    criterion=st.sampled_from(["gini", "entropy", "skewed"]),
    min_samples_leaf=st.integers(1, 6),
)
def test_the_fused_grower_asks_subset_questions_as_the_node_by_node_loop(
    seed, n, levels, k, numeric_missing, weighted, criterion, min_samples_leaf
):
    """Nominal features without missing values are binned by category and asked subset
    questions in the compiled grower (numeric features beside them may miss values): the
    loop's tree (ordered categories for two classes, every subset up to the limit for
    more, the majority heuristic past it), the same masks and predictions; the compiled
    grower is the one that grows it."""
    rng = np.random.default_rng(seed)
    codes = [rng.integers(0, m, n) for m in levels]
    numeric = rng.integers(0, 7, n).astype(float)
    numeric[rng.random(n) < numeric_missing] = np.nan
    X = np.column_stack([*codes, numeric]).astype(float)
    y = (codes[0] + rng.integers(0, 2, n)) % k
    y[: min(n, 2)] = [0, 1][: min(n, 2)]
    w = rng.integers(1, 4, size=n).astype(float) if weighted else None
    params = dict(
        criterion=criterion,
        min_samples_leaf=min_samples_leaf,
        categorical_features=list(range(len(levels))),
    )
    with grown_by_the_compiled_grower() as grown:
        fused = fit("histogram", X, y, w, **params)
    assert grown == [True]
    slow = fit("histogram_node_by_node", X, y, w, **params)
    assert_same_structure(fused.tree_, slow.tree_)
    assert [q.name for q in fused.tree_.questions] == [q.name for q in slow.tree_.questions]
    np.testing.assert_array_equal(fused.tree_.question, slow.tree_.question)
    nothing = np.full(fused.tree_.n_nodes, np.nan)
    np.testing.assert_array_equal(
        fused.tree_.node_fields.get("category_mask", nothing),
        slow.tree_.node_fields.get("category_mask", nothing),
    )
    np.testing.assert_array_equal(fused.predict_proba(X), slow.predict_proba(X))


@contextlib.contextmanager
def grown_by_the_compiled_grower():
    """Whether each fit's tree came from the splitter's compiled grower (a list, one entry
    per call of its ``build_tree``)."""
    grown = []
    build_tree = Histogram.build_tree

    def spy(self, *args):
        tree = build_tree(self, *args)
        grown.append(tree is not None)
        return tree

    Histogram.build_tree = spy
    try:
        yield grown
    finally:
        Histogram.build_tree = build_tree


def test_the_compiled_grower_takes_nominal_features_without_missing_values_only():
    """The splitter hands the tree to its compiled grower where the nominal features miss
    no value, and to the loop (which divides such rows between branches) where one does;
    both ask subset questions."""
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.integers(0, 5, 200), rng.normal(size=200)]).astype(float)
    y = (np.isin(X[:, 0], [1, 3]) ^ (X[:, 1] > 0.5)).astype(int)
    with_missing = X.copy()
    with_missing[::10, 0] = np.nan
    for data, compiled in ((X, True), (with_missing, False)):
        with grown_by_the_compiled_grower() as grown:
            fitted = fit("histogram", data, y, categorical_features=[0])
        assert grown == [compiled]
        assert {q.name for q in fitted.tree_.questions} == {"subset", "threshold"}


@pytest.mark.parametrize("pruner", ["cost_complexity", "pessimistic", "mdl"])
def test_every_pruner_prunes_the_histogram_tree_as_the_exhaustive_one(pruner):
    from treekit_core.datasets import load_dataset

    data = load_dataset("wisconsin", dropna=True)
    params = dict(pruner=pruner, random_state=0)
    if pruner == "pessimistic":
        params["criterion"] = "entropy"
    exact = fit("exhaustive", data.X, data.y, **params)
    binned = fit("histogram", data.X, data.y, **params)
    assert binned.tree_.n_leaves < fit("histogram", data.X, data.y).tree_.n_leaves
    assert_same_structure(exact.tree_, binned.tree_)
    np.testing.assert_array_equal(exact.predict(data.X), binned.predict(data.X))


def test_a_forest_of_histogram_trees_equals_the_exhaustive_forest_on_few_values():
    from treekit_core.datasets import load_dataset

    data = load_dataset("wisconsin", dropna=True)
    params = dict(n_estimators=12, random_state=3, max_depth=6)
    exact = ForestClassifier(splitter="exhaustive", **params).fit(data.X, data.y)
    with registered(TestPlugin(), name="histogram-tests"):
        binned = ForestClassifier(splitter="histogram", **params).fit(data.X, data.y)
    # The same trees: every node splits its in-bag rows alike. (Predictions may differ on
    # out-of-bag rows whose value no in-bag row of a node has: a zero-weight row is a
    # removed row (issue 36), and in such a gap the exhaustive search cuts at the midpoint
    # of the node's values, the histogram at its global bin edge.)
    for a, b in zip(exact.estimators_, binned.estimators_, strict=True):
        assert_same_structure(a, b)


@pytest.mark.parametrize("bad", [1, 0, 256, 2.5, True, "255", None])
def test_max_bins_is_validated(bad):
    X, y = integer_data(0, 50, 2, 2, 5)
    with pytest.raises(ValueError, match="max_bins must be an int from 2 to 255"):
        fit("histogram", X, y, splitter_params={"max_bins": bad})


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 2000),
    distinct=st.integers(1, 3000),
    max_bins=st.integers(2, 255),
    missing=st.floats(0.0, 0.5),
)
def test_bins_are_quantiles_and_codes_agree_with_the_thresholds(
    seed, n, distinct, max_bins, missing
):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, distinct, n) * 1.5 - 7.0
    x[rng.random(n) < missing] = np.nan
    binned = bin_features(x[:, None], max_bins)
    codes, edges = binned.codes[0], binned.edges[0, : binned.n_value_bins[0] - 1]
    known = ~np.isnan(x)
    assert (codes[~known] == max_bins).all()
    assert binned.n_value_bins[0] <= max_bins and np.all(np.diff(edges) > 0)
    # x <= edges[a] exactly when its code is at most a
    for a, edge in enumerate(edges):
        np.testing.assert_array_equal(x[known] <= edge, codes[known] <= a)
    values = np.unique(x[known])
    if values.size <= max_bins:  # a bin per distinct value
        assert binned.n_value_bins[0] == max(values.size, 1)
    else:  # quantile bins: none holds much more than its share of the rows
        counts = np.bincount(codes[known], minlength=binned.n_value_bins[0])
        largest_value = np.unique(x[known], return_counts=True)[1].max()
        assert counts.max() <= 2 * known.sum() / max_bins + largest_value + 1


@pytest.mark.parametrize("criterion", ["squared_error", "rpart_poisson"])
@pytest.mark.parametrize("splitter", ["histogram", "histogram_node_by_node"])
def test_a_tie_between_a_category_and_a_threshold_goes_to_the_earlier_feature(criterion, splitter):
    """Issue 57: rpart's rule (the earlier feature wins a tie) in the histogram growers."""
    import pandas as pd

    from treekit_core import TreeRegressor

    X = pd.DataFrame({"c": pd.Categorical(["a", "a", "b", "b"] * 3), "x": [0.0, 0, 1, 1] * 3})
    y = np.array([1.0, 1, 3, 3] * 3)
    for columns in (["c", "x"], ["x", "c"]):
        model = TreeRegressor(max_depth=1, criterion=criterion, splitter=splitter)
        with registered(TestPlugin(), name="histogram-tests"):
            assert model.fit(X[columns], y).tree_.feature[0] == 0


def _same_tree(a, b) -> bool:
    """Bit-identical trees: every node array, NaN where NaN."""
    fields = ("feature", "threshold", "statistics", "weight", "n_samples", "impurity")
    fields += ("child_start", "child_ids", "child_shares", "depth")
    return all(
        np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True) for name in fields
    )


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 2**31 - 1),
    n_rows=st.integers(600, 3000),
    n_features=st.integers(1, 9),
    missing=st.sampled_from([0.0, 0.1]),
    regression=st.booleans(),
)
def test_a_threaded_fit_grows_the_one_thread_tree(
    monkeypatch, seed, n_rows, n_features, missing, regression
):
    """Issue 59: with n_threads > 1 the histogram grower splits the large nodes on threads
    (histograms over chunks of features) and grows the rest as subtree tasks; the tree is
    the one thread's, bit for bit, for 2 and 4 threads (the thresholds that keep small
    data on one thread lowered here, so small data takes the threaded path)."""
    from treekit_histogram import threads

    from treekit_core import TreeRegressor

    monkeypatch.setattr(threads, "PARALLEL_MIN_WORK", 1)
    monkeypatch.setattr(threads, "MIN_TASK_ROWS", 50)
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features)).round(2)  # repeated values: ties between bins
    X[rng.random(X.shape) < missing] = np.nan
    signal = np.nan_to_num(X[:, 0]) - 0.5 * np.nan_to_num(X[:, -1])
    estimator = TreeRegressor if regression else TreeClassifier
    y = signal + rng.normal(size=n_rows) if regression else (signal > 0).astype(int)
    weight = rng.integers(0, 3, n_rows).astype(float)  # zero weights: rows left out
    trees = [
        estimator(splitter="histogram", n_threads=t, max_depth=10, min_samples_leaf=3)
        .fit(X, y, sample_weight=weight)
        .tree_
        for t in (1, 2, 4)
    ]
    assert trees[0].n_nodes > 1
    assert _same_tree(trees[0], trees[1]) and _same_tree(trees[0], trees[2])


def test_the_threaded_path_is_taken(monkeypatch):
    """The test above exercises threads: with the thresholds lowered, a 2-thread fit calls
    grow_with_threads (and a 1-thread fit does not)."""
    from treekit_histogram import splitter, threads

    monkeypatch.setattr(threads, "PARALLEL_MIN_WORK", 1)
    calls = []
    original = splitter.grow_with_threads
    monkeypatch.setattr(
        splitter, "grow_with_threads", lambda *a: calls.append(a[7]) or original(*a)
    )
    X = np.random.default_rng(0).normal(size=(400, 3))
    y = (X[:, 0] > 0).astype(int)
    TreeClassifier(splitter="histogram", n_threads=1).fit(X, y)
    assert calls == []
    TreeClassifier(splitter="histogram", n_threads=2).fit(X, y)
    assert calls == [2]


@pytest.mark.parametrize("n_threads", [2, 4])
def test_threads_sum_blocks_of_rows_as_one_thread_does(monkeypatch, n_threads):
    """Issue 59: nodes larger than a block of rows (HISTOGRAM_BLOCK_ROWS) have their
    histograms summed block by block on the threads and the blocks added in order; a
    regression (sums of y, which depend on the order of addition) on 3.2 blocks of rows
    grows the one-thread tree bit for bit, with missing values and weights."""
    from treekit_histogram import threads
    from treekit_histogram.kernels import HISTOGRAM_BLOCK_ROWS

    from treekit_core import TreeRegressor

    monkeypatch.setattr(threads, "PARALLEL_MIN_WORK", 1)
    n = int(3.2 * HISTOGRAM_BLOCK_ROWS)
    rng = np.random.default_rng(5)
    X = rng.normal(size=(n, 4))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = np.sin(3 * np.nan_to_num(X[:, 0])) + rng.normal(0, 0.3, n) * 1e3 / 7
    weight = rng.random(n)
    fit = lambda t: TreeRegressor(splitter="histogram", n_threads=t, max_depth=6).fit(  # noqa: E731
        X, y, sample_weight=weight
    )
    one = fit(1).tree_
    assert one.n_samples[0] > HISTOGRAM_BLOCK_ROWS and one.n_nodes > 31
    assert _same_tree(one, fit(n_threads).tree_)


def _histogram_case(weights, order, seed=1, n_stats=2):
    """(codes features x rows, row table of ``n_stats`` statistics, index) of a node of
    more than two blocks of rows (``order`` "permuted"; "in_order": every row in
    increasing order, a boosting round's root; "sparse": a fifth of the rows in increasing
    order, prefetched) with 8 bins and 9 features (unit rows' passes, one or two
    statistics summed: five and four features)."""
    from treekit_histogram.kernels import HISTOGRAM_BLOCK_ROWS

    n, bins, n_features = 2 * HISTOGRAM_BLOCK_ROWS + 123, 8, 9
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, bins, size=(n, n_features)).astype(np.uint8)
    weight = {"fractions": rng.random(n), "ones": np.ones(n)}.get(weights)
    if weight is None:
        weight = rng.random(n)
    index = {
        "permuted": rng.permutation(n),
        "in_order": np.arange(n),
        "sparse": np.sort(rng.choice(n, size=n // 5, replace=False)),
    }[order].astype(np.int64)
    if weights == "ones_then_fractions":
        weight[index[:HISTOGRAM_BLOCK_ROWS]] = 1.0
    statistics = [rng.normal(size=n) * 1e3, rng.normal(size=n), rng.random(size=n)]
    rows = np.column_stack([weight, *statistics[:n_stats]])
    return np.ascontiguousarray(codes.T), rows, index


@pytest.mark.parametrize("order", ["permuted", "in_order", "sparse"])
@pytest.mark.parametrize("weights", ["fractions", "ones", "ones_then_fractions"])
@pytest.mark.parametrize(
    "summed, n_stats",
    [([0, 1], 2), ([0], 2), ([1], 2), ([0, 1], 3)],  # the last: the Newton gain's rows
)
def test_a_histogram_adds_its_rows_in_order(weights, summed, n_stats, order):
    """The summation rule by hand (numpy's unbuffered add.at, row by row in the index's
    order, over more than two blocks of gathered rows): each (feature, bin) adds its rows
    in the node's order, so the bits do not depend on the blocks or on which features a
    call (a thread) sums (tested on two threads); the statistics not ``summed`` are 0.
    Rows of weight 1 count in
    one channel: where the first block weighs 1 and the others not, a bin's count and
    weight are the first block's count plus the others' counts and weights. The same for
    a node of every row in order (its codes read in place) and a sparse node's
    (prefetched)."""
    from concurrent.futures import ThreadPoolExecutor

    from treekit_histogram.kernels import CHANNELS, HISTOGRAM_BLOCK_ROWS
    from treekit_histogram.threads import build_histogram_on_threads, compiled_histogram_kernel

    codes_by_feature, rows, index = _histogram_case(weights, order, n_stats=n_stats)
    codes, weight = codes_by_feature.T, rows[:, 0]
    n_features, n, bins = codes.shape[1], index.size, 8
    hist = np.full((n_features, bins, CHANNELS + n_stats), np.nan)
    side_sums = np.full(n_stats, np.nan)
    compiled_histogram_kernel("build_histogram")(
        codes_by_feature, rows, index, 0, n, hist, np.array(summed), side_sums
    )

    def one_pass(selected, column):
        out = np.zeros((n_features, bins))
        for f in range(n_features):
            np.add.at(out[f], codes[selected, f], column[selected])
        return out

    # on threads, uneven ranges of features (threads.feature_chunks' are whole passes):
    # the same bits, the left-out sums from the first range's gathering
    on_threads, threaded_sums = np.full_like(hist, np.nan), np.full(n_stats, np.nan)
    with ThreadPoolExecutor(2) as pool:
        build_histogram_on_threads(
            pool,
            [np.arange(2), np.arange(2, n_features)],
            codes_by_feature,
            rows,
            index,
            0,
            n,
            on_threads,
            np.array(summed),
            threaded_sums,
        )
    assert np.array_equal(on_threads, hist) and np.array_equal(
        threaded_sums, side_sums, equal_nan=True
    )
    ones = np.ones(rows.shape[0])
    if weights == "ones_then_fractions":
        first, rest = index[:HISTOGRAM_BLOCK_ROWS], index[HISTOGRAM_BLOCK_ROWS:]
        unit_count = one_pass(first, ones)
        assert np.array_equal(hist[:, :, 0], unit_count + one_pass(rest, ones))
        assert np.array_equal(hist[:, :, 1], unit_count + one_pass(rest, weight))
    else:
        assert np.array_equal(hist[:, :, 0], one_pass(index, ones))
        assert np.array_equal(hist[:, :, 1], one_pass(index, weight))
    for k in range(n_stats):
        expected = one_pass(index, rows[:, 1 + k]) if k in summed else np.zeros((n_features, bins))
        assert np.array_equal(hist[:, :, CHANNELS + k], expected)
        # a left-out statistic's sum over the rows, in their order; the others untouched
        left_out = np.nan
        if k not in summed:
            total = 0.0
            for r in index:
                total += rows[r, 1 + k]
            left_out = total
        assert np.array_equal(side_sums[k], left_out, equal_nan=True)


def _built_cases():
    """The bytes of the histogram and left-out sums of each :func:`_histogram_case` of
    unit rows (one statistic summed and two; the table with its weights and without), as
    ``build_histogram`` builds them here."""
    from treekit_histogram.threads import compiled_histogram_kernel

    for order in ("permuted", "in_order", "sparse"):
        for summed, n_stats in (([0], 2), ([0, 1], 2), ([0, 1], 3)):
            codes, rows, index = _histogram_case("ones", order, n_stats=n_stats)
            for table in (rows, np.ascontiguousarray(rows[:, 1:])):  # without its weights
                hist, side_sums = np.zeros((9, 8, 2 + n_stats)), np.zeros(n_stats)
                compiled_histogram_kernel("build_histogram")(
                    codes, table, index, 0, index.size, hist, np.array(summed), side_sums
                )
                yield hist.tobytes() + side_sums.tobytes()


_BUILD_WITHOUT_THE_JIT = """
import sys
sys.path.insert(0, sys.argv[1])
from test_histogram import _built_cases
for built in _built_cases():
    print(built.hex())
"""


def test_a_histogram_builds_the_same_without_the_jit():
    """The builds' unrolled passes (unsigned offsets into flat views, a node's rows in
    order read in place, prefetching) as plain Python (``NUMBA_DISABLE_JIT=1``: numpy
    checks every index, numba none) give the compiled bits."""
    import os
    import subprocess
    import sys

    expected = list(_built_cases())
    run = subprocess.run(
        [sys.executable, "-c", _BUILD_WITHOUT_THE_JIT, os.path.dirname(__file__)],
        capture_output=True,
        text=True,
        env={**os.environ, "NUMBA_DISABLE_JIT": "1"},
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == [found.hex() for found in expected]


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 2**31 - 1),
    leaves=st.integers(2, 40),
    missing=st.sampled_from([0.0, 0.1]),
    regression=st.booleans(),
    threads=st.sampled_from([1, 3]),
)
def test_best_first_in_steps_is_the_node_by_node_loops_tree(
    monkeypatch, seed, leaves, missing, regression, threads
):
    """max_leaf_nodes: the histogram splitter's best-first grower (compiled steps, the
    larger child's histogram by subtraction, threads for large nodes) grows the tree the
    core's node-by-node loop grows best first with this splitter, bit for bit."""
    from treekit_histogram import best_first, splitter
    from treekit_histogram import threads as threaded

    from treekit_core import TreeRegressor

    monkeypatch.setattr(threaded, "PARALLEL_MIN_WORK", 1)
    monkeypatch.setattr(best_first, "PARALLEL_NODE_ROWS", 1)  # small data on the threads
    rng = np.random.default_rng(seed)
    n = int(rng.integers(300, 2000))
    X = rng.normal(size=(n, 4)).round(2)
    X[rng.random(X.shape) < missing] = np.nan
    signal = np.nan_to_num(X[:, 0]) - 0.5 * np.nan_to_num(X[:, 1]) ** 2
    estimator = TreeRegressor if regression else TreeClassifier
    # whole numbers: every sum exact in any order, so the histograms the steps subtract
    # and the loop sums hold the same bits (with fractions near-equal drops may differ in
    # the last bit and pick another feature, as the depth-first grower's may)
    noisy = np.round(4 * signal + rng.normal(size=n))
    y = noisy if regression else (signal > 0).astype(int)
    weight = rng.integers(1, 3, n).astype(float)
    make = lambda: estimator(  # noqa: E731
        splitter="histogram", max_leaf_nodes=leaves, min_samples_leaf=3, n_threads=threads
    )
    stepped = make().fit(X, y, sample_weight=weight).tree_
    with monkeypatch.context() as patched:
        patched.setattr(splitter.Histogram, "build_tree", lambda *args: None)
        looped = make().fit(X, y, sample_weight=weight).tree_
    assert stepped.n_leaves <= leaves
    assert _same_tree(stepped, looped)


def test_several_label_columns_grow_the_exhaustive_tree_on_few_values():
    """A 2-D y of labels (two outputs, class_label_sets): where every value has a bin,
    the fused histogram grower and the exhaustive splitter grow the same tree of several
    outputs, each output predicting the same labels and shares."""
    from treekit_core.datasets import load_dataset

    data = load_dataset("wisconsin", dropna=True)  # integer features 1..10
    Y = np.column_stack([data.y, (data.X[:, 0] > 5).astype(int)])
    X = data.X[:, 1:]
    exact = fit("exhaustive", X, Y, max_depth=6)
    binned = fit("histogram", X, Y, max_depth=6)
    assert exact.composition_.target.name == "class_label_sets"
    assert_same_structure(exact.tree_, binned.tree_)
    np.testing.assert_array_equal(exact.predict(X), binned.predict(X))
    for a, b in zip(exact.predict_proba(X), binned.predict_proba(X), strict=True):
        np.testing.assert_allclose(a, b, atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(30, 400),
    distinct=st.sampled_from([3, 40, 1000]),
    leaves=st.integers(2, 20),
    missing=st.booleans(),
    depth_wise=st.booleans(),
)
def test_training_leaves_from_the_growth_are_the_walks_of_x(
    seed, n, distinct, leaves, missing, depth_wise
):
    """Issue 60: boosting reads every training row's leaf from the splitter
    (``training_leaves``: the rows' order its growth left) instead of walking X; on the
    rows the tree grew on it is the leaf the walk of X finds, row for row, a row with a
    missing value included (it went, whole, where its node's training rows went)."""
    from treekit_core import TreeRegressor

    rng = np.random.default_rng(seed)
    X = rng.integers(0, distinct, size=(n, 4)) * 0.5 + rng.normal(size=(n, 4)) * (distinct > 40)
    if missing:
        X[rng.random(X.shape) < 0.1] = np.nan
    y = np.nan_to_num(X[:, 0]) + rng.normal(size=n)
    shape = {"max_depth": 4} if depth_wise else {"max_leaf_nodes": leaves, "max_depth": None}
    model = TreeRegressor(splitter="histogram", **shape).fit(X, y)
    data = TrainingData(
        np.ascontiguousarray(X),
        np.column_stack([y, y * y]),
        np.ones(n),
        None,
        n_categories=np.zeros(4, dtype=np.int64),
        training_leaves_wanted=True,
    )
    tree = model.composition_.grow(data, np.random.default_rng(0))  # on this data
    found = model.composition_.splitter.training_leaves(tree, data)
    walked = np.empty(n, dtype=np.int64)
    for r in range(n):  # the walk of X by hand: x <= threshold goes left, a missing
        node = 0  # value where the node's training rows with one went
        while tree.children_left[node] >= 0:
            x = X[r, tree.feature[node]]
            left = x <= tree.threshold[node]
            if np.isnan(x):
                left = tree.child_shares[tree.child_start[node]] == 1.0
            node = tree.children_left[node] if left else tree.children_right[node]
        walked[r] = node
    np.testing.assert_array_equal(found, walked)
    assert model.composition_.splitter.training_leaves(tree, data) is None  # handed over once


def test_training_leaves_once_per_tree_grown_on_every_row_where_wanted():
    """The splitter answers, once, for each tree it grew on data that asked for its
    leaves (``training_leaves_wanted``), every row holding weight, in any order after
    the growth (a forest asks after its last tree); None for a tree it did not grow
    (another splitter's), a second time, where the data did not ask (nothing was kept),
    or where some rows have no weight (they are in no leaf's rows)."""
    from treekit_core import TreeRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = X[:, 0] + rng.normal(size=200)
    model = TreeRegressor(splitter="histogram", max_depth=3).fit(X, y)
    data = TrainingData(
        X, np.column_stack([y, y * y]), np.ones(200), None, training_leaves_wanted=True
    )
    composition, splitter = model.composition_, model.composition_.splitter
    first = composition.grow(data, np.random.default_rng(0))
    second = composition.grow(data, np.random.default_rng(0))
    exhaustive = TreeRegressor(max_depth=3).fit(X, y)
    assert splitter.training_leaves(exhaustive.tree_, data) is None
    np.testing.assert_array_equal(splitter.training_leaves(second, data), model.apply(X))
    np.testing.assert_array_equal(splitter.training_leaves(first, data), model.apply(X))
    assert splitter.training_leaves(first, data) is None  # handed over
    unasked = attrs.evolve(data, training_leaves_wanted=False)
    assert (
        splitter.training_leaves(composition.grow(unasked, np.random.default_rng(0)), data) is None
    )
    weight = np.ones(200)
    weight[:50] = 0.0
    holed = attrs.evolve(data, weight=weight)
    assert (
        splitter.training_leaves(composition.grow(holed, np.random.default_rng(0)), holed) is None
    )


@pytest.mark.parametrize(
    "case", ["every row", "subsample", "missing values", "missing, subsample", "depth-wise"]
)
def test_boosting_with_the_splitters_leaves_is_boosting_with_the_walk(monkeypatch, case):
    """Issue 60: a boosted model whose rounds read the training rows' leaves from the
    splitter (the rows as the growth left them) is the model whose rounds walk X, bit for
    bit; the splitter answered in every round where every row holds weight (missing
    values included)."""
    from treekit_histogram import splitter as histogram_splitter

    from treekit_core import BoostingRegressor

    rng = np.random.default_rng(7)
    X = rng.normal(size=(3000, 5))
    if case.startswith("missing"):
        X[rng.random(X.shape) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0]) + np.sin(3 * np.nan_to_num(X[:, 1])) + rng.normal(size=3000)
    params = {"n_estimators": 15, "splitter": "histogram", "random_state": 0}
    params.update(
        {"max_depth": 3} if case == "depth-wise" else {"max_leaf_nodes": 12, "max_depth": None}
    )
    if "subsample" in case:
        params["subsample"] = 0.7
    answered = []
    own = histogram_splitter.Histogram.training_leaves

    def counting(self, tree, data):
        found = own(self, tree, data)
        answered.append(found is not None)
        return found

    monkeypatch.setattr(histogram_splitter.Histogram, "training_leaves", counting)
    fast = BoostingRegressor(**params).fit(X, y)
    monkeypatch.setattr(histogram_splitter.Histogram, "training_leaves", lambda *a: None)
    walked = BoostingRegressor(**params).fit(X, y)
    np.testing.assert_array_equal(fast.predict(X), walked.predict(X))
    np.testing.assert_array_equal(fast.train_score_, walked.train_score_)
    assert len(answered) == 15
    # every round without a subsample (the growth's rows), none with one (rows of no
    # weight are in no leaf's rows: the walk of X decides)
    assert answered == [("subsample" not in case)] * 15


@pytest.mark.parametrize("missing", [False, True])
def test_quantiles_read_the_growth_s_leaves_as_the_walk_finds_them(monkeypatch, missing):
    """A histogram tree's training rows' leaves come from the growth's row order
    (``training_leaves``) where it can say them: the kept leaf members, and so the
    quantiles, equal the walk's."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(2000, 4))
    if missing:
        X[rng.random(X.shape) < 0.05] = np.nan
    y = X[:, 0] * 2 + rng.normal(size=2000)
    asked = []
    splitter_type = Histogram
    original = splitter_type.training_leaves
    monkeypatch.setattr(
        splitter_type,
        "training_leaves",
        lambda self, tree, data: asked.append(1) or original(self, tree, data),
    )
    fast = TreeRegressor(splitter="histogram", max_depth=6).fit(X, np.nan_to_num(y))
    monkeypatch.setattr(splitter_type, "training_leaves", lambda self, tree, data: None)
    walked = TreeRegressor(splitter="histogram", max_depth=6).fit(X, np.nan_to_num(y))
    assert asked == [1]
    assert_same_quantiles(fast, walked, X)


@pytest.mark.parametrize("growth", ["one_call", "threads", "best_first", "node_by_node"])
def test_a_regression_trees_bins_leave_out_the_sum_of_squares(monkeypatch, growth):
    """squared_error's sum of y^2 cancels out of every drop
    (Criterion.drop_free_statistics): the bins sum y only, each child's sum of y^2 comes
    from its rows, and the tree is the one grown from bins that sum both (the same cuts,
    the node statistics and impurities to rounding), however it grows: in one call, on
    threads, best first, or node by node under a monotonic constraint (the node by node
    loop sums a node's statistics itself)."""
    from treekit_histogram import splitter, threads

    monkeypatch.setattr(threads, "PARALLEL_MIN_WORK", 1)
    rng = np.random.default_rng(11)
    X = rng.normal(size=(3000, 5))
    X[rng.random(X.shape) < 0.05] = np.nan
    # whole numbers: every sum exact in any order, so cuts of the same rows on two features
    # tie in both trees (with fractions their sums' last bits differ, and so may the first
    # of the best, as between any two summation orders); large ones, so that two cuts of
    # other rows are seldom tied (their drops' last bits differ between the trees)
    signal = np.sin(2 * np.nan_to_num(X[:, 0])) + np.nan_to_num(X[:, 1])
    y = np.round(1000 * (signal + rng.normal(0, 0.5, 3000)))
    settings = {
        "one_call": {},
        "threads": {"n_threads": 2},
        "best_first": {"max_leaf_nodes": 40, "max_depth": None},
        "node_by_node": {"monotonic_cst": [0, 1, 0, 0, 0]},
    }[growth]
    make = lambda: TreeRegressor(splitter="histogram", **{"max_depth": 8, **settings})  # noqa: E731
    asked = []
    original = splitter.summed_statistics
    monkeypatch.setattr(
        splitter,
        "summed_statistics",
        lambda *a, **k: asked.append(original(*a, **k)) or asked[-1],
    )
    left_out = make().fit(X, y).tree_
    assert [list(s) for s in asked] == [[0]]
    monkeypatch.setattr(
        splitter, "summed_statistics", lambda criterion, data, **k: np.array([0, 1])
    )
    summed = make().fit(X, y).tree_
    assert left_out.n_nodes == summed.n_nodes > 60
    for name in ("feature", "threshold", "n_samples", "child_ids", "depth"):
        assert np.array_equal(getattr(left_out, name), getattr(summed, name), equal_nan=True)
    for name in ("statistics", "weight", "impurity", "value"):
        np.testing.assert_allclose(
            getattr(left_out, name), getattr(summed, name), rtol=1e-9, atol=1e-9
        )


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(1, 300),
    index_type=st.sampled_from([np.int32, np.int64]),
)
def test_a_partition_keeps_each_sides_order(compiled, seed, n, index_type):
    """kernels.partition_rows (unsigned positions, no branch) against numpy's stable
    partition of a node's rows: the rows whose bin goes left first, each side in its
    order, the rows outside the node untouched; compiled and as plain Python (numba checks
    no index)."""
    from treekit_histogram import kernels

    from treekit_core.kernels import python_function

    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 6, size=(2, n)).astype(np.uint8)
    index = rng.permutation(n).astype(index_type)
    start = int(rng.integers(0, n))
    end = int(rng.integers(start, n + 1))
    bin_left = rng.integers(0, 2, size=7).astype(np.uint8)
    goes_left = bin_left[codes[1, index[start:end]]] == 1
    expected = index.copy()
    expected[start:end] = np.concatenate(
        [index[start:end][goes_left], index[start:end][~goes_left]]
    )
    partition = kernels.partition_rows
    partition = partition if compiled else python_function(partition)
    scratch = np.full(n, -1, dtype=index_type)
    n_left = partition(codes, index, start, end, 1, bin_left, scratch)
    assert n_left == goes_left.sum() and np.array_equal(index, expected)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 200), n_stats=st.integers(1, 4))
def test_a_nodes_statistics_add_its_rows_in_order(compiled, seed, n, n_stats):
    """kernels.rows_statistics (two or three statistics in local sums, more in ``sums``):
    the weight and each statistic summed row by row in the node's order, to the bit."""
    from treekit_histogram import kernels

    from treekit_core.kernels import python_function

    rng = np.random.default_rng(seed)
    rows = rng.normal(size=(n, 1 + n_stats)) * 10.0 ** rng.integers(-8, 9, size=(n, 1))
    index = rng.permutation(n).astype(np.int32)
    start = int(rng.integers(0, n))
    end = int(rng.integers(start, n + 1))
    statistics = kernels.rows_statistics
    statistics = statistics if compiled else python_function(statistics)
    sums = np.full(n_stats, np.nan)
    weight = statistics(rows, index, start, end, sums)
    expected = np.zeros(1 + n_stats)
    for r in index[start:end]:
        expected += rows[r]  # elementwise: each column's running sum in the rows' order
    assert weight == expected[0] and sums.tobytes() == expected[1:].tobytes()


def test_threads_take_ranges_of_features_their_passes_cover():
    """threads.feature_chunks: contiguous ranges covering every feature once, one range a
    thread at most: equal ranges or whole passes of four, whichever leaves the largest
    range the least to sum (a feature summed alone counting twice; ties: fewer ranges),
    by the passes of the bins' summed statistics."""
    from treekit_histogram.threads import feature_chunks

    for d, threads, summed, sizes in [
        (20, 2, 1, [10, 10]),  # two passes of five each, not 12 (three of four) and 8
        (20, 16, 1, [4] * 5),  # as cheap as 16 ranges of one or two: fewer gathers
        (21, 2, 1, [12, 9]),  # 11 would be 5 + 5 + 1 alone
        (13, 2, 1, [8, 5]),  # 7 would be 5 + 1 + 1
        (3, 2, 1, [2, 1]),  # features alone: equal ranges
        (20, 2, 2, [10, 10]),  # two statistics: passes of five too
        (21, 2, 2, [12, 9]),
        (20, 3, 3, [7, 7, 6]),  # more statistics: every feature alone, equal ranges
    ]:
        chunks = feature_chunks(d, threads, summed)
        assert [c.size for c in chunks] == sizes
        assert np.array_equal(np.concatenate(chunks), np.arange(d))


@pytest.mark.parametrize("remaining", range(1, 30))
def test_passes_of_four_and_five_cover_a_range(remaining):
    """kernels.pass_width: passes of five where what is left stays covered by fours and
    fives, of four else, features alone only where no pass fits (unit rows, one or two
    summed statistics); weighted rows one feature at a time."""
    from treekit_histogram.kernels import pass_width

    def widths(unit_summed):
        found, left = [], remaining
        while left > 0:
            found.append(int(pass_width(left, unit_summed)))
            left -= found[-1]
        return found

    passes = widths(1)
    assert sum(passes) == remaining and set(passes) <= {1, 4, 5}
    alone = passes.count(1)
    # a sum of fours and fives covers every count from 12 on, and 4, 5, 8, 9, 10
    assert alone == 0 if remaining in (4, 5, 8, 9, 10) or remaining >= 12 else alone > 0
    assert passes == sorted(passes, reverse=True)  # fives first, features alone last
    assert widths(2) == passes  # two statistics: the same passes
    assert widths(0) == widths(3) == [1] * remaining  # weighted rows, three statistics


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), d=st.integers(1, 9), max_bins=st.integers(2, 255))
def test_every_feature_is_coded_as_a_search_of_its_edges(seed, d, max_bins):
    """The coding kernel searches four features side by side and the rest one at a time:
    every feature's code is the number of its edges below the value (numpy's
    searchsorted), NaN the missing code, whichever way it was searched."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 600))
    X = rng.normal(size=(n, d)) * rng.choice([1e-3, 1.0, 1e6], size=d)
    X[:, ::2] = np.round(X[:, ::2], 1)  # ties and few distinct values in some columns
    X[rng.random(X.shape) < 0.1] = np.nan
    binned = bin_features(X, max_bins)
    for f in range(d):
        edges = binned.edges[f, : binned.n_value_bins[f] - 1]
        known = ~np.isnan(X[:, f])
        np.testing.assert_array_equal(
            binned.codes[f, known], np.searchsorted(edges, X[known, f], side="left")
        )
        assert (binned.codes[f, ~known] == max_bins).all()


def test_boosting_rounds_write_one_row_table(monkeypatch):
    """The splitter writes each round's row table (weighted rows) into the buffer its
    thread kept from the round before (boosting's rounds share their data's cache): one
    allocation for the fit, and the same model as fresh tables give."""
    import treekit_core.kernels as kernels
    from treekit_core import BoostingRegressor

    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 4))
    y = X[:, 0] - X[:, 1] ** 2 + rng.normal(0, 0.3, 500)
    weight = rng.random(500) + 0.5
    original, tables = kernels.row_table, []

    def recorded(evidence, weight, out=None):
        tables.append(original(evidence, weight, out=out))
        return tables[-1]

    monkeypatch.setattr(kernels, "row_table", recorded)
    fit = lambda: BoostingRegressor(n_estimators=5, max_depth=3, random_state=0).fit(  # noqa: E731
        X, y, sample_weight=weight
    )
    kept = fit()
    assert len(tables) == 5 and all(t is tables[0] for t in tables)
    monkeypatch.setattr(
        kernels, "row_table", lambda evidence, weight, out=None: original(evidence, weight)
    )
    np.testing.assert_array_equal(kept.predict(X), fit().predict(X))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("leaves", [None, 9])
def test_unit_rows_grow_from_their_evidence(monkeypatch, threads, leaves):
    """Rows that all weigh exactly 1 (unweighted boosting rounds, an unweighted tree) are
    read from their evidence, no row table written; the models are those grown from the
    row table of weights 1, bit for bit (depth first and best first, one thread and two)."""
    from treekit_histogram import splitter
    from treekit_histogram import threads as threaded

    import treekit_core.kernels as kernels
    from treekit_core import BoostingClassifier, BoostingRegressor, TreeRegressor

    monkeypatch.setattr(threaded, "PARALLEL_MIN_WORK", 1)
    rng = np.random.default_rng(7)
    n = 3000
    X = rng.normal(size=(n, 5))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) ** 2 + rng.normal(0, 0.3, n)
    labels = (y > np.median(y)).astype(int)
    settings = dict(max_leaf_nodes=leaves, max_depth=None if leaves else 4, n_threads=threads)
    models = [
        lambda: BoostingRegressor(n_estimators=4, **settings).fit(X, y),
        lambda: BoostingClassifier(n_estimators=4, **settings).fit(X, labels),
        lambda: TreeRegressor(splitter="histogram", **settings).fit(X, y),
        lambda: TreeClassifier(splitter="histogram", **settings).fit(X, labels),
    ]
    original, tables = kernels.row_table, []

    def recorded(evidence, weight, out=None):
        tables.append(weight)
        return original(evidence, weight, out=out)

    monkeypatch.setattr(kernels, "row_table", recorded)
    # a classifier's probabilities: their bits, not only the labels
    predict = lambda model: getattr(model, "predict_proba", model.predict)(X)  # noqa: E731
    from_evidence = [predict(make()) for make in models]
    assert tables == []
    table_always = splitter.Histogram._row_table
    monkeypatch.setattr(
        splitter.Histogram,
        "_row_table",
        lambda self, data, unit_rows=False: table_always(self, data),
    )
    from_tables = [predict(make()) for make in models]
    assert len(tables) > 0
    for found, expected in zip(from_evidence, from_tables, strict=True):
        np.testing.assert_array_equal(found, expected)


def test_a_table_without_weights_sums_as_one_with_weights_of_one():
    """The kernels reading a row table of unit rows without its weight column (the
    evidence itself) give the bits of the table with weights of 1: histograms (one and two
    summed statistics, permuted, in order, sparse), the left-out sums, a node's
    statistics and weight."""
    from treekit_histogram.threads import compiled_histogram_kernel

    build = compiled_histogram_kernel("build_histogram")
    statistics = compiled_histogram_kernel("rows_statistics")
    left_out = compiled_histogram_kernel("sum_left_out")
    for order in ("permuted", "in_order", "sparse"):
        # the last: the Newton gain's rows (two statistics summed, one left out)
        for summed, n_stats in (([0], 2), ([1], 2), ([0, 1], 2), ([0, 1], 3)):
            codes, rows, index = _histogram_case("ones", order, n_stats=n_stats)
            evidence = np.ascontiguousarray(rows[:, 1:])
            found = []
            for table in (rows, evidence):
                hist = np.zeros((9, 8, 2 + n_stats))
                side_sums, sums = np.full(n_stats, np.nan), np.zeros(n_stats)
                build(codes, table, index, 0, index.size, hist, np.array(summed), side_sums)
                weight = statistics(table, index, 0, index.size, sums)
                apart = np.full(n_stats, np.nan)
                left_out(table, index, 3, index.size - 5, np.array(summed), apart)
                found.append((hist, side_sums, weight, sums, apart))
            for with_weights, without in zip(*found, strict=True):
                assert np.array_equal(with_weights, without, equal_nan=True), (order, summed)


def test_the_binning_runs_on_the_fits_threads(monkeypatch):
    """Splitter.share_across_trees gets the threads of the fit: a boosting fit on two
    threads bins X on two, a forest of two jobs too (where its trees grow one at a time:
    one tree's kernels' threads, every CPU for a forest); the codes, so the models, are
    those of one thread."""
    from treekit_histogram import splitter

    from treekit_core import BoostingRegressor, ForestRegressor

    original, calls = splitter.bin_features, []

    def recorded(X, max_bins, n_threads=1):
        calls.append(n_threads)
        return original(X, max_bins, n_threads)

    monkeypatch.setattr(splitter, "bin_features", recorded)
    rng = np.random.default_rng(11)
    X = rng.normal(size=(400, 3))
    y = X[:, 0] + rng.normal(0, 0.2, 400)
    boosted = [BoostingRegressor(n_estimators=3, n_threads=t).fit(X, y) for t in (1, 2)]
    # the threads the fit may use: two, where this machine has them
    assert calls == [1, boosted[1].composition_.fit_threads()]
    np.testing.assert_array_equal(boosted[0].predict(X), boosted[1].predict(X))
    calls.clear()
    forests = [
        ForestRegressor(n_estimators=4, splitter="histogram", n_jobs=jobs, random_state=0).fit(X, y)
        for jobs in (None, 2)
    ]
    # one tree at a time: its kernels' threads (every CPU); two jobs: two, at most those
    every_cpu = forests[0].composition_.fit_threads()
    assert calls == [every_cpu, min(every_cpu, 2)]
    np.testing.assert_array_equal(forests[0].predict(X), forests[1].predict(X))
