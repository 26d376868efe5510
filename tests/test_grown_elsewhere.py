"""Finishing a tree grown elsewhere (what a distributed grower does): the rules that choose
after growth read masses of (score, correct) pairs only, so a grower may sum them over its
parts; components that learn from the training rows are refused by name."""

import copy
import functools

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_core import (
    CompositionError,
    Evaluator,
    RejectRule,
    TrainingData,
    TreeClassifier,
)
from treekit_core.datasets import load_dataset
from treekit_core.engine.calibration import Calibration


def masses(scores, correct, weight):
    """Every distinct (score, correct) pair once, with its rows' summed weight."""
    keys = sorted(set(zip(scores.tolist(), correct.tolist(), strict=True)))
    summed = [weight[(scores == s) & (correct == c)].sum() for s, c in keys]
    return (
        np.array([k[0] for k in keys], dtype=float),
        np.array([k[1] for k in keys], dtype=bool),
        np.array(summed, dtype=float),
    )


rows = st.lists(
    st.tuples(st.integers(0, 5), st.booleans(), st.integers(1, 3)), min_size=1, max_size=40
)


@settings(max_examples=150, deadline=None)
@given(
    rows,
    st.sampled_from(
        [{"coverage": 0.7}, {"keep_correct": 0.8}, {"max_error": 0.2}, {"coverage": 0.35}]
    ),
)
def test_reject_rules_read_masses_only(raw, rule):
    scores = np.array([r[0] / 5 for r in raw])
    correct = np.array([r[1] for r in raw])
    weight = np.array([float(r[2]) for r in raw])
    rule = RejectRule(**rule)
    assert rule.choose(*masses(scores, correct, weight)) == rule.choose(scores, correct, weight)


@settings(max_examples=100, deadline=None)
@given(rows)
def test_isotonic_calibration_reads_masses_only(raw):
    scores = np.array([r[0] / 5 for r in raw])
    correct = np.array([r[1] for r in raw])
    weight = np.array([float(r[2]) for r in raw])
    by_rows = Calibration.fit("isotonic", scores, correct, weight)
    by_masses = Calibration.fit("isotonic", *masses(scores, correct, weight))
    np.testing.assert_allclose(by_masses.points_x, by_rows.points_x, rtol=1e-12)
    np.testing.assert_allclose(by_masses.points_y, by_rows.points_y, rtol=1e-12)


def _fitted_and_grown(**params):
    bundle = load_dataset("haberman")
    model = TreeClassifier(**params).fit(bundle.X, bundle.y)
    data = TrainingData(
        np.zeros((0, bundle.X.shape[1])),
        np.zeros((0, 2)),
        np.zeros(0),
        None,
        classes=model.classes_,
        n_categories=np.zeros(bundle.X.shape[1], dtype=np.int64),
        target=model.composition_.target,
    )
    return bundle, model, data


def test_a_tree_grown_elsewhere_finishes_as_fit_and_takes_its_rules_from_scores():
    """``fit_grown_tree`` on the grown tree, then ``fit_decision_rules`` from the training
    rows' score masses and out-of-fold copies: the threshold and calibration of ``fit``."""
    reject = {"keep_correct": 0.6, "cv": 3}
    bundle, model, data = _fitted_and_grown(max_depth=4, reject=reject, calibration="isotonic")
    grown = model._grown_tree if model._grown_tree is not None else model.tree_
    finished = TreeClassifier(max_depth=4).fit_grown_tree(copy.deepcopy(grown), data)
    np.testing.assert_array_equal(finished.predict_proba(bundle.X), model.predict_proba(bundle.X))
    X, y = bundle.X, bundle.y
    rows, _ = model._validate_training(X, y, None, model.composition_)
    out_of_fold = functools.cache(lambda n_folds, seed: model._out_of_fold(rows, n_folds, seed))
    finished.set_params(reject=reject, calibration="isotonic")
    finished.fit_decision_rules(lambda: masses(*finished.decision_scores(X, y)), out_of_fold)
    assert finished.reject_threshold_ == model.reject_threshold_
    assert 0.3 < (finished.decide(X).abstained).mean() < 0.7
    np.testing.assert_array_equal(finished.calibration_.points_x, model.calibration_.points_x)
    np.testing.assert_array_equal(finished.calibration_.points_y, model.calibration_.points_y)


def test_a_component_that_learns_from_rows_is_refused_naming_it():
    @attrs.define(slots=False)
    class Centred(Evaluator):
        name = "centred"

        def fit(self, tree, data, labeler):
            return {"centre": data.X.mean(axis=0)}

    _, model, data = _fitted_and_grown(max_depth=3)
    with pytest.raises(CompositionError, match="evaluator 'centred' learns its state from the"):
        TreeClassifier(max_depth=3, evaluator=Centred()).fit_grown_tree(
            copy.deepcopy(model.tree_), data
        )


def test_quantiles_from_leaf_response_masses_summed_over_parts():
    """A regression tree finished elsewhere keeps, for quantiles, the (leaf, response)
    masses of its training rows summed over parts: its quantiles are ``fit``'s, also with
    missing values (a row counted in both leaves by its shares)."""
    from treekit_core import TreeRegressor

    rng = np.random.default_rng(5)
    X = rng.integers(0, 8, size=(300, 3)).astype(float)
    X[rng.random(X.shape) < 0.1] = np.nan
    y = np.nan_to_num(X[:, 0]) * 2 + rng.integers(0, 5, size=300)
    weight = rng.integers(1, 4, size=300).astype(float)
    model = TreeRegressor(min_samples_leaf=10).fit(X, y, sample_weight=weight)
    finished = copy.deepcopy(model)
    parts = [
        finished.leaf_response_masses(X[rows], y[rows], weight[rows])
        for rows in np.array_split(np.arange(300), 3)
    ]
    finished.keep_leaf_response_masses(parts)  # a list: read twice (counts, then pairs)
    q = [0.05, 0.5, 0.95]
    expected = model.predict(X, quantiles=q)
    np.testing.assert_array_equal(finished.predict(X, quantiles=q), expected)
    # with the node counts, the parts are read once, in any order, as they arrive
    counts = [sum(np.bincount(p[0][0], minlength=model.tree_.n_nodes) for p in parts)]
    read = []

    def arriving():
        for k in (2, 0, 1):
            read.append(k)
            yield parts[k]

    again = copy.deepcopy(model)
    again.keep_leaf_response_masses(arriving(), counts)
    assert read == [2, 0, 1]
    np.testing.assert_array_equal(again.predict(X, quantiles=q), expected)
    with pytest.raises(ValueError, match="masses for 2 trees; the model has 1"):
        finished.keep_leaf_response_masses([[parts[0][0], parts[1][0]]])
    with pytest.raises(ValueError, match="more pairs than node_counts"):
        finished.keep_leaf_response_masses(parts + parts[:1], counts)
    with pytest.raises(ValueError, match="fewer pairs than node_counts"):
        finished.keep_leaf_response_masses(parts[:2], counts)
    unsorted = [(parts[0][0][0][::-1], parts[0][0][1], parts[0][0][2])]
    with pytest.raises(ValueError, match="not sorted by node"):
        finished.keep_leaf_response_masses([unsorted])


def test_kept_leaf_responses_of_unit_weights_take_the_responses_size():
    """Issue 66: the kept pairs of unit-weight rows are their responses and each node's
    start, nothing per pair beside the response (the Dask client held 17x the response
    column); a part sends int32 nodes and no weights."""
    from treekit_core import TreeRegressor

    rng = np.random.default_rng(6)
    X = rng.normal(size=(2000, 3))
    y = X[:, 0] + rng.normal(size=2000)  # unique responses: one pair per row
    model = TreeRegressor(min_samples_leaf=20).fit(X, y)
    parts = [model.leaf_response_masses(X[r], y[r]) for r in np.array_split(np.arange(2000), 4)]
    nodes, _, weights = parts[0][0]
    assert nodes.dtype == np.int32 and weights is None
    model.keep_leaf_response_masses(parts)
    (kept,) = model._leaf_responses
    assert kept.rows is None and kept.shares is None
    assert kept.responses.nbytes == y.nbytes
    assert kept.starts.size == model.tree_.n_nodes + 1
    q = [0.25, 0.75]
    np.testing.assert_array_equal(
        model.predict(X, quantiles=q),
        TreeRegressor(min_samples_leaf=20).fit(X, y).predict(X, quantiles=q),
    )
