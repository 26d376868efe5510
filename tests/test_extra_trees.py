"""Extremely randomised trees (issue 64): the ``random`` splitter and the ExtraTrees
estimators (treekit_core/builtins/random_splitter.py, estimators/extra_trees.py)."""

import numpy as np
import pytest

from treekit_core import (
    CompositionError,
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    ExtraTreesSurvival,
    SurvivalTree,
    TreeClassifier,
    TreeRegressor,
)
from treekit_core.datasets import load_dataset
from treekit_core.engine.tree import every_node_memberships


def _node_rows(tree, X):
    """Per node, the training rows hard routing sends there (complete X)."""
    from treekit_core.builtins.evaluators import apply_tree

    leaves = apply_tree(tree, X)
    rows, nodes, _ = every_node_memberships(
        tree, np.arange(X.shape[0]), leaves.astype(np.int64), np.ones(X.shape[0])
    )
    return {node: rows[nodes == node] for node in range(tree.n_nodes)}


@pytest.mark.parametrize("nominal", [False, True], ids=["compiled", "node by node"])
def test_every_cut_lies_within_its_nodes_values(nominal):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5))
    y = X[:, 0] + rng.normal(size=600)
    categorical = None
    if nominal:  # a nominal feature: the tree grows node by node
        X[:, 4] = rng.integers(0, 4, 600)
        categorical = [4]
    tree = TreeRegressor(
        splitter="random", min_samples_leaf=3, categorical_features=categorical, random_state=1
    )
    tree = tree.fit(X, y).tree_
    members = _node_rows(tree, X)
    thresholds = np.flatnonzero(~tree.is_leaf & (tree.question == 0))
    assert thresholds.size > 20
    for node in thresholds:
        x = X[members[node], tree.feature[node]]
        threshold = tree.threshold[node]
        assert x.min() <= threshold < x.max(), node
        left = (x <= threshold).sum()
        assert left >= 1 and x.size - left >= 1
    # one cut per feature, not the best: not the exhaustive search's tree
    exhaustive = TreeRegressor(min_samples_leaf=3, categorical_features=categorical)
    assert not np.array_equal(tree.threshold[:3], exhaustive.fit(X, y).tree_.threshold[:3])


def test_a_nominal_features_cut_is_a_random_proper_subset_of_the_categories_present():
    rng = np.random.default_rng(2)
    codes = rng.integers(0, 6, 800).astype(float)
    X = np.column_stack([codes, rng.normal(size=800)])
    y = (codes % 2 == 0).astype(int) ^ (rng.random(800) < 0.1)
    model = TreeClassifier(splitter="random", categorical_features=[0], random_state=3).fit(X, y)
    tree = model.tree_
    members = _node_rows(tree, X)
    masks = []
    for node in np.flatnonzero(~tree.is_leaf & (tree.feature == 0)):
        present = set(np.unique(X[members[node], 0]).astype(int).tolist())
        mask = int(tree.question_params(node)[0])
        first = {c for c in present if mask >> c & 1}
        assert 0 < len(first) < len(present), node
        masks.append(mask)
    assert len(masks) >= 3 and len(set(masks)) > 1  # drawn, not one search's answer


@pytest.mark.parametrize("missing", [False, True], ids=["compiled", "node by node"])
def test_a_seed_gives_the_same_forest_on_any_number_of_jobs(missing):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 6))
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    if missing:
        X[rng.random(X.shape) < 0.03] = np.nan
    forests = [
        ExtraTreesClassifier(n_estimators=6, random_state=7, n_jobs=jobs).fit(X, y)
        for jobs in (1, 2)
    ]
    for a, b in zip(forests[0].estimators_, forests[1].estimators_, strict=True):
        np.testing.assert_array_equal(a.feature, b.feature)
        np.testing.assert_array_equal(a.threshold, b.threshold)
    np.testing.assert_array_equal(forests[0].predict_proba(X), forests[1].predict_proba(X))
    again = ExtraTreesClassifier(n_estimators=6, random_state=7).fit(X, y)
    np.testing.assert_array_equal(again.predict_proba(X), forests[0].predict_proba(X))


def test_the_defaults_are_scikit_learns():
    for model in (ExtraTreesClassifier(), ExtraTreesRegressor(), ExtraTreesSurvival()):
        params = model.get_params()
        assert params["splitter"] == "random" and params["bootstrap"] is False
    assert ExtraTreesClassifier().max_features == "sqrt"
    assert ExtraTreesRegressor().max_features == 1.0


@pytest.mark.parametrize("name", ["wdbc", "pima", "bupa", "haberman"])
def test_accuracy_is_within_a_point_of_scikit_learns_extra_trees(name):
    """Mean held-out accuracy over 40 seeds (a random 70/30 split each), 100 trees, the
    defaults of both. Monte Carlo error: the paired difference's standard error is 0.1-0.5
    points over 40 seeds (bupa, 104 test rows, the largest); over the issue's 10 seeds it
    is a point on bupa, as large as the tolerance, and the first 10 seeds' mean
    differences (-1.4 points on bupa, -1.3 on haberman) were their draw's, not the
    forest's (-0.1 and -0.4 over 40)."""
    from sklearn.ensemble import ExtraTreesClassifier as Theirs

    data = load_dataset(name)
    complete = ~np.isnan(data.X).any(axis=1)
    X, y = data.X[complete], data.y[complete]
    ours, theirs = [], []
    for seed in range(40):
        order = np.random.default_rng(seed).permutation(len(y))
        cut = int(0.7 * len(y))
        train, test = order[:cut], order[cut:]
        ours.append(
            ExtraTreesClassifier(random_state=seed).fit(X[train], y[train]).score(X[test], y[test])
        )
        theirs.append(Theirs(random_state=seed).fit(X[train], y[train]).score(X[test], y[test]))
    assert abs(np.mean(ours) - np.mean(theirs)) <= 0.01, (np.mean(ours), np.mean(theirs))


@pytest.mark.parametrize("name", ["quakes", "airquality"])
def test_r2_is_within_a_point_of_scikit_learns_extra_trees(name):
    """Mean held-out R^2 over 10 seeds (a random 70/30 split each), 100 trees, every
    feature a candidate (both defaults); every tree its own draws."""
    from sklearn.ensemble import ExtraTreesRegressor as Theirs

    data = load_dataset(name)
    complete = ~np.isnan(data.X).any(axis=1)
    X, y = data.X[complete], data.y[complete]
    ours, theirs = [], []
    for seed in range(10):
        order = np.random.default_rng(seed).permutation(len(y))
        cut = int(0.7 * len(y))
        train, test = order[:cut], order[cut:]
        model = ExtraTreesRegressor(random_state=seed).fit(X[train], y[train])
        ours.append(model.score(X[test], y[test]))
        theirs.append(Theirs(random_state=seed).fit(X[train], y[train]).score(X[test], y[test]))
    thresholds = {tuple(tree.threshold[:3]) for tree in model.estimators_}
    assert len(thresholds) == len(model.estimators_)
    assert abs(np.mean(ours) - np.mean(theirs)) <= 0.01, (np.mean(ours), np.mean(theirs))


def test_extra_survival_trees_cut_at_random_and_rank_the_risk():
    from treekit_core.tools.metrics import concordance_index

    data = load_dataset("veteran")
    X, y = data.X, data.y
    model = ExtraTreesSurvival(n_estimators=30, min_samples_leaf=5, random_state=0).fit(X, y)
    risk = model.predict(X)
    assert concordance_index(y["event"], y["time"], risk) > 0.7
    tree = SurvivalTree(splitter="random", min_samples_leaf=5, random_state=0).fit(X, y).tree_
    exhaustive = SurvivalTree(min_samples_leaf=5).fit(X, y).tree_
    assert tree.threshold[0] != exhaustive.threshold[0]


def test_a_criterion_random_cuts_cannot_score_is_refused_naming_both():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(100, 3))
    with pytest.raises(
        CompositionError, match="'random'.*'absolute_error'|'absolute_error'.*'random'"
    ):
        TreeRegressor(criterion="absolute_error", splitter="random").fit(X, X[:, 0])


@pytest.mark.parametrize("nominal", [False, True], ids=["compiled", "node by node"])
def test_values_at_the_ends_of_the_float_range_are_cut_within_them(nominal):
    """A threshold drawn between -1.7e308 and 1.7e308: high - low overflows (numpy's
    uniform refused it), a convex combination does not (the fuzz test found it)."""
    X = np.array([[1.7e308, 0.0], [1e-300, 0.0], [0.0, 1.0], [-1e-300, 1.0], [-1.7e308, 0.0]])
    y = np.array([0, 1, 1, 0, 1])
    categorical = [1] if nominal else None
    for seed in range(20):
        tree = (
            TreeClassifier(splitter="random", categorical_features=categorical, random_state=seed)
            .fit(X, y)
            .tree_
        )
        numeric = ~tree.is_leaf & (tree.feature == 0)
        assert np.isfinite(tree.threshold[numeric]).all()
        assert (np.abs(tree.threshold[numeric]) <= 1.7e308).all()
