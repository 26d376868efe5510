"""Best-first growth (``max_leaf_nodes``, issue 60: LightGBM's leaf-wise trees and
scikit-learn's best-first builder): the same trees as scikit-learn's, a leaf count that is
kept, and every composition of the node-by-node loop (missing values, constraints)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from treekit_core import BoostingRegressor, TreeClassifier, TreeRegressor


def _data(n=500, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5)).astype(np.float32).astype(np.float64)
    y = 2 * X[:, 0] + np.sin(3 * X[:, 1]) + rng.normal(0, 0.3, n)
    return X, y


@pytest.mark.parametrize("leaves", [2, 5, 17, 40, 150])
def test_best_first_trees_are_scikit_learn_s(leaves):
    """DecisionTree*(max_leaf_nodes=k): the same partition of the training rows (equal
    predictions on them) and the same leaf count, regression and classification."""
    X, y = _data()
    theirs = DecisionTreeRegressor(max_leaf_nodes=leaves, random_state=0).fit(X, y)
    ours = TreeRegressor(max_leaf_nodes=leaves).fit(X, y)
    assert ours.get_n_leaves() == theirs.get_n_leaves() == leaves
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), atol=1e-12)
    labels = y > 0
    theirs = DecisionTreeClassifier(max_leaf_nodes=leaves, random_state=0).fit(X, labels)
    ours = TreeClassifier(max_leaf_nodes=leaves).fit(X, labels)
    np.testing.assert_array_equal(ours.predict_proba(X), theirs.predict_proba(X))


def test_the_first_splits_are_numbered_as_scikit_learn_numbers_them():
    """Children get their ids when their parent is split (left, then right), in the order
    of the best improvements: the node arrays of a small tree equal scikit-learn's."""
    X, y = _data()
    theirs = DecisionTreeRegressor(max_leaf_nodes=6, random_state=0).fit(X, y).tree_
    ours = TreeRegressor(max_leaf_nodes=6).fit(X, y).tree_
    np.testing.assert_array_equal(ours.children_left, theirs.children_left)
    np.testing.assert_array_equal(ours.children_right, theirs.children_right)
    np.testing.assert_allclose(ours.threshold[~ours.is_leaf], theirs.threshold[theirs.feature >= 0])


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    leaves=st.integers(2, 30),
    depth=st.sampled_from([None, 2, 4]),
    missing=st.booleans(),
)
def test_a_tree_never_has_more_leaves_than_asked(seed, leaves, depth, missing):
    """At most max_leaf_nodes leaves (fewer only where no leaf may split), under max_depth
    too, with C4.5's shares for missing values; the growth terminates."""
    X, y = _data(200, seed % 1000)
    if missing:
        X[np.random.default_rng(seed).random(X.shape) < 0.1] = np.nan
    tree = TreeRegressor(max_leaf_nodes=leaves, max_depth=depth).fit(X, y).tree_
    assert tree.n_leaves <= leaves
    deep = TreeRegressor(max_depth=depth).fit(X, y).tree_
    assert tree.n_leaves == min(leaves, deep.n_leaves)


def test_bad_max_leaf_nodes_is_named():
    X, y = _data(50)
    for value in (1, 0, 2.5, True):
        with pytest.raises(ValueError, match="max_leaf_nodes"):
            TreeRegressor(max_leaf_nodes=value).fit(X, y)


def test_leaf_wise_boosting_grows_leaf_wise_trees():
    """max_leaf_nodes with max_depth=None: every round's tree has that many leaves
    (LightGBM's num_leaves), and the model equals scikit-learn's gradient boosting with the
    same max_leaf_nodes on training rows."""
    from sklearn.ensemble import GradientBoostingRegressor

    X, y = _data(400)
    settings = dict(n_estimators=20, max_depth=None, max_leaf_nodes=7, learning_rate=0.1)
    ours = BoostingRegressor(splitter="exhaustive", **settings).fit(X, y)
    assert {trees[0].n_leaves for trees in ours.estimators_} == {7}
    theirs = GradientBoostingRegressor(random_state=0, **settings).fit(X, y)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), atol=1e-8)
