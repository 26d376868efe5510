import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_core import CompositionError, ForestClassifier, TreeClassifier
from treekit_core.datasets import load_dataset
from treekit_counterexample import (
    CounterexampleEntropy,
    complementary_probabilities,
    labels_as_counterexamples,
    remove_information,
)

COMPOSITION = dict(criterion="counterexample_entropy", labeler="complementary")


def counterexamples_of(y):
    classes, encoded = np.unique(y, return_inverse=True)
    return classes, labels_as_counterexamples(encoded, classes.size)


@pytest.mark.parametrize(
    "name,min_samples_leaf", [("wisconsin", 20), ("haberman", 20), ("balance_scale", 10)]
)
def test_full_information_equals_an_entropy_tree(name, min_samples_leaf):
    data = load_dataset(name, dropna=True)
    classes, Y = counterexamples_of(data.y)
    ours = TreeClassifier(min_samples_leaf=min_samples_leaf, **COMPOSITION).fit(
        data.X, counterexamples=Y, classes=classes
    )
    entropy = TreeClassifier(criterion="entropy", min_samples_leaf=min_samples_leaf).fit(
        data.X, data.y
    )
    np.testing.assert_array_equal(ours.tree_.feature, entropy.tree_.feature)
    np.testing.assert_array_equal(ours.tree_.threshold, entropy.tree_.threshold)
    np.testing.assert_array_equal(ours.predict(data.X), entropy.predict(data.X))
    np.testing.assert_allclose(
        ours.predict_proba(data.X), entropy.predict_proba(data.X), atol=1e-12
    )
    # nats versus bits: the same ordering, impurity scaled by ln 2
    np.testing.assert_allclose(
        ours.tree_.impurity, entropy.tree_.impurity * math.log(2), atol=1e-12
    )
    # ordinary labels give the same tree: the core encodes y as counterexample rows
    labelled = TreeClassifier(min_samples_leaf=min_samples_leaf, **COMPOSITION).fit(data.X, data.y)
    np.testing.assert_array_equal(labelled.tree_.threshold, ours.tree_.threshold)


def test_complementary_probabilities_sum_to_k_minus_one_with_full_information():
    data = load_dataset("balance_scale")
    classes, Y = counterexamples_of(data.y)
    model = TreeClassifier(max_depth=4, **COMPOSITION).fit(
        data.X, counterexamples=Y, classes=classes
    )
    np.testing.assert_allclose(complementary_probabilities(model.tree_).sum(axis=1), 2.0)


def H(sums, weight, normalize=True):
    return CounterexampleEntropy(normalize=normalize).node_impurity(np.asarray(sums, float), weight)


def test_hand_computed():
    # 4 samples: pbar = (2/4, 3/4, 1/4) -> q = (0.5, 0.25, 0.75)
    q = np.array([0.5, 0.25, 0.75])
    assert H([2, 3, 1], 4.0, normalize=False) == pytest.approx(-(q * np.log(q)).sum())
    p = q / q.sum()
    assert H([2, 3, 1], 4.0) == pytest.approx(-(p * np.log(p)).sum())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=3, max_size=6), st.randoms())
def test_invariant_to_class_order(pbar, random):
    sums = np.array(pbar) * 10.0
    permuted = sums.copy()
    random.shuffle(permuted)
    for normalize in (True, False):
        assert H(sums, 10.0, normalize) == pytest.approx(H(permuted, 10.0, normalize), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.05, 0.95), min_size=2, max_size=5), st.floats(0.1, 1.0))
def test_scaling_identity_of_the_appendix(q, alpha):
    # H(alpha q) = alpha H(q) - alpha ln(alpha) sum q
    # (literal formula, the sign of docs/algorithms.md section 5)
    q = np.array(q)
    scaled = alpha * q
    to_sums = lambda values: (1.0 - values) * 7.0  # noqa: E731  (node weight 7)
    expected = alpha * H(to_sums(q), 7.0, False) - alpha * math.log(alpha) * q.sum()
    assert H(to_sums(scaled), 7.0, False) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_node_without_information_is_maximally_uncertain_when_normalised():
    assert H([0, 0, 0, 0], 5.0) == pytest.approx(math.log(4))
    assert H([0, 0, 0, 0], 5.0, normalize=False) == 0.0  # the literal formula calls it pure


def test_missing_information_and_mixed_rows():
    data = load_dataset("balance_scale")
    classes, Y = counterexamples_of(data.y)
    rng = np.random.default_rng(0)
    partial = remove_information(Y, 0.5, rng)
    partial[:100] = Y[:100]  # ordinary labels (K-1 ones) mixed with partial rows
    partial[100:110] = 0.0  # rows without information are accepted
    model = TreeClassifier(min_samples_leaf=5, **COMPOSITION).fit(
        data.X, counterexamples=partial, classes=classes
    )
    assert model.score(data.X, data.y) > 0.6
    assert list(model.classes_) == list(classes)
    np.testing.assert_allclose(model.predict_proba(data.X).sum(axis=1), 1.0)


def test_works_with_pruning():
    data = load_dataset("balance_scale")
    classes, Y = counterexamples_of(data.y)
    partial = remove_information(Y, 0.3, np.random.default_rng(1))
    for pruner in ("cost_complexity", "pessimistic"):
        full = TreeClassifier(**COMPOSITION).fit(data.X, counterexamples=partial, classes=classes)
        pruned = TreeClassifier(pruner=pruner, **COMPOSITION).fit(
            data.X, counterexamples=partial, classes=classes
        )
        assert 1 <= pruned.get_n_leaves() < full.get_n_leaves()


def test_json_round_trip():
    data = load_dataset("lenses")
    classes, Y = counterexamples_of(data.y)
    model = TreeClassifier(**COMPOSITION).fit(data.X, counterexamples=Y, classes=classes)
    loaded = TreeClassifier.from_json(model.to_json())
    np.testing.assert_array_equal(loaded.predict(data.X), model.predict(data.X))


@pytest.mark.parametrize(
    "Y,message",
    [
        ([[1, 1], [0, 1]], "row 0 excludes every class"),
        ([[0, 2], [0, 1]], "only 0 and 1; row 0, column 1"),
        ([[0, 1, 0]], "counterexamples has 1 rows but X has 2"),
        ([0, 1], "2-D"),
    ],
)
def test_bad_counterexamples(Y, message):
    with pytest.raises(ValueError, match=message):
        TreeClassifier(**COMPOSITION).fit(np.zeros((2, 1)), counterexamples=Y)


def test_refusals():
    X, Y = np.zeros((2, 1)), [[0, 1], [1, 0]]
    with pytest.raises(
        CompositionError, match="counterexamples need a criterion and labeler that read"
    ):
        TreeClassifier().fit(X, counterexamples=Y)
    with pytest.raises(
        CompositionError,
        match="criterion 'counterexample_entropy' cannot be combined with labeler 'majority'",
    ):
        TreeClassifier(criterion="counterexample_entropy").fit(X, [0, 1])
    with pytest.raises(ValueError, match="either y .* or counterexamples"):
        TreeClassifier(**COMPOSITION).fit(X, [0, 1], counterexamples=Y)
    with pytest.raises(ValueError, match="classes must name the 2 columns"):
        TreeClassifier(**COMPOSITION).fit(X, counterexamples=Y, classes=["a", "b", "c"])


@pytest.mark.parametrize("rule", [{"coverage": 0.8}, {"keep_correct": 0.9, "cv": 4}])
def test_rejection_of_a_counterexample_trained_tree(rule):
    """A decision counts as correct unless the sample is known not to be that class."""
    data = load_dataset("balance_scale")
    classes, codes = np.unique(data.y, return_inverse=True)
    rng = np.random.default_rng(0)
    wrong = (codes + rng.integers(1, 3, codes.size)) % 3  # one counterexample per row
    counterexamples = np.zeros((codes.size, 3))
    counterexamples[np.arange(codes.size), wrong] = 1
    model = TreeClassifier(
        criterion="counterexample_entropy",
        labeler="complementary",
        min_samples_leaf=5,
        reject=rule,
        abstain_value="?",
    ).fit(data.X, counterexamples=counterexamples, classes=classes)
    decision = model.decide(data.X)
    np.testing.assert_array_equal(decision.abstained, decision.confidence < model.reject_threshold_)
    if "coverage" in rule:  # the reachable step nearest to 80% (none and all included)
        confidence = decision.confidence
        reachable = {(confidence >= s).mean() for s in np.unique(confidence)} | {0.0}
        nearest = min(abs(c - 0.8) for c in reachable)
        assert abs((~decision.abstained).mean() - 0.8) <= nearest + 1e-12
    else:
        # with cv the threshold comes from out-of-fold scores, refitted on counterexamples
        known_right = ~decision.abstained & (decision.class_index != wrong)
        assert known_right.sum() > 0
    forest = ForestClassifier(
        n_estimators=5,
        criterion="counterexample_entropy",
        labeler="complementary",
        reject=rule,
        random_state=0,
        abstain_value="?",
    ).fit(data.X, counterexamples=counterexamples, classes=classes)
    assert np.isfinite(forest.reject_threshold_)
