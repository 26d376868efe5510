"""Exports to scikit-learn, SHAP, ONNX and dtreeviz: exact against treekit's own
predictions, and clear errors for what a format cannot express."""

import itertools
import math

import numpy as np
import pytest

from treekit_core import ForestClassifier, TreeClassifier
from treekit_core.builtins.labelers import Majority
from treekit_core.datasets import DATASETS, load_dataset
from treekit_core.export import (
    MissingValueExportWarning,
    NotExportableError,
    to_onnx,
    to_shap,
    to_sklearn,
)

NUMERIC = ["wisconsin", "wdbc", "pima", "bupa", "haberman", "satimage", "balance_scale"]


def float32_data(name):
    data = load_dataset(name, dropna=True)
    return data.X.astype(np.float32).astype(np.float64), data.y


def test_numeric_list_covers_every_bundled_numeric_data_set():
    # regression and censored data sets: not for classifiers
    from treekit_core.datasets import COMPETING, RESPONSES, SURVIVAL

    nominal = {"lenses", "soybean", "vote", "labor"}
    follow_up = set(SURVIVAL) | set(COMPETING)
    assert set(NUMERIC) | nominal | set(RESPONSES) | follow_up == set(DATASETS)


# -- scikit-learn ---------------------------------------------------------------------
@pytest.mark.parametrize("name", NUMERIC)
def test_to_sklearn_predicts_exactly_as_treekit(name):
    X, y = float32_data(name)
    model = TreeClassifier(criterion="entropy", min_samples_leaf=3).fit(X, y)
    twin = to_sklearn(model, missing="larger_share")
    np.testing.assert_array_equal(twin.predict_proba(X), model.predict_proba(X))
    np.testing.assert_array_equal(twin.predict(X), model.predict(X))
    np.testing.assert_array_equal(twin.apply(X), model.apply(X))
    np.testing.assert_allclose(twin.feature_importances_, model.feature_importances_, atol=1e-12)


def test_sklearns_tree_tools_draw_the_twin(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from sklearn.tree import export_graphviz, export_text, plot_tree

    data = load_dataset("haberman")
    model = TreeClassifier(max_depth=2).fit(data.X, data.y)
    twin = to_sklearn(model, missing="larger_share")
    boxes = [t for t in plot_tree(twin) if "samples = " in t.get_text()]
    assert len(boxes) == model.tree_.n_nodes
    dot = export_graphviz(twin, class_names=[str(c) for c in model.classes_])
    assert dot.count("gini = ") == model.tree_.n_nodes
    assert export_text(twin).count("class:") == model.get_n_leaves()


def test_missing_values_follow_the_larger_share_with_one_warning_by_default():
    """Issue 36: the default export works (it refused before), warning once what happens
    to rows with a missing value; missing='error' refuses, missing='larger_share' is
    silent, and all three agree on rows without missing values."""
    data = load_dataset("wisconsin")  # 16 missing values in V6
    model = TreeClassifier(max_depth=3).fit(data.X, data.y)
    with pytest.raises(NotExportableError, match="missing='larger_share'"):
        to_sklearn(model, missing="error")
    with pytest.warns(MissingValueExportWarning, match="rows without missing values") as caught:
        default = to_sklearn(model)
    assert len(caught) == 1
    twin = to_sklearn(model, missing="larger_share")
    np.testing.assert_array_equal(default.predict_proba(data.X), twin.predict_proba(data.X))
    complete = ~np.isnan(data.X).any(axis=1)
    X = data.X.astype(np.float32).astype(np.float64)
    np.testing.assert_array_equal(twin.predict_proba(X[complete]), model.predict_proba(X[complete]))
    # with every share made 0/1 (the larger branch takes the missing values) nothing is
    # left to choose, and the twin routes NaN exactly as treekit does
    tree = model.tree_
    shares = tree.child_shares.copy()
    for node in np.flatnonzero(~tree.is_leaf):
        start = tree.child_start[node]
        shares[start : start + 2] = np.eye(2)[int(np.argmax(shares[start : start + 2]))]
    tree.set_child_shares(shares)
    assert np.isnan(X).any()
    exact = to_sklearn(model)
    np.testing.assert_array_equal(exact.predict_proba(X), model.predict_proba(X))
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(to_onnx(model).SerializeToString())
    np.testing.assert_allclose(
        session.run(None, {"X": X.astype(np.float32)})[1], model.predict_proba(X), atol=1e-6
    )


class LeastLikely(Majority):
    """A labeler that does not pick the most probable class."""

    def decide(self, distribution):
        return np.argmin(distribution, axis=1)


def test_compositions_a_scikit_learn_tree_cannot_express_are_refused():
    lenses = load_dataset("lenses")
    multiway = TreeClassifier(splitter="c45", categorical_features=lenses.categorical).fit(
        lenses.X, lenses.y
    )
    with pytest.raises(NotExportableError, match="asks a 'multiway' question"):
        to_sklearn(multiway, missing="larger_share")
    X, y = float32_data("haberman")
    with pytest.raises(NotExportableError, match="can abstain"):
        to_sklearn(TreeClassifier(reject=0.9).fit(X, y), missing="larger_share")
    with pytest.raises(NotExportableError, match="decides otherwise"):
        to_sklearn(TreeClassifier(labeler=LeastLikely()).fit(X, y), missing="larger_share")
    with pytest.raises(ValueError, match="missing must be one of"):
        to_sklearn(TreeClassifier().fit(X, y), missing="left")


# -- SHAP ------------------------------------------------------------------------------
def path_dependent_value(tree, x, subset, node=0):
    """E[f(x) | x_S] as path-dependent TreeSHAP defines it: follow x where the node tests
    a feature in S, else average the children by their training weight."""
    if tree["children_left"][node] < 0:
        return tree["values"][node]
    left, right = tree["children_left"][node], tree["children_right"][node]
    if tree["features"][node] in subset:
        child = left if x[tree["features"][node]] <= tree["thresholds"][node] else right
        return path_dependent_value(tree, x, subset, child)
    weight = tree["node_sample_weight"]
    return (
        weight[left] * path_dependent_value(tree, x, subset, left)
        + weight[right] * path_dependent_value(tree, x, subset, right)
    ) / weight[node]


def brute_force_shapley(model_dict, x, n_features):
    phi = np.zeros((n_features, model_dict["trees"][0]["values"].shape[1]))
    for i in range(n_features):
        others = [j for j in range(n_features) if j != i]
        for size in range(n_features):
            share = (
                math.factorial(size)
                * math.factorial(n_features - size - 1)
                / math.factorial(n_features)
            )
            for subset in itertools.combinations(others, size):
                for tree in model_dict["trees"]:
                    with_i = path_dependent_value(tree, x, set(subset) | {i})
                    without = path_dependent_value(tree, x, set(subset))
                    phi[i] += share * (with_i - without)
    return phi


@pytest.mark.parametrize(
    "model",
    [TreeClassifier(max_depth=3), ForestClassifier(n_estimators=3, max_depth=3, random_state=0)],
    ids=["tree", "forest"],
)
def test_shap_values_are_the_brute_force_shapley_values_and_add_up(model):
    shap = pytest.importorskip("shap")
    X, y = float32_data("haberman")  # 3 features: every subset can be enumerated
    model.fit(X, y)
    exported = to_shap(model, missing="larger_share")
    explainer = shap.TreeExplainer(exported, feature_perturbation="tree_path_dependent")
    values = np.asarray(explainer.shap_values(X[:25]))  # (samples, features, classes)
    for row in range(25):
        np.testing.assert_allclose(
            values[row], brute_force_shapley(exported, X[row], X.shape[1]), atol=1e-12
        )
    np.testing.assert_allclose(
        values.sum(axis=1) + explainer.expected_value, model.predict_proba(X[:25]), atol=1e-12
    )


def test_shap_refuses_questions_it_cannot_follow():
    lenses = load_dataset("lenses")  # CART subsets on nominal features
    model = TreeClassifier(categorical_features=lenses.categorical).fit(lenses.X, lenses.y)
    with pytest.raises(NotExportableError, match="asks a 'subset' question"):
        to_shap(model, missing="larger_share")


# -- ONNX ------------------------------------------------------------------------------
def onnx_run(model, X):
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(to_onnx(model, missing="larger_share").SerializeToString())
    assert [o.name for o in session.get_outputs()] == ["label", "probabilities"]
    return session.run(None, {"X": X.astype(np.float32)})


@pytest.mark.parametrize("name", NUMERIC)
@pytest.mark.parametrize("forest", [False, True], ids=["tree", "forest"])
def test_onnxruntime_equals_treekit_on_the_bundled_data(name, forest):
    pytest.importorskip("onnx")
    X, y = float32_data(name)
    model = ForestClassifier(n_estimators=10, random_state=0) if forest else TreeClassifier()
    model.fit(X, y)
    labels, proba = onnx_run(model, X)
    expected = model.predict_proba(X)
    np.testing.assert_allclose(proba, expected, atol=1e-5)
    decided = model.predict(X)
    clear = np.sort(expected, axis=1)[:, -1] - np.sort(expected, axis=1)[:, -2] > 1e-5
    assert clear.mean() > 0.9  # ties within float32 rounding may go either way
    np.testing.assert_array_equal(labels[clear].astype(str), decided[clear].astype(str))


@pytest.mark.parametrize("nominal_split", ["subset", "multiway"])
def test_nominal_questions_become_equality_chains(nominal_split):
    pytest.importorskip("onnx")
    for name in ("soybean", "vote"):
        data = load_dataset(name)
        model = TreeClassifier(
            splitter_params={"nominal_split": nominal_split},
            categorical_features=data.categorical,
            min_samples_leaf=2,
        ).fit(data.X, data.y)
        assert model.tree_.question_of(0).name == nominal_split
        codes = np.column_stack(
            [
                [
                    model.categories_[j].index(v) if v in model.categories_[j] else np.nan
                    for v in data.X[:, j]
                ]
                for j in range(data.X.shape[1])
            ]
        )
        complete = ~np.isnan(codes).any(axis=1)
        labels, proba = onnx_run(model, codes[complete])
        np.testing.assert_allclose(proba, model.predict_proba(data.X[complete]), atol=1e-6)
        np.testing.assert_array_equal(labels.astype(str), model.predict(data.X[complete]))


# -- dtreeviz ----------------------------------------------------------------------------
def test_dtreeviz_draws_a_treekit_tree(tmp_path):
    pytest.importorskip("dtreeviz")
    import shutil

    from treekit_core.export import dtreeviz_model

    data = load_dataset("haberman")
    model = TreeClassifier(max_depth=2).fit(data.X, data.y)
    picture = dtreeviz_model(model, data.X, data.y, feature_names=["age", "year", "nodes"])
    rendered = picture.view()
    assert "nodes" in rendered.dot and rendered.dot.count("leaf") >= model.get_n_leaves()
    if shutil.which("dot"):
        rendered.save(str(tmp_path / "tree.svg"))
        assert (tmp_path / "tree.svg").read_text().lstrip().startswith("<")
    forest = ForestClassifier(n_estimators=2, max_depth=2, random_state=0).fit(data.X, data.y)
    with pytest.raises(ValueError, match="tree_index"):
        dtreeviz_model(forest, data.X, data.y)
    assert "leaf" in dtreeviz_model(forest, data.X, data.y, tree_index=1).view().dot


@pytest.mark.parametrize("name", ["haberman", "pima", "wdbc"])
def test_default_exports_of_default_models_on_complete_data(name):
    """Issue 36: a default tree and forest fitted on data without a missing value export
    with the defaults (they raised NotExportableError) and predict exactly as treekit on
    every row (float32-exact X, as scikit-learn compares in float32)."""
    import warnings

    data = load_dataset(name)
    X = data.X.astype(np.float32).astype(np.float64)
    tree = TreeClassifier().fit(X, data.y)
    forest = ForestClassifier(n_estimators=5, random_state=0).fit(X, data.y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingValueExportWarning)
        twin = to_sklearn(tree)
        shap_model = to_shap(forest)
    np.testing.assert_array_equal(twin.predict_proba(X), tree.predict_proba(X))
    total = sum(
        _shap_tree_output(t, X) for t in shap_model["trees"]
    )  # the trees' leaf values, summed: the forest's probabilities
    np.testing.assert_allclose(total, forest.predict_proba(X), atol=1e-12)
    # the ONNX part needs the export extra (tox's core env installs only the test extra)
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingValueExportWarning)
        onnx_model = to_onnx(tree)
    session = ort.InferenceSession(onnx_model.SerializeToString())
    _, proba = session.run(None, {"X": X.astype(np.float32)})
    np.testing.assert_allclose(proba, tree.predict_proba(X), atol=1e-6)


def _shap_tree_output(tree, X):
    node = np.zeros(X.shape[0], dtype=np.int64)
    for _ in range(10_000):
        internal = tree["children_left"][node] >= 0
        if not internal.any():
            break
        f = tree["features"][node[internal]]
        go_left = X[np.flatnonzero(internal), f] <= tree["thresholds"][node[internal]]
        node[internal] = np.where(
            go_left, tree["children_left"][node[internal]], tree["children_right"][node[internal]]
        )
    return tree["values"][node]


def test_refusals_give_advice_that_fits_the_composition():
    """Issue 37: surrogate routing is hard (a sample follows one surrogate), not "soft";
    a confidence that needs numeric features is not told to use the splitter in use."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    surrogate = TreeClassifier(propagator="surrogate", evaluator="surrogate", max_depth=2)
    holed = X.copy()
    holed[::9, 0] = np.nan  # surrogate trees export; missing="error" refuses their NaN rule
    with pytest.raises(NotExportableError) as refused:
        to_sklearn(surrogate.fit(holed, y), missing="error")
    assert "soft" not in str(refused.value) and "surrogate splits" in str(refused.value)
    plugin = pytest.importorskip("treekit_boundary_distance")
    from treekit_core import registered

    nominal = np.column_stack([X[:, :2], np.arange(200) % 3])
    with registered(plugin, name="treekit-boundary-distance"):
        with pytest.raises(ValueError) as refused:
            TreeClassifier(confidence="boundary_distance", categorical_features=[2]).fit(nominal, y)
    message = str(refused.value)
    assert "nominal" in message and "'exhaustive' splitter" not in message
    assert "encode it" in message


def test_dtreeviz_pictures_need_no_missing_font_and_say_when_dot_is_missing(caplog, monkeypatch):
    """Issue 37: drawing flooded the log with "findfont: Font family 'Arial' not found"
    (339 lines for a depth-2 tree), and without graphviz's dot it ended in a traceback;
    now the font is one matplotlib ships and a missing dot is one clear line."""
    pytest.importorskip("dtreeviz")
    import logging
    import shutil

    from treekit_core.export import dtreeviz_model

    data = load_dataset("haberman")
    model = TreeClassifier(max_depth=2).fit(data.X, data.y)
    with caplog.at_level(logging.WARNING, logger="matplotlib.font_manager"):
        rendered = dtreeviz_model(model, data.X, data.y).view()
        if shutil.which("dot"):
            assert rendered.svg().lstrip().startswith("<")
    assert not [r for r in caplog.records if "findfont" in r.getMessage()]
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="graphviz's 'dot' program, which is not installed"):
        rendered.svg()
    assert "digraph" in rendered.dot  # the source needs no program


def test_rparts_compositions_export_exactly_on_complete_rows():
    """Issue 57: trees with rpart's surrogate splits export (they were refused): exact on
    rows without missing values (rpart's x < cut included: rows on the cuts), the missing
    values' warning where the model met them at fit, none where it never did."""
    import warnings

    data = load_dataset("pima")
    X = data.X.astype(np.float32).astype(np.float64)
    rpart = {"propagator": "surrogate", "evaluator": "surrogate", "min_samples_leaf": 7}
    model = TreeClassifier(**rpart).fit(X, data.y)
    assert not model.missing_at_fit_
    # rows exactly on a cut (float32: the cuts rounded as the exports compare)
    tree = model.tree_
    cuts = np.nextafter(tree.threshold[~tree.is_leaf], np.inf).astype(np.float32)
    on_cut = np.repeat(X[:1], cuts.size, axis=0)
    on_cut[np.arange(cuts.size), tree.feature[~tree.is_leaf]] = cuts
    probes = np.vstack([X, on_cut])
    with warnings.catch_warnings():
        warnings.simplefilter("error", MissingValueExportWarning)
        twin = to_sklearn(model)
        explained = to_shap(model)
    np.testing.assert_array_equal(twin.predict_proba(probes), model.predict_proba(probes))
    assert len(explained["trees"]) == 1
    ort = pytest.importorskip("onnxruntime")
    with warnings.catch_warnings():
        warnings.simplefilter("error", MissingValueExportWarning)
        session = ort.InferenceSession(to_onnx(model).SerializeToString())
    np.testing.assert_allclose(
        session.run(None, {"X": probes.astype(np.float32)})[1],
        model.predict_proba(probes),
        atol=1e-6,
    )
    holed = X.copy()
    holed[::7, 1] = np.nan
    met = TreeClassifier(**rpart).fit(holed, data.y)
    assert met.missing_at_fit_
    with pytest.warns(MissingValueExportWarning, match="surrogate splits"):
        twin = to_sklearn(met)
    complete = ~np.isnan(holed).any(axis=1)
    np.testing.assert_array_equal(
        twin.predict_proba(holed[complete]), met.predict_proba(holed[complete])
    )
    with pytest.raises(NotExportableError, match="surrogate splits"):
        to_onnx(met, missing="error")
    loaded = TreeClassifier.from_json(model.to_json())
    assert not loaded.missing_at_fit_
