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


def test_component_parameters_follow_scikit_learns_nested_convention(pima):
    """Issue 37: pruner__rule and pruner_params__rule both set the pruner's rule, also
    when pruner_params is None; get_params(deep=True) lists every component's parameters;
    GridSearchCV's value reaches the fitted component; a grid may mix pruners whose
    parameters differ."""
    from sklearn.model_selection import GridSearchCV

    model = TreeClassifier(pruner="cost_complexity")
    params = model.get_params(deep=True)
    assert params["pruner__rule"] == "min_error" and params["pruner__cv"] == 10
    assert "pruner__rule" not in model.get_params(deep=False)
    assert model.set_params(pruner__rule="one_se").pruner_params == {"rule": "one_se"}
    assert model.set_params(pruner_params__cv=5).pruner_params == {"rule": "one_se", "cv": 5}
    assert model.get_params()["pruner__cv"] == 5
    with pytest.raises(ValueError, match="nested names are <kind>__<parameter>"):
        model.set_params(bogus__x=1)
    from treekit_core.builtins import CostComplexity

    ready = TreeClassifier(pruner=CostComplexity(cv=4)).set_params(pruner__rule="one_se")
    assert (ready.pruner.rule, ready.pruner.cv, ready.pruner_params) == ("one_se", 4, None)
    assert model.set_params(pruner="pessimistic").pruner_params is None  # another pruner
    grid = GridSearchCV(
        TreeClassifier(pruner="cost_complexity", random_state=0),
        [
            {"pruner": ["cost_complexity"], "pruner__rule": ["min_error", "one_se"]},
            {"pruner": ["pessimistic"], "pruner__confidence_factor": [0.1, 0.25]},
        ],
        cv=3,
    ).fit(pima.X, pima.y)
    assert len(grid.cv_results_["params"]) == 4
    best = grid.best_params_
    fitted = grid.best_estimator_.composition_.pruner
    assert fitted.name == best["pruner"]
    for key, value in best.items():
        if key.startswith("pruner__"):
            assert getattr(fitted, key.split("__", 1)[1]) == value


def test_every_public_estimators_parameters_are_documented_in_its_docstring():
    """Issue 58: every ``__init__`` parameter of every public estimator is in its
    docstring's Parameters section (described once, in ``parameter_docs.PARAMETERS``), and
    a parameter without a description is refused when the class is defined."""
    import inspect

    import treekit_core
    from treekit_core import document_parameters

    estimators = [
        getattr(treekit_core, name)
        for name in treekit_core.__all__
        if isinstance(getattr(treekit_core, name), type)
        and all(hasattr(getattr(treekit_core, name), m) for m in ("fit", "predict", "score"))
        # an estimator, not a family or a structure (which have no parameters of their own)
        and getattr(treekit_core, name).__init__ is not object.__init__
    ]
    assert {"TreeClassifier", "TreeRegressor", "SurvivalTree", "ForestSurvival"} <= {
        e.__name__ for e in estimators
    }
    for estimator in estimators:
        doc = inspect.getdoc(estimator)
        assert "Parameters\n----------" in doc, estimator.__name__
        section = doc.split("Parameters\n----------", 1)[1]
        listed = {line.split(" ")[0] for line in section.splitlines() if line and line[0] != " "}
        wanted = set(inspect.signature(estimator.__init__).parameters) - {"self"}
        assert wanted <= listed, (estimator.__name__, sorted(wanted - listed))

    class Undocumented:
        def __init__(self, frobnicate=1):
            self.frobnicate = frobnicate

    with pytest.raises(TypeError, match="'frobnicate' is not described"):
        document_parameters(Undocumented)
