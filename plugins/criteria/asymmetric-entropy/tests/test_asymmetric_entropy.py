import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_asymmetric_entropy import AsymmetricEntropy
from treekit_core import TrainingData, TreeClassifier
from treekit_core.datasets import load_dataset


def h(p, w):
    """One term of the criterion, through the compiled function (two classes, w on class 1)."""
    criterion = AsymmetricEntropy(w=[0.5, w])
    both = criterion.node_impurity(np.array([1 - p, p]), 1.0)
    other = 4 * (1 - p) * p  # the w = 0.5 term of class 0
    return both - other


@settings(max_examples=60, deadline=None)
@given(st.floats(0.01, 0.99))
def test_zero_at_ends_one_at_w(w):
    assert h(0.0, w) == pytest.approx(0.0, abs=1e-12)
    assert h(1.0, w) == pytest.approx(0.0, abs=1e-12)
    assert h(w, w) == pytest.approx(1.0, rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.floats(0.02, 0.98), st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(0.05, 0.95))
def test_strictly_concave(w, a, b, t):
    if abs(a - b) < 1e-3:
        return
    mid = t * a + (1 - t) * b
    assert h(mid, w) > t * h(a, w) + (1 - t) * h(b, w)


def test_hand_value():
    # w = 0.2, p = 0.5: 0.25 / (0.6 * 0.5 + 0.04) = 0.7352941...; other class w = 0.8, p = 0.5:
    # 0.25 / (-0.6 * 0.5 + 0.64) = 0.7352941... ; H = 1.4705882...
    value = AsymmetricEntropy(w=0.2).node_impurity(np.array([5.0, 5.0]), 10.0)
    assert value == pytest.approx(2 * 0.25 / 0.34)


def test_w_half_is_four_gini_for_any_k():
    from treekit_core.builtins import Gini

    sums = np.array([3.0, 5.0, 2.0])
    assert AsymmetricEntropy(w=[0.5, 0.5, 0.5]).node_impurity(sums, 10.0) == pytest.approx(
        4 * Gini().node_impurity(sums, 10.0)
    )


@pytest.mark.parametrize(
    "name,min_samples_leaf", [("haberman", 20), ("wisconsin", 20), ("bupa", 20)]
)
def test_w_half_ranks_splits_as_gini(name, min_samples_leaf):
    data = load_dataset(name, dropna=True)
    gini = TreeClassifier(criterion="gini", min_samples_leaf=min_samples_leaf).fit(data.X, data.y)
    asym = TreeClassifier(
        criterion="asymmetric_entropy",
        criterion_params={"w": 0.5},
        min_samples_leaf=min_samples_leaf,
    ).fit(data.X, data.y)
    np.testing.assert_array_equal(asym.tree_.feature, gini.tree_.feature)
    np.testing.assert_array_equal(asym.tree_.threshold, gini.tree_.threshold)
    np.testing.assert_allclose(asym.tree_.impurity, 4 * gini.tree_.impurity, rtol=1e-12, atol=1e-15)


def test_low_w_moves_the_root_split_towards_pure_majority_nodes():
    data = load_dataset("haberman")
    low = TreeClassifier(
        criterion="asymmetric_entropy", criterion_params={"w": 0.1}, max_depth=1
    ).fit(data.X, data.y)
    sym = TreeClassifier(
        criterion="asymmetric_entropy", criterion_params={"w": 0.5}, max_depth=1
    ).fit(data.X, data.y)
    assert (low.tree_.feature[0], low.tree_.threshold[0]) != (
        sym.tree_.feature[0],
        sym.tree_.threshold[0],
    )


def _data(classes):
    k = len(classes)
    return TrainingData(
        np.zeros((k, 1), order="F"), np.eye(k), np.ones(k), classes=np.array(classes)
    )


def test_positive_class_and_validation():
    criterion = AsymmetricEntropy(w=0.2, positive_class="a")
    criterion.check_data(_data(["a", "b"]))
    np.testing.assert_allclose(criterion.impurity_params(2), [0.2, 0.8])
    np.testing.assert_allclose(AsymmetricEntropy(w=0.2).impurity_params(2), [0.8, 0.2])
    with pytest.raises(ValueError, match="positive_class='c' is not a class"):
        AsymmetricEntropy(w=0.2, positive_class="c").check_data(_data(["a", "b"]))
    with pytest.raises(ValueError, match="single number w=0.2 is for two classes"):
        AsymmetricEntropy(w=0.2).check_data(_data(["a", "b", "c"]))
    with pytest.raises(ValueError, match="w has 2 values but the data has 3 classes"):
        AsymmetricEntropy(w=[0.2, 0.8]).check_data(_data(["a", "b", "c"]))
    for bad in (0.0, 1.0, -0.3, [0.2, 1.2], "x"):
        with pytest.raises(ValueError, match="w must"):
            AsymmetricEntropy(w=bad)


def test_warns_when_w_does_not_sum_to_one():
    with pytest.warns(UserWarning, match="sums to 0.6"):
        AsymmetricEntropy(w=[0.3, 0.3]).check_data(_data(["a", "b"]))


def test_maximum_for_w_not_summing_to_one_is_elsewhere():
    # w = (0.3, 0.3): the terms balance at p = 0.5, not at 0.3 (docs/algorithms.md section 3)
    criterion = AsymmetricEntropy(w=[0.3, 0.3])
    grid = np.linspace(0.01, 0.99, 981)
    values = [criterion.node_impurity(np.array([1 - p, p]), 1.0) for p in grid]
    assert grid[int(np.argmax(values))] == pytest.approx(0.5, abs=1e-3)


def test_error_names_parameter_through_the_estimator():
    with pytest.raises(ValueError, match="criterion_params.*w must lie strictly between 0 and 1"):
        TreeClassifier(criterion="asymmetric_entropy", criterion_params={"w": 1.5}).fit(
            [[0.0], [1.0]], [0, 1]
        )
