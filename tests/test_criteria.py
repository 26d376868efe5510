"""Impurity values against hand computations, and their defining properties."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_core import TrainingData
from treekit_core.builtins.criteria import Entropy, Gini, Misclassification, Variance

ALL = [Gini(), Entropy(), Misclassification()]


@pytest.mark.parametrize(
    "criterion,sums,expected",
    [
        (Gini(), [3, 1], 1 - (0.75**2 + 0.25**2)),  # 0.375
        (Gini(), [2, 2, 4], 1 - (0.25**2 + 0.25**2 + 0.5**2)),  # 0.625
        (Entropy(), [3, 1], -(0.75 * math.log2(0.75) + 0.25 * math.log2(0.25))),  # 0.811278
        (Entropy(), [2, 2, 4], 1.5),
        (Entropy(), [5, 0], 0.0),
        (Misclassification(), [3, 1], 0.25),
        (Misclassification(), [2, 2, 4], 0.5),
        (Variance(), [3, 1], 0.1875),
    ],
)
def test_hand_computed(criterion, sums, expected):
    sums = np.array(sums, dtype=float)
    assert criterion.node_impurity(sums, sums.sum()) == pytest.approx(expected, abs=1e-15)


def test_entropy_is_in_bits():
    assert Entropy().node_impurity(np.array([1.0, 1.0]), 2.0) == pytest.approx(1.0)
    assert Entropy().node_impurity(np.ones(8), 8.0) == pytest.approx(3.0)


def test_variance_equals_half_gini_for_two_classes():
    sums = np.array([7.0, 3.0])
    assert Variance().node_impurity(sums, 10.0) == pytest.approx(
        Gini().node_impurity(sums, 10.0) / 2
    )


def test_variance_refuses_more_than_two_classes():
    data = TrainingData(np.zeros((3, 1), order="F"), np.eye(3), np.ones(3))
    with pytest.raises(ValueError, match="two classes only.*3 classes"):
        Variance().check_data(data)


weights = st.lists(st.floats(0.01, 100.0), min_size=2, max_size=8)


@settings(max_examples=60, deadline=None)
@given(weights)
def test_non_negative_and_zero_when_pure(values):
    sums = np.array(values)
    for criterion in ALL:
        assert criterion.node_impurity(sums, sums.sum()) >= -1e-15
        pure = np.zeros_like(sums)
        pure[len(sums) // 2] = sums.sum()
        assert criterion.node_impurity(pure, sums.sum()) == pytest.approx(0.0, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(weights)
def test_maximal_at_uniform(values):
    sums = np.array(values)
    k = len(sums)
    uniform = np.full(k, sums.sum() / k)
    for criterion in ALL:
        assert (
            criterion.node_impurity(sums, sums.sum())
            <= criterion.node_impurity(uniform, sums.sum()) + 1e-12
        )


@settings(max_examples=40, deadline=None)
@given(st.floats(0.01, 0.99))
def test_two_class_values(p):
    sums = np.array([p, 1 - p])
    assert Gini().node_impurity(sums, 1.0) == pytest.approx(2 * p * (1 - p))
    assert Variance().node_impurity(sums, 1.0) == pytest.approx(p * (1 - p))
    assert Misclassification().node_impurity(sums, 1.0) == pytest.approx(min(p, 1 - p))
