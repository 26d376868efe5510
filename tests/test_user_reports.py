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


@pytest.mark.parametrize("estimator", ["TreeClassifier", "ForestClassifier"])
def test_cross_validated_rejection_with_a_target_that_names_no_classes(estimator):
    """The fuzz run's composition (absolute_error, cost_matrix, mdl, surrogates and
    cross-validated rejection) raised AttributeError for classes_ in the rejection's folds:
    a regression criterion's default target names no classes, and the folds' copies asked
    for them. They fit now; the threshold is the one a copy fitted on all rows chooses."""
    import treekit_core

    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=60)
    params = dict(criterion="absolute_error", reject={"keep_correct": 0.9, "cv": 2})
    if estimator == "ForestClassifier":  # its trees vote: a value target is refused, clearly
        with pytest.raises(ValueError, match="needs a target that decides among labels"):
            treekit_core.ForestClassifier(n_estimators=3, **params).fit(X, y)
        return
    params.update(pruner="mdl", propagator="surrogate", evaluator="surrogate")
    model = treekit_core.TreeClassifier(**params).fit(X, y)
    assert not hasattr(model, "classes_")
    assert np.isfinite(model.reject_threshold_)
    assert np.isfinite(model.predict(X)).all()


@pytest.mark.parametrize("forest", [False, True])
def test_rpart_poisson_cross_validated_on_six_rows_with_a_nominal_column(forest):
    """A fold without events predicts rate 0, so a held-out event's deviance is infinite;
    a bootstrap's undrawn row (weight 0) times it was NaN, and the 1-SE choice then found
    no subtree (IndexError). Undrawn rows count nothing; all-infinite errors choose the
    root."""
    from treekit_core import ForestRegressor

    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": pd.Categorical(list("xyzwxy")), "b": rng.normal(size=6)})
    y = np.column_stack([rng.uniform(0.5, 2, 6), [0, 0, 0, 2, 0, 1]])
    params = dict(
        criterion="rpart_poisson",
        pruner="cost_complexity",
        pruner_params={"cv": 2},
        min_samples_split=2,
        min_samples_leaf=1,
    )
    model = (
        ForestRegressor(n_estimators=5, random_state=0, **params)
        if forest
        else TreeRegressor(**params)
    ).fit(X, y)
    assert np.isfinite(model.predict(X)).all()
    for tree in model.estimators_ if forest else [model.tree_]:
        state = tree.component_state["pruner"]
        assert not np.isnan(state["cv_error"]).any()
        if np.isinf(state["cv_error"]).all():
            assert tree.n_nodes == 1


def test_held_out_errors_count_nothing_for_rows_of_weight_zero():
    from treekit_core.builtins.pruners.cost_complexity import held_out_errors

    rng = np.random.default_rng(5)
    X = rng.normal(size=(20, 2))
    y = np.column_stack([np.ones(20), np.r_[np.zeros(10), np.ones(10)]])
    model = TreeRegressor(criterion="rpart_poisson", max_depth=1).fit(X[:10], y[:10, 1])
    from treekit_core.engine.training_data import TrainingData

    target = model.composition_.target
    rows = target.encode(y[10:], 10).rows
    test = TrainingData(X[10:], rows, np.r_[np.zeros(5), np.ones(5)], None)
    train = TrainingData(X[:10], target.encode(y[:10], 10).rows, np.ones(10), None)
    errors = held_out_errors(model.composition_, model.tree_, train, test)
    np.testing.assert_array_equal(errors[:5], 0.0)
    assert np.isinf(errors[5:]).all()


# -- model files that loaded and then misbehaved ---------------------------------------


def _tampered(model, edit):
    import json

    payload = json.loads(model.to_json())
    edit(payload)
    return type(model).from_json(json.dumps(payload))


def test_an_edited_impurity_or_weight_is_refused_naming_the_node():
    from treekit_core import ModelFileError

    rng = np.random.default_rng(6)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] + rng.normal(size=200) > 0).astype(int)
    model = TreeClassifier(max_depth=3).fit(X, y)

    def impurity(payload):
        payload["tree"]["impurity"][1] = 0.9

    def weight(payload):
        payload["tree"]["weight"][2] *= 3

    with pytest.raises(ModelFileError, match="field 'impurity' is 0.9 at node 1, but its"):
        _tampered(model, impurity)
    with pytest.raises(ModelFileError, match="at node 2, but its statistics and weight give"):
        _tampered(model, weight)
    again = _tampered(model, lambda payload: None)
    np.testing.assert_array_equal(again.feature_importances_, model.feature_importances_)


def test_a_grown_tree_that_breaks_the_monotonic_constraint_is_refused():
    """prune() starts from the grown tree: it is checked against monotonic_cst as the
    tree is (a pure left leaf of class 1 and right leaf of class 0 under a rising
    feature)."""
    from treekit_core import ModelFileError

    rng = np.random.default_rng(7)
    X = np.column_stack([rng.normal(size=400), np.zeros(400)])  # every cut on feature 0
    y = (X[:, 0] + 0.5 * rng.normal(size=400) > 0).astype(int)
    model = TreeClassifier(
        monotonic_cst=[1, 0], pruner="cost_complexity", pruner_params={"alpha": 0.01}
    ).fit(X, y)
    grown = model._grown_tree
    assert grown is not None and grown.n_nodes > model.tree_.n_nodes
    node = next(
        n
        for n in range(grown.n_nodes)
        if grown.feature[n] == 0 and all(grown.is_leaf[c] for c in grown.children(n))
    )
    left, right = (int(c) for c in grown.children(node))

    def swap(payload):
        tree = payload["grown_tree"]
        tree["statistics"][left] = [0.0, float(grown.weight[left])]
        tree["statistics"][right] = [float(grown.weight[right]), 0.0]
        tree["impurity"][left] = tree["impurity"][right] = 0.0
        tree["node_fields"]["value_lower"] = [-1e300] * grown.n_nodes
        tree["node_fields"]["value_upper"] = [1e300] * grown.n_nodes

    with pytest.raises(ModelFileError, match="grown_tree: .*constraint"):
        _tampered(model, swap)


def test_a_forest_whose_trees_disagree_on_the_time_grid_is_refused():
    from treekit_core import ForestSurvival, ModelFileError

    X, y = load_X_y("veteran", dropna=True)
    forest = ForestSurvival(n_estimators=3, max_depth=2, random_state=0).fit(X, y)

    def shift(payload):
        payload["trees"][1]["component_state"]["target"]["grid"][0] = 0.0

    with pytest.raises(ModelFileError, match=r"trees\[1\]: target.grid differs from trees\[0\]"):
        _tampered(forest, shift)


# -- issue 66's smaller findings ---------------------------------------------------------


def _cli(argv, capsys):
    from treekit_core.tools.cli import main

    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_command_line_refuses_what_it_cannot_evaluate(tmp_path, capsys):
    import shutil

    from treekit_core.datasets import dataset_path

    veteran = tmp_path / "veteran.csv"
    shutil.copy(dataset_path("veteran"), veteran)
    model = tmp_path / "vet.json"
    survival = ["--time", "time", "--event", "status"]
    assert (
        _cli(["fit", veteran, *survival, "--criterion", "exponential", "--out", model], capsys)[0]
        == 0
    )
    # a report of a survival model on a file with a text column (was "could not convert")
    code, out, err = _cli(
        ["evaluate", model, veteran, *survival, "--report", tmp_path / "r.html"], capsys
    )
    assert code == 0 and (tmp_path / "r.html").stat().st_size > 1000, err
    # every row censored: one clear line, not "no comparable pairs" or an unexpected error
    censored = tmp_path / "censored.csv"
    lines = veteran.read_text().splitlines()
    censored.write_text(
        "\n".join([lines[0]] + [line.rsplit(",", 1)[0] + ",0" for line in lines[1:]])
    )
    code, out, err = _cli(["evaluate", model, censored, *survival], capsys)
    assert code == 2 and "holds no event (all 137 rows censored)" in err
    # a regression's response of 1e400 (inf) is refused; --times belongs to survival models
    rng = np.random.default_rng(0)
    data = tmp_path / "numbers.csv"
    rows = ["a,b,y"] + [f"{a:.4f},{b:.4f},{a + b:.4f}" for a, b in rng.normal(size=(60, 2))]
    data.write_text("\n".join(rows))
    regressor = tmp_path / "reg.json"
    assert (
        _cli(["fit", data, "--target", "y", "--pruner", "none", "--out", regressor], capsys)[0] == 0
    )
    data.write_text("\n".join(rows[:5] + ["0.1,0.2,1e400"] + rows[5:]))
    code, out, err = _cli(["evaluate", regressor, data, "--target", "y"], capsys)
    assert code == 2 and "holds inf on row 6" in err
    code, out, err = _cli(["predict", regressor, data, "--times", "1,2"], capsys)
    assert code == 2 and "--times reads a survival model's curves" in err


def test_a_model_file_with_nested_feature_or_threshold_names_the_field():
    import json

    from treekit_core import ModelFileError

    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 2))
    model = TreeRegressor(max_depth=2).fit(X, X[:, 0])
    for field in ("feature", "threshold"):
        payload = json.loads(model.to_json())
        payload["tree"][field] = [[value] for value in payload["tree"][field]]
        with pytest.raises(ModelFileError, match=f"tree field '{field}' must be a list of numbers"):
            TreeRegressor.from_json(json.dumps(payload))


def test_survival_pictures_take_a_frame_with_a_text_column():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from treekit_core.datasets import load_dataset
    from treekit_core.tools.plots import plot_survival_curves, plot_survival_tree
    from treekit_core.tools.report import model_report

    data = load_dataset("veteran")
    frame = pd.DataFrame(data.X, columns=data.feature_names)
    frame["celltype"] = pd.Categorical(np.array(["a", "b", "c", "d"])[data.X[:, 1].astype(int)])
    model = SurvivalTree(criterion="exponential", max_depth=2).fit(frame, data.y)
    plt.close(plot_survival_tree(model, frame, data.y))
    fig, ax = plt.subplots()
    plot_survival_curves(model, frame, data.y, ax)
    plt.close(fig)
    assert "integrated Brier score" in model_report(model, frame, data.y)
