"""Compact pickles (issue 59): a tree pickles its integer arrays in the narrowest type,
a binary tree's links as left and right children and its shares only where the weights do
not give them; kept leaf responses pickle their per-node counts and bootstrap counts as
small integers. Loaded back, every array has the values and the dtype it had; pickles
written before (attrs' state) still load (tests/test_estimator_families.py, the models_v2
and models_v3 fixtures)."""

import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_core import ForestRegressor, TreeClassifier, TreeRegressor
from treekit_core.builtins.criteria import Entropy
from treekit_core.engine.tree import PICKLED_FIELDS


def _same_arrays(a, b) -> bool:
    for name in (*PICKLED_FIELDS, "children_left", "children_right"):
        if name.startswith("children_") and not a.is_binary:
            continue
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, np.ndarray):
            if x.dtype != y.dtype or not np.array_equal(x, y, equal_nan=True):
                return False
        elif name == "node_fields":
            if set(x) != set(y) or not all(np.array_equal(x[k], y[k], equal_nan=True) for k in x):
                return False
        elif name != "component_state" and x != y:
            return False
    return True


def _trees():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(800, 4))
    X[rng.random(X.shape) < 0.1] = np.nan  # C4.5's shares: not the weights' own
    y = np.nan_to_num(X[:, 0]) + rng.normal(size=800)
    frame = pd.DataFrame({"c": pd.Categorical(rng.choice(list("abcde"), 800)), "x": X[:, 1]})
    return {
        "regression": TreeRegressor(max_depth=8).fit(np.nan_to_num(X), y).tree_,
        "missing shares": TreeClassifier(max_depth=6).fit(X, y > 0).tree_,
        "one side": TreeRegressor(max_depth=6, splitter_params={"missing": "one_side"})
        .fit(X, y)
        .tree_,
        "multiway": TreeClassifier(max_depth=3, splitter_params={"nominal_split": "multiway"})
        .fit(frame, y > 0)
        .tree_,
        "subset": TreeClassifier(max_depth=4).fit(frame, y > 0).tree_,
        "leaf": TreeRegressor(min_samples_split=10**6).fit(X[:, :1], y).tree_,
        # C4.5's raising re-shares a node's weight: a right share need not be 1 - left's
        "j48": TreeClassifier(criterion="entropy", splitter="c45", pruner="pessimistic")
        .fit(X, y > 0.5)
        .tree_,
    }


@pytest.mark.parametrize("kind", list(_trees()))
def test_a_tree_comes_back_from_a_pickle_as_it_was(kind):
    tree = _trees()[kind]
    loaded = pickle.loads(pickle.dumps(tree))
    assert _same_arrays(tree, loaded)


def test_a_regression_tree_pickles_in_less_than_scikit_learns_72_bytes_a_node():
    """scikit-learn's tree takes 72 bytes a node of a regression tree (its node struct and
    one value). treekit's pickle keeps a leaf's threshold, feature and improvement once
    for all leaves (half the nodes ask), and its values not beside the statistics they
    are the ratio of: 8 bytes a node for the links (int32 left and right), 8 for the
    threshold and the improvement together, 32 for the weight, the impurity and two
    statistics, a few for the feature, count, depth and decision: about 56."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20_000, 10))
    tree = TreeRegressor().fit(X, X[:, 0] + rng.normal(size=20_000)).tree_
    per_node = len(pickle.dumps(tree, protocol=5)) / tree.n_nodes
    assert 50 <= per_node <= 60


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), bootstrap=st.booleans(), missing=st.booleans())
def test_kept_leaf_responses_come_back_as_they_were(seed, bootstrap, missing):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(300, 3))
    if missing:
        X[rng.random(X.shape) < 0.1] = np.nan  # fractional shares: kept as floats
    y = np.nan_to_num(X[:, 0]) + rng.normal(size=300)
    forest = ForestRegressor(n_estimators=3, bootstrap=bootstrap, random_state=seed, max_depth=6)
    forest.fit(X, y)
    loaded = pickle.loads(pickle.dumps(forest))
    for ours, theirs in zip(forest._leaf_responses, loaded._leaf_responses, strict=True):
        for name in ("responses", "rows", "shares", "starts"):
            a, b = getattr(ours, name), getattr(theirs, name)
            assert (a is None) == (b is None)
            if a is not None:
                assert a.dtype == b.dtype and np.array_equal(a, b)
    q = [0.1, 0.5, 0.9]
    np.testing.assert_array_equal(loaded.predict(X, quantiles=q), forest.predict(X, quantiles=q))


class SharperEntropy(Entropy):
    """``entropy`` under its registered name, but not the registered class."""


def test_a_component_not_registered_under_its_name_pickles_by_its_class():
    """A component instance given to an estimator whose class is not the registered one
    (a subclass, a variant: ``gini`` for several outputs) pickles by its class and comes
    back with its parameters; the estimator predicts as before (it recursed without end
    while the component defined ``__reduce__``)."""
    from treekit_core.builtins.criteria import GiniOfOutputs

    X = np.random.default_rng(0).normal(size=(80, 3))
    y = (X[:, 0] > 0).astype(int)
    model = TreeClassifier(criterion=SharperEntropy(), max_depth=3).fit(X, y)
    back = pickle.loads(pickle.dumps(model))
    assert type(back.composition_.criterion) is SharperEntropy
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    several = TreeClassifier(max_depth=3).fit(X, np.column_stack([y, X[:, 1] > 0]))
    assert type(several.composition_.criterion) is GiniOfOutputs
    back = pickle.loads(pickle.dumps(several))
    assert type(back.composition_.criterion) is GiniOfOutputs
    np.testing.assert_array_equal(back.predict(X), several.predict(X))
