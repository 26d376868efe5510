"""Several outputs at once (issue 64): a 2-D y (n x k) fits one tree deciding k responses,
as scikit-learn's ``DecisionTreeRegressor`` and ``RandomForestRegressor`` do: the criterion
is the mean of the outputs' impurities, a leaf holds one mean per output, ``predict``
returns n x k.

scikit-learn tries features in a random order and keeps the first of tied splits, so the
trees are compared wherever its five ``random_state``s agree (a data set on which they
disagree has tied splits, and treekit then agrees with one of them)."""

import json
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.ensemble import RandomForestRegressor
from sklearn.metrics import r2_score
from sklearn.tree import DecisionTreeRegressor
from sklearn_parity import agreed_sklearn_tree as agreed_tree
from sklearn_parity import assert_same_nodes, float32_exact

from treekit_core import (
    BoostingRegressor,
    ExtraTreesRegressor,
    ForestRegressor,
    TreeRegressor,
)
from treekit_core.builtins.pruners.cost_complexity import CostComplexity
from treekit_core.datasets import load_dataset


def quakes_outputs():
    """The bundled quakes: (mag, stations) from (lat, long, depth)."""
    data = load_dataset("quakes")
    names = list(data.feature_names)
    stations = names.index("stations")
    X = np.delete(data.X, stations, axis=1)
    return float32_exact(X), np.column_stack([data.y, data.X[:, stations]])


def synthetic_outputs(seed, n=400, k=3):
    rng = np.random.default_rng(seed)
    X = float32_exact(rng.normal(size=(n, 5)))
    Y = np.column_stack(
        [X[:, 0] + 0.5 * rng.normal(size=n), X[:, 1] ** 2, np.sin(X[:, 2]) + X[:, 0]][:k]
    )
    return X, Y


def agreed_sklearn_tree(X, Y, **params):
    """scikit-learn's tree where its five seeds grow the same one, else None."""
    return agreed_tree(DecisionTreeRegressor, X, Y, **params)


CASES = [
    ("quakes", {"min_samples_leaf": 10}),
    ("quakes", {"max_leaf_nodes": 12}),
    ("synthetic0", {"min_samples_leaf": 5}),
    ("synthetic1", {"min_samples_leaf": 3, "max_depth": 8}),
    ("synthetic1", {"min_samples_leaf": 10}),
    ("synthetic2", {"max_leaf_nodes": 12}),
]


def case_data(name):
    return quakes_outputs() if name == "quakes" else synthetic_outputs(int(name[-1]))


@pytest.mark.parametrize("name, params", CASES)
def test_the_tree_scikit_learn_grows_on_several_outputs(name, params):
    """Same nodes, features, thresholds, impurities (the mean of the outputs' variances)
    and leaf means per output; predictions to 1e-9."""
    X, Y = case_data(name)
    theirs = agreed_sklearn_tree(X, Y, **params)
    assert theirs is not None, "scikit-learn's seeds disagree: choose data without ties"
    ours = TreeRegressor(**params).fit(X, Y)
    tree, t = ours.tree_, theirs.tree_
    assert_same_nodes(tree, t, impurity_atol=1e-10)
    np.testing.assert_allclose(tree.value, t.value[:, :, 0], rtol=1e-12, atol=1e-12)
    assert ours.n_outputs_ == theirs.n_outputs_ == Y.shape[1]
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=0, atol=1e-9)
    np.testing.assert_allclose(
        ours.feature_importances_, theirs.feature_importances_, rtol=1e-9, atol=1e-12
    )
    assert ours.score(X, Y) == pytest.approx(theirs.score(X, Y), rel=1e-12)


def test_poisson_regression_of_several_counts_as_scikit_learn():
    """criterion='poisson' on two count outputs: the mean of the outputs' half deviances
    (a child with an output's mean at 0 is no candidate), as scikit-learn's."""
    rng = np.random.default_rng(3)
    X = float32_exact(rng.normal(size=(300, 4)))
    Y = np.column_stack([rng.poisson(np.exp(X[:, 0])), rng.poisson(np.exp(0.5 * X[:, 1]))])
    params = {"criterion": "poisson", "min_samples_leaf": 10}
    theirs = agreed_sklearn_tree(X, Y, **params)
    assert theirs is not None
    ours = TreeRegressor(**params).fit(X, Y)
    internal = theirs.tree_.children_left >= 0
    np.testing.assert_array_equal(ours.tree_.feature[internal], theirs.tree_.feature[internal])
    np.testing.assert_array_equal(ours.tree_.threshold[internal], theirs.tree_.threshold[internal])
    np.testing.assert_allclose(ours.tree_.impurity, theirs.tree_.impurity, rtol=1e-9)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_copies_of_one_output_grow_the_single_output_tree(seed):
    """Two identical columns have the mean impurity of one, (v + v) / 2 = v exactly: the
    tree of y twice is the tree of y (nodes, thresholds, impurities), both outputs
    predicting y's prediction."""
    copies = 2
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 3)).round(1)
    y = rng.normal(size=60).round(2)
    one = TreeRegressor(min_samples_leaf=3).fit(X, y)
    several = TreeRegressor(min_samples_leaf=3).fit(X, np.column_stack([y] * copies))
    np.testing.assert_array_equal(several.tree_.feature, one.tree_.feature)
    np.testing.assert_array_equal(several.tree_.threshold, one.tree_.threshold)
    np.testing.assert_array_equal(several.tree_.impurity, one.tree_.impurity)
    np.testing.assert_array_equal(several.predict(X), np.column_stack([one.predict(X)] * copies))


def test_a_column_vector_y_is_one_output():
    """y of shape (n, 1) is one output: predict returns (n,), n_outputs_ is 1."""
    X, Y = synthetic_outputs(0)
    with pytest.warns(UserWarning, match="column-vector"):
        model = TreeRegressor(max_depth=3).fit(X, Y[:, :1])
    assert model.n_outputs_ == 1 and model.predict(X).shape == (X.shape[0],)
    np.testing.assert_array_equal(
        model.predict(X), TreeRegressor(max_depth=3).fit(X, Y[:, 0]).predict(X)
    )


def test_a_forest_of_several_outputs_averages_its_trees_per_output():
    """predict is the mean of the trees' leaf means, per output; oob_prediction_ is n x k;
    oob_score_ and score are scikit-learn's r2 averaged over the outputs."""
    X, Y = synthetic_outputs(1)
    forest = ForestRegressor(n_estimators=15, random_state=0, oob_score=True).fit(X, Y)
    by_tree = np.mean(
        [forest.composition_.evaluator.predict_distribution(t, X) for t in forest.estimators_],
        axis=0,
    )
    np.testing.assert_allclose(forest.predict(X), by_tree, rtol=1e-12)
    assert forest.predict(X).shape == Y.shape and forest.n_outputs_ == 3
    assert forest.oob_prediction_.shape == Y.shape
    scored = ~np.isnan(forest.oob_prediction_).any(axis=1)
    assert forest.oob_score_ == pytest.approx(
        r2_score(Y[scored], forest.oob_prediction_[scored]), rel=1e-12
    )
    assert forest.score(X, Y) == pytest.approx(r2_score(Y, forest.predict(X)), rel=1e-12)


def test_a_forest_without_bootstrap_or_feature_draws_is_the_tree_scikit_learn_grows():
    """bootstrap=False, max_features=1.0: every tree is the full tree, so the forest
    predicts what scikit-learn's forest (and tree) predicts, per output."""
    X, Y = quakes_outputs()
    ours = ForestRegressor(n_estimators=3, bootstrap=False, max_features=1.0, random_state=0)
    theirs = RandomForestRegressor(n_estimators=3, bootstrap=False, max_features=1.0)
    np.testing.assert_allclose(
        ours.fit(X, Y).predict(X), theirs.fit(X, Y).predict(X), rtol=0, atol=1e-9
    )


def test_extremely_randomised_and_honest_trees_take_several_outputs():
    X, Y = synthetic_outputs(2)
    extra = ExtraTreesRegressor(n_estimators=10, random_state=0).fit(X, Y)
    assert extra.predict(X).shape == Y.shape
    assert extra.score(X, Y) > 0.9  # no bootstrap, grown out: close to the training rows
    honest = ForestRegressor(n_estimators=10, honest=True, random_state=0).fit(X, Y)
    assert honest.predict(X).shape == Y.shape and honest.score(X, Y) > 0.5


def test_quantiles_are_taken_per_output():
    """predict(X, quantiles=q) is n x k x len(q) (quantile-forest's layout): output j's
    quantiles are the weighted quantiles of output j's training responses in the leaf."""
    X, Y = synthetic_outputs(0, n=200, k=2)
    model = TreeRegressor(min_samples_leaf=15).fit(X, Y)
    q = np.array([0.1, 0.5, 0.9])
    found = model.predict(X[:30], quantiles=q)
    assert found.shape == (30, 2, 3)
    leaves, train_leaves = model.apply(X[:30]), model.apply(X)
    for i, leaf in enumerate(leaves):
        members = Y[train_leaves == leaf]
        for j in range(2):
            expected = np.quantile(members[:, j], q, method="inverted_cdf")
            np.testing.assert_array_equal(found[i, j], expected)


def test_the_pruning_path_is_scikit_learn_s_and_rpart_s_risk_is_summed():
    """cost_complexity_pruning_path (risk "impurity": the mean of the outputs' variances)
    equals scikit-learn's; the default risk ("prediction", rpart's) is the outputs' summed
    squared deviations: the root's over its weight is the sum of the outputs' variances."""
    X, Y = synthetic_outputs(1, k=2)
    theirs = agreed_sklearn_tree(X, Y, min_samples_leaf=10)
    path = TreeRegressor(min_samples_leaf=10).cost_complexity_pruning_path(X, Y)
    their_path = theirs.cost_complexity_pruning_path(X, Y)
    np.testing.assert_allclose(path["ccp_alphas"], their_path["ccp_alphas"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(path["impurities"], their_path["impurities"], rtol=1e-9)
    grown = TreeRegressor(min_samples_leaf=10).fit(X, Y)
    sequence = CostComplexity(risk="prediction").pruning_sequence(
        grown.tree_, grown.composition_.labeler, target=grown.composition_.target
    )
    assert sequence.risk[-1] == pytest.approx(Y.var(axis=0).sum(), rel=1e-12)


def test_model_files_pickles_and_json_keep_several_outputs(tmp_path):
    X, Y = quakes_outputs()
    for model in (
        TreeRegressor(max_depth=5).fit(X, Y),
        ForestRegressor(n_estimators=4, random_state=0, max_depth=4).fit(X, Y),
    ):
        expected = model.predict(X)
        np.testing.assert_array_equal(type(model).from_json(model.to_json()).predict(X), expected)
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).predict(X), expected)
        kept = type(model).from_json(model.to_json(leaf_responses=True))
        np.testing.assert_array_equal(
            kept.predict(X[:5], quantiles=[0.5]), model.predict(X[:5], quantiles=[0.5])
        )


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda t: t.update(statistics=t["statistics"][:, :3]), "2 per output"),
        (lambda t: t.update(value=t["value"][:, :1]), "expected 2 \\(a mean per output\\)"),
    ],
)
def test_a_model_file_whose_outputs_do_not_match_is_refused(change, message):
    X, Y = quakes_outputs()
    payload = json.loads(TreeRegressor(max_depth=3).fit(X, Y).to_json())
    arrays = {
        "statistics": np.asarray(payload["tree"]["statistics"], dtype=float),
        "value": np.asarray(payload["tree"]["value"], dtype=float),
    }
    change(arrays)
    payload["tree"]["statistics"] = arrays["statistics"].tolist()
    payload["tree"]["value"] = arrays["value"].tolist()
    with pytest.raises(ValueError, match=message):
        TreeRegressor.from_json(json.dumps(payload))


def test_what_takes_one_output_refuses_several_naming_it():
    X, Y = synthetic_outputs(0, k=2)
    with pytest.raises(ValueError, match="target 'median' \\(criterion 'absolute_error'\\)"):
        TreeRegressor(criterion="absolute_error").fit(X, Y)
    with pytest.raises(Exception, match="monotonic_cst constrains one output"):
        TreeRegressor(monotonic_cst=[1, 0, 0, 0, 0]).fit(X, Y)
    with pytest.raises(ValueError, match="conformal rows calibrate intervals of one output"):
        ForestRegressor(n_estimators=3, conformal_fraction=0.2).fit(X, Y)
    with pytest.raises(ValueError, match="predict_interval gives intervals of one output"):
        ForestRegressor(n_estimators=5, oob_score=True).fit(X, Y).predict_interval(X)
    with pytest.raises(ValueError, match="BoostingRegressor boosts one"):
        BoostingRegressor(n_estimators=2).fit(X, Y)
    with pytest.raises(ValueError, match="Poisson regression needs y >= 0"):
        TreeRegressor(criterion="poisson").fit(X, np.abs(Y) * np.array([1, -1]))
    with pytest.raises(ValueError, match="Sum of y of output 1 is not positive"):
        TreeRegressor(criterion="poisson").fit(X, np.column_stack([np.abs(Y[:, 0]), 0 * Y[:, 0]]))
    with pytest.raises(ValueError, match="contains NaN at row 3, output 1"):
        bad = Y.copy()
        bad[3, 1] = np.nan
        TreeRegressor().fit(X, bad)
    with pytest.raises(ValueError, match="y has 5 rows but X has 400"):
        TreeRegressor().fit(X, Y[:5])


def test_exports_carry_every_output():
    """to_sklearn: a DecisionTreeRegressor of k outputs predicting the same; to_onnx: a
    TreeEnsembleRegressor of k targets (onnxruntime, float32 values); to_shap: SHAP values
    per output that add up to predict exactly."""
    from treekit_core.export import to_onnx, to_shap, to_sklearn

    X, Y = quakes_outputs()
    tree = TreeRegressor(max_depth=5).fit(X, Y)
    exported = to_sklearn(tree)
    assert exported.n_outputs_ == 2
    np.testing.assert_array_equal(exported.predict(X), tree.predict(X))
    ort = pytest.importorskip("onnxruntime")
    shap = pytest.importorskip("shap")
    forest = ForestRegressor(n_estimators=4, max_depth=4, random_state=0).fit(X, Y)
    for model in (tree, forest):
        session = ort.InferenceSession(to_onnx(model).SerializeToString())
        found = session.run(None, {"X": X.astype(np.float32)})[0]
        assert found.shape == Y.shape
        np.testing.assert_allclose(found, model.predict(X), rtol=1e-6)
        explainer = shap.TreeExplainer(to_shap(model))
        values = explainer.shap_values(X[:25])
        np.testing.assert_allclose(
            values.sum(axis=1) + explainer.expected_value, model.predict(X[:25]), atol=1e-9
        )


def test_the_command_line_fits_predicts_and_evaluates_several_responses(tmp_path, capsys):
    """fit --target y1 y2: a regressor of two outputs (rows missing either dropped);
    predict writes a column per response, named after it, equal to the model's
    predictions; evaluate --target y1 y2 prints each output's figures; one --target for a
    model of two, or several for classification, is refused naming what to give."""
    from treekit_core.tools.cli import main

    X, Y = synthetic_outputs(0, n=120, k=2)
    path = tmp_path / "outputs.csv"
    rows = ["a,b,c,d,e,y1,y2"]
    for i, (x, y) in enumerate(zip(X, Y, strict=True)):
        y1 = "" if i == 7 else f"{y[0]:.17g}"
        rows.append(",".join(f"{v:.17g}" for v in x) + f",{y1},{y[1]:.17g}")
    path.write_text("\n".join(rows) + "\n")
    model_path, out = tmp_path / "model.json", tmp_path / "predicted.csv"
    assert main(["fit", str(path), "--target", "y1", "y2", "--out", str(model_path)]) == 0
    assert "1 row without a value of every --target dropped" in capsys.readouterr().out
    assert main(["predict", str(model_path), str(path), "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines[0] == "prediction_y1,prediction_y2"
    written = np.array([[float(v) for v in line.split(",")] for line in lines[1:]])
    model = TreeRegressor.from_json(model_path.read_text())
    np.testing.assert_allclose(written, model.predict(X), rtol=1e-9)
    expected = TreeRegressor(pruner="cost_complexity", random_state=0).get_params()
    assert model.n_outputs_ == 2 and model.get_params()["pruner"] == expected["pruner"]
    capsys.readouterr()
    assert main(["evaluate", str(model_path), str(path), "--target", "y1", "y2"]) == 0
    printed = capsys.readouterr().out
    kept = np.arange(120) != 7
    r2 = r2_score(Y[kept, 1], model.predict(X[kept])[:, 1])
    assert f"{r2:.6f}" in printed.splitlines()[-1] and printed.splitlines()[-1].startswith("y2")
    assert main(["evaluate", str(model_path), str(path), "--target", "y1"]) == 2
    assert "give their 2 columns to --target" in capsys.readouterr().err
    argv = ["fit", str(path), "--target", "y1", "y2", "--task", "classification"]
    assert main([*argv, "--out", str(tmp_path / "classes.json")]) == 0  # every value a class
    assert "classifier of several outputs" in capsys.readouterr().out


def test_the_criterion_of_several_outputs_survives_files_pickles_and_pruning():
    """Several outputs score by the criterion's for_outputs() (the mean of the outputs'
    variances; one output keeps the plain function, 1.5x faster): after fit, a model file,
    a pickle and prune(alpha) alike, every node's impurity the mean of its outputs'
    variances by hand."""
    from treekit_core.builtins.criteria import SquaredError, SquaredErrorOfOutputs

    X, Y = synthetic_outputs(1, n=200, k=2)
    model = TreeRegressor(pruner="cost_complexity", max_depth=4, random_state=0).fit(X, Y)
    assert type(TreeRegressor().fit(X, Y[:, 0]).composition_.criterion) is SquaredError
    for fitted in (
        model,
        TreeRegressor.from_json(model.to_json()),
        pickle.loads(pickle.dumps(model)),
        model.prune(alpha=0.01),
    ):
        assert type(fitted.composition_.criterion) is SquaredErrorOfOutputs
        tree = fitted.tree_
        w = tree.weight[:, None]
        means = tree.statistics[:, 0::2] / w
        by_hand = (tree.statistics[:, 1::2] / w - means**2).mean(axis=1)
        np.testing.assert_allclose(tree.impurity, by_hand, rtol=1e-9, atol=1e-12)
