import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_asymmetric_rules import AsymmetricThresholds, CostMatrix
from treekit_core import AbstentionError, ForestClassifier, TreeClassifier
from treekit_core.datasets import load_dataset


def two_class(p):
    p = np.atleast_1d(np.asarray(p, dtype=float))
    return np.column_stack([1 - p, p])


def test_abstains_exactly_in_the_indecision_interval():
    labeler = AsymmetricThresholds(thresholds=[0.9, 0.2])
    grid = np.round(np.linspace(0, 1, 1001), 12)
    decision = labeler.decide(two_class(grid))
    abstain = decision == -1
    np.testing.assert_array_equal(abstain, (grid > 0.1 + 1e-12) & (grid < 0.2 - 1e-12))
    assert labeler.decide(two_class(0.2))[0] == 1  # inclusive
    assert labeler.decide(two_class(0.1))[0] == 0
    assert (
        labeler.decide(two_class(0.1 + 1e-3))[0] == -1
        and labeler.decide(two_class(0.2 - 1e-3))[0] == -1
    )


def test_float_tolerance_at_the_threshold():
    labeler = AsymmetricThresholds(thresholds=[0.9, 0.2])
    p = 0.1 + 0.1  # 0.2 with rounding noise either way
    assert labeler.decide(two_class([p, 0.2 - 1e-13]))[0] == 1


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(0.05, 1.0), min_size=3, max_size=3),
    st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3),
)
def test_k_classes_largest_ratio_wins(thresholds, weights):
    weights = np.array(weights) + 1e-3
    proba = (weights / weights.sum())[None, :]
    delta = np.array(thresholds)
    decision = AsymmetricThresholds(thresholds=thresholds).decide(proba)[0]
    qualifying = np.flatnonzero(proba[0] >= delta - 1e-12)
    if qualifying.size == 0:
        assert decision == -1
    else:
        assert decision in qualifying
        assert proba[0, decision] / delta[decision] == max(proba[0, qualifying] / delta[qualifying])


def test_renaming_classes_permutes_decisions():
    proba = np.array([[0.15, 0.25, 0.6], [0.5, 0.4, 0.1]])
    labeler = AsymmetricThresholds(thresholds=[0.3, 0.2, 0.7])
    permuted = AsymmetricThresholds(thresholds=[0.7, 0.3, 0.2])
    perm = [2, 0, 1]
    original = labeler.decide(proba)
    renamed = permuted.decide(proba[:, perm])
    np.testing.assert_array_equal([perm[d] if d >= 0 else -1 for d in renamed], original)


def test_cost_matrix_equal_costs_reproduce_majority():
    rng = np.random.default_rng(0)
    proba = rng.dirichlet(np.ones(4), size=200)
    costs = np.ones((4, 4)) - np.eye(4)
    np.testing.assert_array_equal(
        CostMatrix(costs=costs.tolist()).decide(proba), np.argmax(proba, axis=1)
    )


def test_cost_matrix_asymmetric_costs_move_decisions():
    # Missing a positive (truth 1, decide 0) costs 9: decide positive from p > 0.1 on.
    labeler = CostMatrix(costs=[[0, 1], [9, 0]])
    np.testing.assert_array_equal(labeler.decide(two_class([0.05, 0.09, 0.11, 0.5])), [0, 0, 1, 1])
    data = load_dataset("haberman")
    plain = TreeClassifier(max_depth=4).fit(data.X, data.y)
    costly = TreeClassifier(
        max_depth=4, labeler="cost_matrix", labeler_params={"costs": [[0, 1], [4, 0]]}
    ).fit(data.X, data.y)
    assert (costly.predict(data.X) == "positive").sum() > (
        plain.predict(data.X) == "positive"
    ).sum()


def test_node_error_is_the_weighted_cost():
    labeler = CostMatrix(costs=[[0, 1], [9, 0]])
    sums = np.array([[8.0, 2.0]])  # p = 0.2 -> decide 1, cost = 8 * 1
    assert labeler.node_error(sums, np.array([10.0]))[0] == 8.0


def test_estimator_abstains_and_forest_abstains_the_same_way():
    data = load_dataset("haberman")
    params = dict(labeler="asymmetric_thresholds", labeler_params={"thresholds": [0.8, 0.35]})
    tree = TreeClassifier(min_samples_leaf=10, **params).fit(data.X, data.y)
    with pytest.raises(AbstentionError):
        tree.predict(data.X)
    decision = tree.decide(data.X)
    assert 0 < decision.abstained.sum() < len(data.y)
    proba = decision.proba[:, 1]
    np.testing.assert_array_equal(
        decision.abstained, (proba < 0.35 - 1e-12) & (1 - proba < 0.8 - 1e-12)
    )
    forest = ForestClassifier(
        n_estimators=10, random_state=0, min_samples_leaf=5, abstain_value="?", **params
    )
    forest.fit(data.X, data.y)
    fd = forest.decide(data.X)
    fp = fd.proba[:, 1]
    np.testing.assert_array_equal(fd.abstained, (fp < 0.35 - 1e-12) & (1 - fp < 0.8 - 1e-12))
    assert set(forest.predict(data.X)) <= {"negative", "positive", "?"}


@pytest.mark.parametrize(
    "params,message",
    [
        ({"thresholds": [0.5]}, "one value per class"),
        ({"thresholds": [0.0, 0.5]}, r"in \(0, 1\]"),
        ({"thresholds": [0.5, 0.5, 0.5]}, "3 thresholds for 2 classes"),
    ],
)
def test_threshold_validation(params, message):
    with pytest.raises(ValueError, match=message):
        TreeClassifier(labeler="asymmetric_thresholds", labeler_params=params).fit(
            [[0.0], [1.0]], [0, 1]
        )


@pytest.mark.parametrize(
    "costs,message",
    [
        ([[0, 1]], "square"),
        ([[0, -1], [1, 0]], "non-negative"),
        ([[0, 1, 1], [1, 0, 1], [1, 1, 0]], "3 x 3"),
    ],
)
def test_cost_validation(costs, message):
    with pytest.raises(ValueError, match=message):
        TreeClassifier(labeler="cost_matrix", labeler_params={"costs": costs}).fit(
            [[0.0], [1.0]], [0, 1]
        )
