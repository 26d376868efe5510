import numpy as np
import pytest

from treekit_core import TreeClassifier
from treekit_core.datasets import load_dataset


def diagonal(n=400, seed=0, margin=0.3):
    """Points on both sides of the line x0 + x1 = 10, none closer than ``margin`` to it."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 10, size=(3 * n, 2))
    X = X[np.abs(X.sum(axis=1) - 10) > margin][:n]
    y = (X[:, 0] + X[:, 1] > 10).astype(int)
    return X, y


def test_one_oblique_split_separates_a_diagonal_where_axis_aligned_needs_a_staircase():
    X, y = diagonal()
    oblique = TreeClassifier(splitter="oblique").fit(X, y)
    axis = TreeClassifier().fit(X, y)
    assert oblique.get_n_leaves() == 2 and oblique.score(X, y) == 1.0
    assert axis.get_n_leaves() > 10
    coef = oblique.tree_.node_fields["coef"][0]
    assert coef[0] / coef[1] == pytest.approx(1.0, rel=0.1)  # the direction of x0 + x1
    X_new, y_new = diagonal(seed=1)
    assert oblique.score(X_new, y_new) > axis.score(X_new, y_new)


def test_text_json_and_pruning():
    X, y = diagonal()
    model = TreeClassifier(splitter="oblique", pruner="cost_complexity").fit(X, y)
    assert "*x[0] + " in model.export_text()
    loaded = TreeClassifier.from_json(model.to_json())
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_real_data_and_any_criterion():
    data = load_dataset("wdbc")
    for criterion in ("gini", "entropy"):
        model = TreeClassifier(splitter="oblique", criterion=criterion, max_depth=3).fit(
            data.X, data.y
        )
        assert model.score(data.X, data.y) > 0.95


def test_pure_oblique_mode():
    X, y = diagonal()
    model = TreeClassifier(
        splitter="oblique", splitter_params={"also_axis_aligned": False}, max_depth=2
    ).fit(X, y)
    assert model.score(X, y) == 1.0


PRUNERS = (
    ("cost_complexity", {"alpha": 0.005}),
    ("cost_complexity", {}),
    ("pessimistic", {}),
    ("mdl", {"alpha": 0.005}),
)


@pytest.mark.parametrize("pruner,params", PRUNERS)
def test_every_pruner_prunes_oblique_trees(pruner, params):
    """The oblique splitter takes no missing values (it says so), so only complete data."""
    X, y = diagonal(margin=0.0)
    y = np.where(np.random.default_rng(2).random(y.size) < 0.1, 1 - y, y)  # label noise
    grown = TreeClassifier(splitter="oblique").fit(X, y)
    model = TreeClassifier(splitter="oblique", pruner=pruner, pruner_params=params).fit(X, y)
    assert "oblique" in {q.name for q in grown.tree_.questions}
    tree = model.tree_
    tree.check_structure()
    assert 1 <= tree.n_leaves <= grown.tree_.n_leaves
    assert tree.weight[tree.is_leaf].sum() == pytest.approx(tree.weight[0])
    proba = model.predict_proba(X)
    assert np.isfinite(proba).all() and np.allclose(proba.sum(axis=1), 1.0)
    loaded = TreeClassifier.from_json(model.to_json())
    np.testing.assert_array_equal(loaded.predict_proba(X), proba)


def test_a_version_1_oblique_model_file_loads_and_predicts_identically():
    """Written by treekit 0.2.0 (the repository's tests/fixtures/models_v1/make_v1_models.py),
    when the core knew the oblique question as code 2."""
    import json
    from pathlib import Path

    fixtures = Path(__file__).parent / "fixtures"
    model = TreeClassifier.from_json(fixtures / "oblique.json")
    assert [q.name for q in model.tree_.questions] == ["threshold", "oblique"]
    expected = json.loads((fixtures / "oblique.expected.json").read_text())
    X = np.array(expected["X"], dtype=np.float64)
    np.testing.assert_array_equal(model.predict_proba(X), np.array(expected["proba"]))


def test_the_oblique_question_meets_the_question_contract():
    from treekit_core.testing import check_question
    from treekit_oblique import ObliqueQuestion

    check_question(ObliqueQuestion)


def test_importances_credit_an_oblique_node_by_its_coefficients():
    X, y = diagonal()
    model = TreeClassifier(splitter="oblique", splitter_params={"also_axis_aligned": False}).fit(
        X, y
    )
    tree = model.tree_
    expected = np.zeros(2)
    for node in np.flatnonzero(~tree.is_leaf):
        kids = tree.children(node)
        drop = (
            tree.weight[node] * tree.impurity[node]
            - (tree.weight[kids] * tree.impurity[kids]).sum()
        )
        coef = np.abs(tree.question_params(node))
        expected += drop * coef / coef.sum()
    np.testing.assert_allclose(model.feature_importances_, expected / expected.sum())
    assert 0.3 < model.feature_importances_[0] < 0.7  # the diagonal tests both features


def test_exports_refuse_oblique_questions():
    pytest.importorskip("sklearn")
    from treekit_core.export import NotExportableError, to_shap, to_sklearn

    X, y = diagonal()
    model = TreeClassifier(splitter="oblique", max_depth=2).fit(X, y)
    for export in (to_sklearn, to_shap):
        with pytest.raises(NotExportableError, match="asks a 'oblique' question"):
            export(model, missing="larger_share")
    pytest.importorskip("onnx")
    from treekit_core.export import to_onnx

    with pytest.raises(NotExportableError, match="asks a 'oblique' question"):
        to_onnx(model, missing="larger_share")


@pytest.mark.parametrize("direction", ["logistic", "perceptron", "linear_svm"])
def test_each_of_the_handouts_linear_classifiers_finds_the_diagonal(direction):
    pytest.importorskip("sklearn")
    X, y = diagonal()
    model = TreeClassifier(
        splitter="oblique",
        splitter_params={"direction": direction, "also_axis_aligned": False},
    ).fit(X, y)
    assert model.get_n_leaves() == 2 and model.score(X, y) == 1.0  # one question separates
    coef = model.tree_.node_fields["coef"][0]
    assert coef[0] / coef[1] == pytest.approx(1.0, rel=0.15)  # along x0 + x1
    X_new, y_new = diagonal(seed=1)
    assert model.score(X_new, y_new) > 0.98


def test_an_unknown_direction_is_refused():
    X, y = diagonal()
    with pytest.raises(ValueError, match="direction"):
        TreeClassifier(splitter="oblique", splitter_params={"direction": "svm"}).fit(X, y)
