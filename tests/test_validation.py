"""Bad input gets a clear error naming the parameter (and column) and what was expected."""

from typing import ClassVar

import attrs
import numpy as np
import pandas as pd
import pytest

from treekit_core import TreeClassifier, hookimpl, registered
from treekit_core.builtins.splitters import Exhaustive

X_OK = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [3.0, 0.0]])
Y_OK = np.array([0, 0, 1, 1])


@pytest.mark.parametrize(
    "X,y,message",
    [
        (
            np.array([[0.0, 1.0], [np.inf, 0.0]]),
            [0, 1],
            r"X contains infinity in column 0 \(row 1\)",
        ),
        (np.array([0.0, 1.0, 2.0]), [0, 1, 1], r"X must be 2-D.*reshape\(-1, 1\)"),
        ([[0.0, 1.0], [1.0]], [0, 1], "ragged"),
        (np.empty((0, 2)), [], "X is empty"),
        (np.empty((3, 0)), [0, 1, 0], "0 features"),
        (X_OK, [0, 1, 1], "y has 3 labels but X has 4 samples"),
        (X_OK, [1, 1, 1, 1], r"y has a single class \(1\)"),
        (X_OK, [[0, 1], [1, 0], [0, 1], [1, 0]], "y must be 1-D"),
        (X_OK, [0.0, np.nan, 1.0, 1.0], "y contains NaN at row 1"),
        ([["a", "b"], ["c", "d"]], [0, 1], "not numbers"),
    ],
)
def test_bad_training_input(X, y, message):
    with pytest.raises(ValueError, match=message):
        TreeClassifier().fit(X, y)


@attrs.define(slots=False)
class NoMissing(Exhaustive):
    """An exhaustive splitter that does not claim to handle missing values."""

    name: ClassVar[str] = "no_missing"
    handles_missing: ClassVar[bool] = False


class Plugin:
    @hookimpl
    def treekit_splitters(self):
        return [NoMissing]


def test_nan_is_refused_naming_the_column_and_the_components_that_cannot_handle_it():
    frame = pd.DataFrame({"age": [1.0, 2.0, np.nan], "dose": [1.0, 2.0, 3.0]})
    with registered(Plugin(), name="no-missing"):
        with pytest.raises(
            ValueError,
            match=r"X contains NaN in column 0 \('age'\) \(1 rows, first row 2\); "
            r"splitter 'no_missing' does not handle missing values",
        ):
            TreeClassifier(splitter="no_missing").fit(frame, [0, 1, 0])


def test_dataframe_errors_name_the_column():
    text = pd.DataFrame({"age": [1.0, 2.0, 3.0], "colour": ["red", "blue", "red"]})
    with pytest.raises(ValueError, match=r"column 1 \('colour'\).*not numbers"):
        TreeClassifier().fit(text, [0, 1, 0])


@pytest.mark.parametrize(
    "weight,message",
    [
        ([1.0, 1.0], r"sample_weight must have shape \(4,\)"),
        ([1.0, -1.0, 1.0, 1.0], "non-negative; row 1"),
        ([1.0, np.nan, 1.0, 1.0], "NaN or infinity at row 1"),
        ([0.0, 0.0, 0.0, 0.0], "sums to zero"),
    ],
)
def test_bad_sample_weight(weight, message):
    with pytest.raises(ValueError, match=message):
        TreeClassifier().fit(X_OK, Y_OK, sample_weight=weight)


@pytest.mark.parametrize(
    "params,message",
    [
        ({"max_depth": 0}, "max_depth must be None or an int >= 1, got 0"),
        ({"max_depth": 2.5}, "max_depth"),
        ({"min_samples_split": 1}, "min_samples_split must be an int >= 2"),
        ({"min_samples_split": 1.5}, "min_samples_split"),
        ({"min_samples_leaf": 0}, "min_samples_leaf must be an int >= 1"),
        (
            {"min_weight_fraction_leaf": 0.7},
            r"min_weight_fraction_leaf must be a float in \[0, 0.5\]",
        ),
        ({"min_impurity_decrease": -1.0}, "min_impurity_decrease must be a finite float >= 0"),
        ({"min_gain": float("nan")}, "min_gain must be None or a finite float"),
        ({"criterion_params": [1, 2]}, "criterion_params must be a dict"),
        ({"criterion_params": {"w": 0.3}}, "criterion 'gini' has no parameter 'w'"),
    ],
)
def test_parameters_out_of_range(params, message):
    with pytest.raises(ValueError, match=message):
        TreeClassifier(**params).fit(X_OK, Y_OK)


def test_prediction_input_checked():
    model = TreeClassifier().fit(X_OK, Y_OK)
    with pytest.raises(ValueError, match="X has 3 features, but the model was fitted with 2"):
        model.predict(np.zeros((2, 3)))
    assert model.predict(np.array([[np.nan, 0.0]])).shape == (1,)  # C4.5's missing-value rule


def test_variance_with_three_classes_is_refused():
    with pytest.raises(ValueError, match="'variance' is defined for two classes only"):
        TreeClassifier(criterion="variance").fit(np.arange(6.0).reshape(-1, 1), [0, 1, 2, 0, 1, 2])


def test_zero_weight_rows_are_kept_not_dropped():
    model = TreeClassifier().fit(X_OK, Y_OK, sample_weight=[1.0, 0.0, 1.0, 1.0])
    assert model.tree_.n_samples[0] == 4 and model.tree_.weight[0] == 3.0


def test_weights_and_thresholds_that_would_silently_break_results_are_refused():
    from treekit_core import ForestClassifier

    X = np.random.default_rng(0).normal(size=(30, 2))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="sample_weight sums to inf.*rescale"):
        TreeClassifier().fit(X, y, sample_weight=np.full(30, 1e308))
    with pytest.raises(ValueError, match="reject threshold must be a finite number"):
        TreeClassifier(reject=float("nan")).fit(X, y)
    for bad in (float("nan"), -1.0):
        with pytest.raises(ValueError, match="class_weight for class 0 is"):
            ForestClassifier(class_weight={0: bad}).fit(X, y)


def test_labels_that_numpy_would_silently_reinterpret_are_refused():
    X = np.random.default_rng(0).normal(size=(6, 1))
    with pytest.raises(ValueError, match="y contains infinity at row 5"):
        TreeClassifier().fit(X, [0, 1, 0, 1, 0, np.inf])
    with pytest.raises(ValueError, match="mixes text and number labels.*'1' and 1"):
        TreeClassifier().fit(X, ["1", 1, "0", 0, "1", 1])
    with pytest.raises(ValueError, match="Unknown label type: continuous.*0.2"):
        TreeClassifier().fit(X, np.linspace(0, 1, 6))
    with pytest.warns(UserWarning, match="column-vector y"):
        model = TreeClassifier().fit(X, np.array([[0], [1], [0], [1], [0], [1]]))
    assert model.classes_.tolist() == [0, 1]
    assert TreeClassifier().fit(X, [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]).classes_.tolist() == [0, 1]
