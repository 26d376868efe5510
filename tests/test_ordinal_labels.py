"""The ordered-class target (issue 61): the order from an ordered pandas Categorical or
from target_params, refusals naming what is missing, class predictions in that order,
scores 1..K as its influence function, a model file that keeps the order."""

import numpy as np
import pandas as pd
import pytest

from treekit_core import TreeClassifier
from treekit_core.builtins.targets import OrdinalLabels
from treekit_core.testing import check_target

X = np.arange(30.0)[:, None]
LABELS = np.array(["mild", "moderate", "severe"])[np.repeat([0, 1, 2], 10)]


def test_the_order_comes_from_an_ordered_categorical_or_the_parameters():
    y = pd.Categorical(LABELS, categories=["severe", "moderate", "mild"], ordered=True)
    model = TreeClassifier(target="ordinal_labels", max_depth=2).fit(X, y)
    assert list(model.classes_) == ["severe", "moderate", "mild"]  # the given order
    given = TreeClassifier(
        target="ordinal_labels", target_params={"order": ["mild", "moderate", "severe"]}
    ).fit(X, LABELS)
    assert list(given.classes_) == ["mild", "moderate", "severe"]
    assert list(given.predict(X[[0, 15, 29]])) == ["mild", "moderate", "severe"]
    loaded = TreeClassifier.from_json(given.to_json())
    assert list(loaded.classes_) == list(given.classes_)
    np.testing.assert_array_equal(loaded.predict_proba(X), given.predict_proba(X))


def test_refusals_name_what_is_missing():
    with pytest.raises(ValueError, match="needs the order of the classes"):
        TreeClassifier(target="ordinal_labels").fit(X, LABELS)
    with pytest.raises(ValueError, match="'extreme', which is not among the ordered classes"):
        TreeClassifier(
            target="ordinal_labels", target_params={"order": ["mild", "moderate", "severe"]}
        ).fit(X, np.where(LABELS == "severe", "extreme", LABELS))
    with pytest.raises(ValueError, match="two or more distinct labels"):
        OrdinalLabels(order=["a", "a"])


def test_scores_are_the_ranks_and_the_kit_accepts_the_target():
    rows = OrdinalLabels(order=["a", "b", "c"]).encode(np.array(["c", "a", "b"]), 3).rows
    np.testing.assert_array_equal(OrdinalLabels().influence(rows)[:, 0], [3.0, 1.0, 2.0])
    check_target(OrdinalLabels(order=["negative", "positive"]))  # the kit's labels
