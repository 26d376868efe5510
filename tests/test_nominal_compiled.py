"""Issue 40: the subset and multi-way searches of nominal features run compiled
(``kernels/nominal_search.py``) and choose the questions the Python searches
(``builtins/nominal_subsets.py``, the readable definition) choose."""

import functools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import treekit_core.builtins.splitters as splitters
from treekit_core import TreeClassifier, TreeRegressor
from treekit_core.builtins.nominal_subsets import best_nominal_split
from treekit_core.datasets import load_dataset
from treekit_core.testing import assert_same_tree


def python_search(monkeypatch):
    """The exhaustive splitter searching nominal features in Python."""
    monkeypatch.setattr(
        splitters, "best_nominal_split", functools.partial(best_nominal_split, compiled=False)
    )


def nominal_data(seed, n, d, m, missing, k):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, m, size=(n, d)).astype(float)
    X[rng.random(X.shape) < missing] = np.nan
    y = rng.integers(0, k, size=n)
    y[: min(k, n)] = np.arange(min(k, n))
    weight = rng.uniform(0.3, 2.0, size=n)
    return X, y, weight


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(4, 150),
    d=st.integers(1, 4),
    m=st.integers(2, 14),  # beyond 10 categories: the ordered heuristic for 3+ classes
    missing=st.sampled_from([0.0, 0.15, 0.4]),
    k=st.integers(2, 4),
    multiway=st.booleans(),
    criterion=st.sampled_from(["gini", "entropy"]),
    min_samples_leaf=st.integers(1, 5),
)
def test_compiled_and_python_searches_grow_the_same_tree(
    seed, n, d, m, missing, k, multiway, criterion, min_samples_leaf
):
    """Random nominal data with missing values and fractional weights: the whole tree
    (every node's question, its categories and shares) is the same either way."""
    X, y, weight = nominal_data(seed, n, d, m, missing, k)
    params = dict(
        criterion=criterion,
        categorical_features=list(range(d)),
        min_samples_leaf=min_samples_leaf,
        max_depth=6,
        splitter_params={"nominal_split": "multiway" if multiway else "subset"},
    )
    compiled = TreeClassifier(**params).fit(X, y, sample_weight=weight)
    with pytest.MonkeyPatch.context() as patch:
        python_search(patch)
        reference = TreeClassifier(**params).fit(X, y, sample_weight=weight)
    assert_same_tree(compiled.tree_, reference.tree_, rtol=1e-12, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(4, 150),
    m=st.integers(2, 12),
    missing=st.sampled_from([0.0, 0.2]),
    criterion=st.sampled_from(["squared_error", "rpart_poisson"]),
)
def test_regression_targets_order_categories_alike(seed, n, m, missing, criterion):
    X, _, weight = nominal_data(seed, n, 2, m, missing, 2)
    y = np.random.default_rng(seed).poisson(3.0, n).astype(float) + 1.0
    params = dict(criterion=criterion, categorical_features=[0, 1], max_depth=5)
    compiled = TreeRegressor(**params).fit(X, y, sample_weight=weight)
    with pytest.MonkeyPatch.context() as patch:
        python_search(patch)
        reference = TreeRegressor(**params).fit(X, y, sample_weight=weight)
    assert_same_tree(compiled.tree_, reference.tree_, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["vote", "soybean", "labor", "lenses"])
def test_bundled_nominal_data_sets_grow_the_python_searchs_trees(name, monkeypatch):
    data = load_dataset(name)
    for params in ({}, {"splitter_params": {"gain_ratio": True}}, {"criterion": "entropy"}):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            compiled = TreeClassifier(**params).fit(data.X, data.y)
        with pytest.MonkeyPatch.context() as patch:
            python_search(patch)
            reference = TreeClassifier(**params).fit(data.X, data.y)
        assert_same_tree(compiled.tree_, reference.tree_)


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 15, 16, 17, 31, 53, 64])
def test_sums_are_numpys_to_the_last_bit(n):
    """The kernels add a category list's weights as numpy does (pairwise from 8 values),
    which is what keeps the compiled drops equal to the Python search's."""
    from treekit_core.kernels.compiling import python_function
    from treekit_core.kernels.nominal_search import numpy_sum

    values = np.random.default_rng(n).uniform(0, 1, size=n) * 10.0 ** np.arange(n) % 7.3
    assert python_function(numpy_sum)(values, n) == values.sum()


def python_c45(monkeypatch):
    """C4.5's splitter scoring each nominal feature in Python (the reference)."""
    from treekit_core.builtins.c45_nominal import c45_nominal_split

    def per_feature(state, node, features, min_objects):
        found = {}
        for a, feature in enumerate(features):
            scores = c45_nominal_split(state, node, int(feature), min_objects, False)
            if scores is not None:
                found[a] = scores
        return found

    monkeypatch.setattr(splitters, "c45_multiway_splits", per_feature)


@pytest.mark.parametrize("name", ["vote", "soybean", "labor", "lenses"])
def test_c45_grows_the_python_scorings_trees(name):
    data = load_dataset(name)
    params = dict(splitter="c45", criterion="entropy", pruner="pessimistic")
    compiled = TreeClassifier(**params).fit(data.X, data.y)
    with pytest.MonkeyPatch.context() as patch:
        python_c45(patch)
        reference = TreeClassifier(**params).fit(data.X, data.y)
    assert_same_tree(compiled.tree_, reference.tree_)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(4, 120),
    m=st.integers(2, 8),
    missing=st.sampled_from([0.0, 0.3]),
    k=st.integers(2, 4),
)
def test_c45_compiled_and_python_scorings_agree_on_random_data(seed, n, m, missing, k):
    X, y, weight = nominal_data(seed, n, 3, m, missing, k)
    params = dict(splitter="c45", criterion="entropy", categorical_features=[0, 1, 2])
    compiled = TreeClassifier(**params).fit(X, y, sample_weight=weight)
    with pytest.MonkeyPatch.context() as patch:
        python_c45(patch)
        reference = TreeClassifier(**params).fit(X, y, sample_weight=weight)
    assert_same_tree(compiled.tree_, reference.tree_, rtol=1e-12, atol=1e-12)
