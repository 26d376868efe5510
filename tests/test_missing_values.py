"""Missing values the C4.5 way: search on known values, shares down both branches."""

import json
from pathlib import Path

import numpy as np
import pytest

from treekit_core import TreeClassifier
from treekit_core.datasets import load_dataset


def test_a_sample_with_a_missing_value_gets_the_weighted_mixture():
    X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [np.nan]])
    y = np.array([0, 0, 0, 1, 1, 1])
    model = TreeClassifier(max_depth=1).fit(X, y)
    tree = model.tree_
    # the split sees 5 known values; 3 of their weight go left
    assert tree.threshold[0] == 2.5 and tree.shares(0) == pytest.approx([3 / 5, 2 / 5])
    # the training row with NaN went down both branches with weights 3/5 and 2/5
    np.testing.assert_allclose(tree.weight, [6.0, 3.6, 2.4])
    np.testing.assert_allclose(tree.statistics[1], [3.0, 0.6])
    proba = model.predict_proba(np.array([[np.nan]]))[0]
    np.testing.assert_allclose(proba, 0.6 * tree.value[1] + 0.4 * tree.value[2])


def test_without_missing_values_the_tree_is_unchanged():
    data = load_dataset("wisconsin", dropna=True)
    with_nan = np.vstack([data.X, np.full((1, data.X.shape[1]), np.nan)])
    # adding a row that is all NaN and weight 0 changes nothing but the row counts
    a = TreeClassifier(min_samples_leaf=5).fit(data.X, data.y)
    b = TreeClassifier(min_samples_leaf=5).fit(
        with_nan, np.append(data.y, "benign"), sample_weight=np.append(np.ones(len(data.y)), 0.0)
    )
    np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)
    np.testing.assert_allclose(a.tree_.statistics, b.tree_.statistics)


def test_wisconsin_uses_all_699_rows_and_matches_j48():
    reference = json.loads(
        (Path(__file__).parent / "fixtures" / "j48" / "wisconsin.json").read_text()
    )
    data = load_dataset("wisconsin")
    assert np.isnan(data.X).sum() == 16
    model = TreeClassifier(criterion="entropy", splitter="c45", pruner="pessimistic").fit(
        data.X, data.y
    )
    assert model.tree_.n_samples[0] == 699 and model.tree_.weight[0] == 699
    assert model.get_n_leaves() == reference["n_leaves"] == 14
    assert model.score(data.X, data.y) == pytest.approx(reference["train_accuracy"])
    # J48's first leaf: "V6 <= 3: benign (405.39/2.0)" -- the fractional weight is the
    # missing-value rule at work (16 rows with V6 missing are shared across branches)
    leaf = model.tree_.children_left[model.tree_.children_left[0]]
    assert model.tree_.weight[leaf] == pytest.approx(405.39, abs=0.01)
    errors = model.tree_.weight[leaf] - model.tree_.statistics[leaf].max()
    assert errors == pytest.approx(2.0, abs=0.01)


def test_every_splitter_and_pruner_takes_missing_values():
    data = load_dataset("wisconsin")
    for params in (
        {},
        {"pruner": "cost_complexity"},
        {"splitter": "c45", "pruner": "pessimistic"},
        {"pruner": "mdl"},
    ):
        model = TreeClassifier(min_samples_leaf=3, **params).fit(data.X, data.y)
        proba = model.predict_proba(data.X)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        assert model.score(data.X, data.y) > 0.93


@pytest.mark.parametrize("seed", range(20))
def test_pessimistic_pruning_of_exhaustive_trees_with_missing_values(seed):
    """Regression: the pessimistic pruner re-routes rows through stored questions; a node
    field another node set (NaN here) must read as its default, not crash."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(150, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=150) > 0).astype(int)
    X[rng.random(X.shape) < 0.05] = np.nan
    grown = TreeClassifier(criterion="entropy").fit(X, y)
    pruned = TreeClassifier(criterion="entropy", pruner="pessimistic").fit(X, y)
    assert pruned.get_n_leaves() <= grown.get_n_leaves()
    proba = pruned.predict_proba(X)
    assert np.isfinite(proba).all() and np.allclose(proba.sum(axis=1), 1.0)


def test_a_split_reads_missing_left_as_branch_shares_and_routes_missing_rows_by_them():
    from treekit_core import Split
    from treekit_core.builtins.questions import Threshold
    from treekit_core.engine.questions import route_rows

    X = np.array([[0.0], [2.0], [np.nan]])
    split = Split(0, 1.0, 0.1, {"missing_left": 0.25})
    assert split.branch_shares == (0.25, 0.75) and "missing_left" not in split.node_fields
    branches = route_rows(X, np.arange(3), np.ones(3), split, Threshold())
    (left_rows, left_w), (right_rows, right_w) = branches
    np.testing.assert_array_equal(left_rows, [0, 2])
    np.testing.assert_array_equal(left_w, [1.0, 0.25])
    np.testing.assert_array_equal(right_rows, [1, 2])
    np.testing.assert_array_equal(right_w, [1.0, 0.75])
    assert Split(0, 1.0, 0.1, {"missing_left": np.nan}).branch_shares is None
