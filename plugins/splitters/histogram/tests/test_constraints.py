"""The histogram splitter under monotonic and interaction constraints: its search admits
only cuts that keep the node's value interval (the core's ``within_bounds``), and it is
the exhaustive splitter's tree where every distinct value has a bin."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from treekit_histogram import Histogram

from treekit_core import ForestRegressor, TreeClassifier, TreeRegressor
from treekit_core.testing import check_splitter, monotonic_violation, tree_paths


def _data(seed, n, d, with_missing):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)), 1)  # few distinct values: a bin each
    signal = X[:, 0] - X[:, 1] + rng.normal(size=n)
    if with_missing:
        X[rng.random((n, d)) < 0.1] = np.nan
    return X, signal


def test_the_kit_checks_the_constraints():
    check_splitter(Histogram)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**31 - 1),
    d=st.integers(2, 4),
    signs=st.lists(st.sampled_from([-1, 0, 1]), min_size=4, max_size=4),
    with_missing=st.booleans(),
    regression=st.booleans(),
    pruner=st.sampled_from(["none", "cost_complexity"]),
)
def test_no_histogram_tree_breaks_its_constraint(seed, d, signs, with_missing, regression, pruner):
    cst = signs[:d]
    if not any(cst):
        cst[0] = 1
    X, signal = _data(seed, 150, d, with_missing)
    params = {"splitter": "histogram", "monotonic_cst": cst, "pruner": pruner}
    if regression:
        model = TreeRegressor(**params).fit(X, signal)
        predict = model.predict
    else:
        model = TreeClassifier(**params).fit(X, (signal > 0).astype(int))

        def predict(Z):
            return model.predict_proba(Z)[:, 1]

    assert monotonic_violation(predict, cst, d, missing=with_missing, seed=seed) <= 1e-9


@pytest.mark.parametrize("regression", [False, True])
def test_histogram_tree_is_the_exhaustive_tree_under_constraints(regression):
    X, signal = _data(3, 300, 3, False)
    y = signal if regression else (signal > 0).astype(int)
    estimator = TreeRegressor if regression else TreeClassifier
    params = {"monotonic_cst": [1, -1, 0], "min_samples_leaf": 5}
    histogram = estimator(splitter="histogram", **params).fit(X, y)
    exhaustive = estimator(**params).fit(X, y)
    assert np.array_equal(histogram.tree_.feature, exhaustive.tree_.feature)
    assert np.allclose(histogram.tree_.value, exhaustive.tree_.value, rtol=0, atol=1e-12)


def test_histogram_forest_keeps_interaction_groups():
    X, signal = _data(4, 200, 4, True)
    forest = ForestRegressor(
        n_estimators=4, splitter="histogram", interaction_cst=[[0, 1], [2, 3]], random_state=0
    ).fit(X, signal)
    for tree in forest.estimators_:
        for path in tree_paths(tree):
            assert path <= {0, 1} or path <= {2, 3}, path
