"""Every model to_json writes must load (issue 33: a surrogate tree that is a single leaf
was written and then refused). Over the matrix of splitter x propagator x evaluator x
pruner that compose, trees grown and single leaves, trees and forests: the loaded model
predicts what the fitted one predicts, and writes the same file again."""

import itertools
import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_core import CompositionError, ForestClassifier, TreeClassifier
from treekit_core.registry import Registry


def _matrix():
    registry = Registry(load_entry_points=True)  # every installed component
    kinds = ("splitter", "propagator", "evaluator", "pruner")
    names = [sorted(registry.components(kind)) for kind in kinds]
    rows = []
    for combination in itertools.product(*names):
        params = dict(zip(kinds, combination, strict=True))
        try:
            TreeClassifier(**params)._make_composition().check()
        except (CompositionError, ValueError):
            continue
        rows.append(params)
    return rows


MATRIX = _matrix()


def _data(seed, params, n=60, imbalanced=False):
    """Positive features (soft spreads are relative to the mean), with missing values when
    every component of the composition handles them."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    score = X[:, 0] + 0.5 * X[:, 1]
    y = (score > (1.5 if imbalanced else 0)).astype(int)
    y[np.argmax(score)] = 1  # a classifier needs two classes: the top row is the rare one
    X += 4.0
    if TreeClassifier(**params)._input_tags()["allow_nan"]:
        X[rng.random(X.shape) < 0.05] = np.nan
    return X, y


def _assert_round_trip(model, X):
    text = model.to_json()
    loaded = type(model).from_json(text)
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    assert json.loads(loaded.to_json()) == json.loads(text)


@pytest.mark.parametrize("params", MATRIX, ids=lambda p: "-".join(p.values()))
def test_every_composition_round_trips_grown_and_as_a_single_leaf(params):
    X, y = _data(0, params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for extra in ({"max_depth": 3}, {"min_samples_split": 10_000}):
            try:
                model = TreeClassifier(**params, **extra, random_state=0).fit(X, y)
            except CompositionError as refused:  # a question the propagator cannot back up
                assert "propagator" in str(refused) and "splitter" in str(refused)
                continue
            if "min_samples_split" in extra:
                assert model.get_n_leaves() == 1
            _assert_round_trip(model, X)


@settings(max_examples=25, deadline=None)
@given(
    params=st.sampled_from(MATRIX),
    seed=st.integers(0, 1000),
    imbalanced=st.booleans(),
    min_samples_leaf=st.sampled_from([1, 5, 25]),
)
def test_forests_of_any_composition_round_trip(params, seed, imbalanced, min_samples_leaf):
    """Forests on imbalanced data hold single-leaf trees (a bootstrap with one class)."""
    X, y = _data(seed, params, imbalanced=imbalanced)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = ForestClassifier(
                n_estimators=3,
                random_state=seed,
                min_samples_leaf=min_samples_leaf,
                max_depth=6,
                **params,
            ).fit(X, y)
        except CompositionError as refused:
            assert "propagator" in str(refused) and "splitter" in str(refused)
            return
    _assert_round_trip(model, X)
