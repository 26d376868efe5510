"""Issue 55: what users hit with inputs and outputs outside the survival curves: repeated
column names, subnormal weights, rpart's (time, events) scored, export_dot of a model and
the text of regression and survival trees (rpart's print: n, deviance, value)."""

import numpy as np
import pytest

from treekit_core import (
    ForestRegressor,
    SurvivalTree,
    TreeClassifier,
    TreeRegressor,
    export_dot,
)
from treekit_core.datasets import load_X_y, survival_array

pd = pytest.importorskip("pandas")


@pytest.mark.parametrize(
    "frame",
    [
        lambda X: pd.DataFrame(X, columns=["a", "b", "a"]),
        lambda X: pd.concat(
            [pd.DataFrame({"a": pd.Categorical(list("xy") * 25)}), pd.DataFrame(X[:, :2])],
            axis=1,
        ).set_axis(["a", "b", "a"], axis=1),
    ],
)
@pytest.mark.parametrize("estimator", [TreeRegressor, ForestRegressor])
def test_a_repeated_column_name_is_refused_naming_it(frame, estimator):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    with pytest.raises(ValueError, match="X has the column 'a' more than once"):
        estimator().fit(frame(X), X[:, 1])
    model = TreeRegressor(max_depth=2).fit(pd.DataFrame(X, columns=["a", "b", "c"]), X[:, 1])
    with pytest.raises(ValueError, match="X has the column 'a' more than once"):
        model.predict(frame(X))


def test_subnormal_weights_are_refused():
    """Weights of 5e-324 rounded every weighted response to a multiple of it: leaf means
    left the range of y. Refused, naming the row; a common factor changes no tree."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 2))
    y = X[:, 0] + rng.normal(size=60)
    weight = np.ones(60)
    weight[7] = 5e-324
    with pytest.raises(ValueError, match="sample_weight is 4.94066e-324 at row 7"):
        TreeRegressor().fit(X, y, sample_weight=weight)
    scaled = TreeRegressor(max_depth=3).fit(X, y, sample_weight=np.full(60, 1e-100))
    plain = TreeRegressor(max_depth=3).fit(X, y)
    np.testing.assert_allclose(scaled.predict(X), plain.predict(X), rtol=1e-12)


def test_rpart_poisson_scores_its_time_and_events_columns():
    """R^2 of the predicted rate against each row's observed rate events / time."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(80, 2))
    time = rng.uniform(0.5, 2.0, size=80)
    events = rng.poisson(time * np.exp(X[:, 0])).astype(float)
    y = np.column_stack([time, events])
    model = TreeRegressor(criterion="rpart_poisson", max_depth=2).fit(X, y)
    rate, predicted = events / time, model.predict(X)
    by_hand = 1 - ((rate - predicted) ** 2).sum() / ((rate - rate.mean()) ** 2).sum()
    assert model.score(X, y) == pytest.approx(by_hand, rel=1e-12)
    counts = TreeRegressor(criterion="rpart_poisson", max_depth=2).fit(X, events)
    assert counts.score(X, events) == pytest.approx(
        1 - ((events - counts.predict(X)) ** 2).sum() / ((events - events.mean()) ** 2).sum()
    )


def test_export_dot_of_a_model_words_its_leaves_as_its_text_does():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(100, 2))
    regressor = TreeRegressor(max_depth=2).fit(pd.DataFrame(X, columns=["age", "dose"]), X[:, 0])
    dot = export_dot(regressor)
    assert "class:" not in dot and "age <= " in dot
    tree = regressor.tree_
    leaf = int(np.flatnonzero(tree.is_leaf)[0])
    expected = (
        f"value: [{tree.value[leaf, 0]:.4f}]  (n={tree.n_samples[leaf]}, "
        f"deviance={tree.weight[leaf] * tree.impurity[leaf]:.4g})"
    )
    assert f'n{leaf} [label="{expected}"' in dot
    assert expected in regressor.export_text()
    classifier = TreeClassifier(max_depth=2).fit(X, (X[:, 0] > 0).astype(int))
    assert "class: 1" in export_dot(classifier)
    assert export_dot(classifier) == export_dot(classifier.tree_, None, classifier.classes_)
    with pytest.raises(TypeError, match="only decimals="):
        export_dot(regressor, ["a", "b"])
    from treekit_core import ForestClassifier

    with pytest.raises(TypeError, match="a forest holds several"):
        export_dot(ForestClassifier(n_estimators=2).fit(X, (X[:, 0] > 0).astype(int)))


def test_survival_tree_text_shows_n_events_median_and_risk():
    X, y = load_X_y("veteran", dropna=True)
    model = SurvivalTree(max_depth=2).fit(X, y)
    tree = model.tree_
    text = model.export_text()
    for leaf in np.flatnonzero(tree.is_leaf):
        rows = model.apply(X) == leaf
        event, time = y["event"][rows], y["time"][rows]
        median = SurvivalTree(min_samples_split=10**6).fit(
            np.zeros((rows.sum(), 1)), survival_array(event, time)
        )
        expected_median = median.predict_survival_time(np.zeros((1, 1)))[0]
        risk = model.predict(X[rows][:1])[0]
        line = (
            f"n={rows.sum()}, events={event.sum()}, median survival={expected_median:.4g}, "
            f"risk={risk:.4g}"
        )
        assert line in text, (line, text)
