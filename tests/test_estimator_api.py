"""scikit-learn conventions: params, clone, Pipeline, GridSearchCV, DataFrames, abstention."""

from typing import ClassVar

import attrs
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone, is_classifier
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from treekit_core import (
    ABSTAIN,
    AbstentionError,
    Labeler,
    NotFittedError,
    TreeClassifier,
    hookimpl,
    registered,
)
from treekit_core.datasets import load_dataset


@pytest.fixture(scope="module")
def pima():
    return load_dataset("pima")


def test_get_set_params_and_clone():
    model = TreeClassifier(criterion="entropy", max_depth=3, criterion_params={})
    params = model.get_params()
    assert params["criterion"] == "entropy" and params["max_depth"] == 3
    copy = clone(model)
    assert copy.get_params() == params and copy is not model
    model.set_params(max_depth=5)
    assert model.max_depth == 5
    with pytest.raises(ValueError, match="invalid parameter 'depth'"):
        model.set_params(depth=3)
    assert is_classifier(model)
    assert "criterion='entropy'" in repr(model)


def test_grid_search_and_cross_val_score(pima):
    search = GridSearchCV(
        TreeClassifier(), {"max_depth": [2, 4], "criterion": ["gini", "entropy"]}, cv=3
    )
    search.fit(pima.X, pima.y)
    assert search.best_params_["max_depth"] in (2, 4)
    scores = cross_val_score(TreeClassifier(max_depth=3), pima.X, pima.y, cv=5)
    assert scores.shape == (5,) and (scores > 0.6).all()


def test_pipeline(pima):
    pipe = make_pipeline(StandardScaler(), TreeClassifier(max_depth=3)).fit(pima.X, pima.y)
    direct = TreeClassifier(max_depth=3).fit(pima.X, pima.y)
    # A monotone rescaling moves thresholds but not the partition.
    np.testing.assert_array_equal(pipe.predict(pima.X), direct.predict(pima.X))


def test_dataframe_feature_names(pima):
    frame = pd.DataFrame(pima.X, columns=pima.feature_names)
    model = TreeClassifier(max_depth=2).fit(frame, pima.y)
    assert list(model.feature_names_in_) == pima.feature_names
    assert model.n_features_in_ == 8
    assert "plas <=" in model.export_text()
    np.testing.assert_array_equal(model.predict(frame), model.predict(pima.X))
    with pytest.raises(ValueError, match="feature names"):
        model.predict(frame[pima.feature_names[::-1]])


def test_string_and_integer_labels_and_classes(pima):
    model = TreeClassifier(max_depth=2).fit(pima.X, pima.y)
    assert list(model.classes_) == ["tested_negative", "tested_positive"]
    assert set(model.predict(pima.X)) <= set(model.classes_)
    codes = (pima.y == "tested_positive").astype(int) * 7
    numeric = TreeClassifier(max_depth=2).fit(pima.X, codes)
    assert list(numeric.classes_) == [0, 7] and numeric.predict(pima.X).dtype.kind == "i"
    assert numeric.score(pima.X, codes) == pytest.approx(model.score(pima.X, pima.y))


def test_not_fitted():
    with pytest.raises(NotFittedError, match="not fitted"):
        TreeClassifier().predict([[1.0]])


def test_decide_returns_everything(pima):
    model = TreeClassifier(max_depth=3).fit(pima.X, pima.y)
    decision = model.decide(pima.X)
    np.testing.assert_array_equal(decision.labels, model.predict(pima.X))
    np.testing.assert_array_equal(decision.proba, model.predict_proba(pima.X))
    np.testing.assert_array_equal(decision.confidence, decision.proba.max(axis=1))
    assert not decision.abstained.any()
    np.testing.assert_allclose(decision.proba.sum(axis=1), 1.0)


@attrs.define(slots=False)
class Cautious(Labeler):
    """Decides only when the top class has at least ``minimum`` probability."""

    name: ClassVar[str] = "cautious"
    minimum: float = 0.9

    @property
    def can_abstain(self):
        return True

    def decide(self, proba):
        top = np.argmax(proba, axis=1)
        return np.where(proba.max(axis=1) >= self.minimum, top, ABSTAIN)


class CautiousPlugin:
    @hookimpl
    def treekit_labelers(self):
        return [Cautious]


def test_abstention_is_never_a_class(pima):
    with registered(CautiousPlugin(), name="cautious"):
        model = TreeClassifier(labeler="cautious", max_depth=4).fit(pima.X, pima.y)
        with pytest.raises(AbstentionError, match="abstain_value.*decide"):
            model.predict(pima.X)
        decision = model.decide(pima.X)
        assert decision.abstained.any() and not decision.abstained.all()
        assert all(label is None for label in decision.labels[decision.abstained])
        assert set(decision.labels[~decision.abstained]) <= set(model.classes_)
        np.testing.assert_array_equal(decision.class_index[decision.abstained], -1)

        marked = TreeClassifier(labeler="cautious", max_depth=4, abstain_value="undecided").fit(
            pima.X, pima.y
        )
        predicted = marked.predict(pima.X)
        np.testing.assert_array_equal(predicted == "undecided", decision.abstained)
        with pytest.raises(
            ValueError, match="abstain_value='tested_negative' is one of the classes"
        ):
            TreeClassifier(labeler="cautious", abstain_value="tested_negative").fit(pima.X, pima.y)
        codes = (pima.y == "tested_positive").astype(int)
        numeric = TreeClassifier(labeler="cautious", max_depth=4, abstain_value=-1).fit(
            pima.X, codes
        )
        out = numeric.predict(pima.X)
        assert out.dtype.kind == "i" and (out == -1).sum() == decision.abstained.sum()
        # score counts an abstention as an error
        assert numeric.score(pima.X, codes) == pytest.approx((out == codes).mean())
