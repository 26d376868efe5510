"""A forest's predictions in one pass per block of rows (issue 59): the hard evaluator walks
every tree for a block of rows and adds its leaf values into the rows' sums, with no array
of rows per tree; the sums are the contract's loop's (tree by tree, in order), bit for bit,
and rows with a missing value or trees with other questions take the loop."""

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_core import Evaluator, ForestClassifier, ForestRegressor


def _loop(forest, X):
    """The contract's default: every tree's distribution, summed in order, then divided."""
    return Evaluator.average_distribution(forest.composition_.evaluator, forest.estimators_, X)


def forest_cases(test):
    """The forests and rows both block passes are checked on (hypothesis)."""
    cases = given(
        seed=st.integers(0, 2**31 - 1),
        n_trees=st.integers(1, 12),
        missing=st.booleans(),
        regression=st.booleans(),
        fortran=st.booleans(),
    )
    return settings(max_examples=15, deadline=None)(cases(test))


def _forest_and_new_rows(seed, n_trees, missing, regression, fortran, n_new):
    """A small forest of numbers or classes and new rows to predict: 5% of their values
    missing (the loop's C4.5 mixtures) or none, in C or Fortran order."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(400, 5))
    y = X[:, 0] + rng.normal(size=400)
    forest = (ForestRegressor if regression else ForestClassifier)(
        n_estimators=n_trees, random_state=seed, max_depth=8
    ).fit(X, y if regression else (y > 0).astype(int))
    new = rng.normal(size=(n_new, 5))
    if missing:
        new[rng.random(new.shape) < 0.05] = np.nan
    if fortran:
        new = np.asfortranarray(new)
    return forest, new


@forest_cases
def test_the_block_pass_gives_the_loop_s_bits(seed, n_trees, missing, regression, fortran):
    forest, new = _forest_and_new_rows(seed, n_trees, missing, regression, fortran, 3000)
    with forest._checked_for_predict(new) as checked:
        got = forest.composition_.evaluator.average_distribution(forest.estimators_, checked)
        expected = _loop(forest, checked)
    assert got.dtype == expected.dtype and np.array_equal(got, expected)
    if not regression:
        np.testing.assert_array_equal(forest.predict_proba(new), expected)


def test_complete_rows_of_threshold_trees_take_the_block_pass(monkeypatch):
    from treekit_core.builtins import evaluators

    calls = []
    original = evaluators.average_threshold_trees
    monkeypatch.setattr(
        evaluators, "average_threshold_trees", lambda *a: calls.append(1) or original(*a)
    )
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    forest = ForestRegressor(n_estimators=4, random_state=0).fit(X, X[:, 0])
    forest.predict(X)
    assert calls == [1]
    X[0, 0] = np.nan
    forest.predict(X)
    assert calls == [1]  # a missing value: the loop


def test_trees_with_other_questions_take_the_loop():
    """Subset questions on a nominal column: not the threshold walk."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {"c": pd.Categorical(rng.choice(list("abcd"), 500)), "x": rng.normal(size=500)}
    )
    y = (frame["c"].isin(["a", "c"]) ^ (frame["x"] > 0)).astype(int)
    forest = ForestClassifier(n_estimators=5, random_state=0, max_features=None).fit(frame, y)
    assert any(len(tree.questions) > 1 for tree in forest.estimators_)
    with forest._checked_for_predict(frame) as checked:
        np.testing.assert_array_equal(forest.predict_proba(frame), _loop(forest, checked))


def _walk_by_hand(tree, row) -> int:
    """The leaf a complete row reaches: left where its value is <= the threshold."""
    node = 0
    while tree.children_left[node] >= 0:
        if row[tree.feature[node]] <= tree.threshold[node]:
            node = tree.children_left[node]
        else:
            node = tree.children_right[node]
    return node


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_rows=st.integers(1, 13), fortran=st.booleans())
def test_the_walk_four_rows_at_a_time_reaches_each_row_s_leaf(seed, n_rows, fortran):
    """The threshold walk takes rows four at a time, side by side, and the rest one by
    one, each step picking a child by index: every row reaches the leaf a walk by hand
    reaches, rows lying exactly on a threshold going left, for any number of rows."""
    from treekit_core.engine.questions import tree_leaves

    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(200, 3)).astype(float)  # ties: rows on the thresholds
    tree = ForestRegressor(n_estimators=1, random_state=seed).fit(X, rng.normal(size=200))
    tree = tree.estimators_[0]
    new = rng.integers(-1, 5, size=(n_rows, 3)).astype(float)
    new[0, :] = tree.threshold[0]  # a row on the root's threshold in every feature
    if fortran:
        new = np.asfortranarray(new)
    expected = [_walk_by_hand(tree, row) for row in new]
    np.testing.assert_array_equal(tree_leaves(tree, new, complete=True), expected)


@forest_cases
def test_every_tree_s_values_in_one_pass_are_the_loop_s(
    seed, n_trees, missing, regression, fortran
):
    """tree_distributions (issue 65, the causal forest's little bags read it): the hard
    evaluator's block pass writes each tree's values where the contract's loop puts them."""
    forest, new = _forest_and_new_rows(seed, n_trees, missing, regression, fortran, 1001)
    evaluator = forest.composition_.evaluator
    with forest._checked_for_predict(new) as checked:
        got = evaluator.tree_distributions(forest.estimators_, checked)
        expected = Evaluator.tree_distributions(evaluator, forest.estimators_, checked)
        for t, tree in enumerate(forest.estimators_):
            np.testing.assert_array_equal(
                expected[:, t], evaluator.predict_distribution(tree, checked)
            )
    assert got.shape == (1001, n_trees, forest.estimators_[0].value.shape[1])
    np.testing.assert_array_equal(got, expected)
