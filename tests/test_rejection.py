"""Reject rules (any confidence drives them) and risk-coverage curves."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_core import AbstentionError, TreeClassifier
from treekit_core.datasets import load_dataset
from treekit_core.engine.rejection import (
    RejectRule,
    keep_fraction_threshold,
    max_error_threshold,
    risk_coverage,
)


def test_keep_fraction_keeps_ties_together():
    scores = np.array([0.1, 0.5, 0.5, 0.5, 0.9])
    # keeping >= 50%: {0.9} is 20%, {0.9, 0.5 x3} is 80% -> threshold 0.5 keeps 80%
    assert keep_fraction_threshold(scores, 0.5) == 0.5
    assert keep_fraction_threshold(scores, 0.2) == 0.9
    assert keep_fraction_threshold(scores, 0.81) == 0.1
    assert keep_fraction_threshold(scores, 1.0) == 0.1


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=40), st.floats(0.0, 1.0))
def test_keep_fraction_is_the_smallest_achievable_fraction_at_least_q(raw, q):
    scores = np.array(raw, dtype=float)
    t = keep_fraction_threshold(scores, q)
    kept = (scores >= t).mean()
    assert kept >= q - 1e-12
    achievable = sorted({(scores >= s).mean() for s in np.unique(scores)})
    assert kept == min(f for f in achievable if f >= q - 1e-12)


def test_max_error_threshold():
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.5])
    correct = np.array([True, True, False, True, False])
    # accepting down to 0.8: error 0; to 0.7: 1/3; to 0.6: 1/4; to 0.5: 2/5
    assert max_error_threshold(scores, correct, 0.0) == 0.8
    assert max_error_threshold(scores, correct, 0.25) == 0.6
    assert max_error_threshold(scores, correct, 0.5) == 0.5


def test_risk_coverage_curve_and_area():
    curve = risk_coverage(np.array([0.9, 0.8, 0.7, 0.6]), np.array([True, False, True, False]))
    np.testing.assert_allclose(curve.coverage, [0.25, 0.5, 0.75, 1.0])
    np.testing.assert_allclose(curve.risk, [0.0, 0.5, 1 / 3, 0.5])
    assert curve.area == pytest.approx(np.trapezoid([0.0, 0.5, 1 / 3, 0.5], [0.25, 0.5, 0.75, 1.0]))


def test_rule_validation():
    with pytest.raises(ValueError, match="exactly one of"):
        RejectRule(keep_correct=0.9, coverage=0.8)
    with pytest.raises(ValueError, match="fraction in"):
        RejectRule(coverage=1.5)
    with pytest.raises(ValueError, match="unknown keys"):
        RejectRule.from_param({"keep": 0.9})


@pytest.fixture(scope="module")
def pima():
    return load_dataset("pima")


@pytest.mark.parametrize(
    "rule", [{"coverage": 0.8}, {"keep_correct": 0.9}, {"max_error": 0.1}, 0.75]
)
def test_rejection_on_training_data(pima, rule):
    model = TreeClassifier(min_samples_leaf=10, reject=rule, abstain_value="?").fit(pima.X, pima.y)
    decision = model.decide(pima.X)
    np.testing.assert_array_equal(decision.abstained, decision.confidence < model.reject_threshold_)
    if isinstance(rule, dict) and "coverage" in rule:
        assert (~decision.abstained).mean() >= 0.8
    if isinstance(rule, dict) and "max_error" in rule:
        accepted = ~decision.abstained
        assert (decision.labels[accepted] != pima.y[accepted]).mean() <= 0.1 + 1e-12
    with pytest.raises(AbstentionError, match="reject rule"):
        TreeClassifier(min_samples_leaf=10, reject=rule).fit(pima.X, pima.y).predict(pima.X)


def test_rejection_threshold_by_cross_validation(pima):
    trained = TreeClassifier(min_samples_leaf=10, reject={"keep_correct": 0.9}).fit(pima.X, pima.y)
    honest = TreeClassifier(min_samples_leaf=10, reject={"keep_correct": 0.9, "cv": 5}).fit(
        pima.X, pima.y
    )
    again = TreeClassifier(min_samples_leaf=10, reject={"keep_correct": 0.9, "cv": 5}).fit(
        pima.X, pima.y
    )
    assert honest.reject_threshold_ == again.reject_threshold_
    assert honest.reject_threshold_ != trained.reject_threshold_


def test_risk_coverage_of_an_estimator(pima):
    model = TreeClassifier(max_depth=4).fit(pima.X, pima.y)
    curve = model.risk_coverage(pima.X, pima.y)
    assert curve.coverage[-1] == 1.0
    assert curve.risk[-1] == pytest.approx(1 - model.score(pima.X, pima.y))
    assert 0 < curve.area < curve.risk[-1]  # confident samples are right more often


@pytest.mark.parametrize("forest_confidence", ["averaged", "vote_margin"])
@pytest.mark.parametrize(
    "rule", [{"coverage": 0.8}, {"keep_correct": 0.9}, {"max_error": 0.05}, 0.5]
)
def test_forest_rejection_on_training_data(pima, rule, forest_confidence):
    from treekit_core import ForestClassifier

    forest = ForestClassifier(
        n_estimators=11,
        max_depth=6,
        random_state=0,
        reject=rule,
        forest_confidence=forest_confidence,
        abstain_value="?",
    ).fit(pima.X, pima.y)
    decision = forest.decide(pima.X)
    np.testing.assert_array_equal(
        decision.abstained, decision.confidence < forest.reject_threshold_
    )
    accepted = ~decision.abstained
    if isinstance(rule, dict) and "coverage" in rule:
        assert accepted.mean() >= 0.8
    if isinstance(rule, dict) and "keep_correct" in rule:
        correct = decision.labels == pima.y
        kept = (correct & accepted).sum() / correct.sum()
        assert kept >= 0.9
    if isinstance(rule, dict) and "max_error" in rule:
        assert (decision.labels[accepted] != pima.y[accepted]).mean() <= 0.05 + 1e-12
    if forest_confidence == "vote_margin":
        # the margin by hand: share of trees for the top class minus the runner-up's
        votes = np.zeros((pima.X.shape[0], 2))
        for tree in forest.estimators_:
            chosen = np.argmax(forest.composition_.evaluator.predict_distribution(tree, pima.X), 1)
            votes[np.arange(pima.X.shape[0]), chosen] += 1
        np.testing.assert_allclose(decision.confidence, np.abs(votes[:, 0] - votes[:, 1]) / 11)
    with pytest.raises(AbstentionError, match="reject rule"):
        forest.set_params(abstain_value=None).predict(pima.X)
    loaded = type(forest).from_json(forest.set_params(abstain_value="?").to_json())
    np.testing.assert_array_equal(loaded.decide(pima.X).abstained, decision.abstained)


def test_forest_rejection_by_cross_validation(pima):
    from treekit_core import ForestClassifier

    def fit(cv):
        rule = {"keep_correct": 0.9, **({"cv": cv} if cv else {})}
        return ForestClassifier(n_estimators=7, max_depth=5, random_state=0, reject=rule).fit(
            pima.X, pima.y
        )

    honest, again = fit(4), fit(4)
    assert honest.reject_threshold_ == again.reject_threshold_
    # by hand: the same folds, a forest per fold, the rule on the out-of-fold scores
    from treekit_core.engine.folds import stratified_folds

    _, labels = np.unique(pima.y, return_inverse=True)
    fold = stratified_folds(labels, 4, np.random.default_rng(0))
    scores, correct = np.empty(labels.size), np.empty(labels.size, dtype=bool)
    for k in range(4):
        train, test = fold != k, fold == k
        model = ForestClassifier(n_estimators=7, max_depth=5, random_state=0).fit(
            pima.X[train], pima.y[train]
        )
        decision = model.decide(pima.X[test])
        scores[test] = decision.confidence
        correct[test] = decision.labels == pima.y[test]
    assert honest.reject_threshold_ == keep_fraction_threshold(scores[correct], 0.9)
    assert honest.reject_threshold_ != fit(None).reject_threshold_
    with pytest.raises(ValueError, match="forest_confidence must be one of"):
        ForestClassifier(forest_confidence="margin").fit(pima.X, pima.y)
