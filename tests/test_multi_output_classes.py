"""Several class labels at once (issue 64): a 2-D y of labels (n x k) fits one tree deciding
k outputs, as scikit-learn's ``DecisionTreeClassifier`` and ``RandomForestClassifier`` do:
the criterion is the mean of the outputs' Gini impurities (or entropies), a leaf holds each
output's class shares, ``predict`` returns n x k labels, ``predict_proba`` a list of one
array per output, ``classes_`` a list.

scikit-learn tries features in a random order and keeps the first of tied splits, so the
trees are compared wherever its five ``random_state``s agree."""

import json
import pickle

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier
from sklearn_parity import agreed_sklearn_tree as agreed_tree
from sklearn_parity import assert_same_nodes, float32_exact

from treekit_core import (
    CompositionError,
    ExtraTreesClassifier,
    ForestClassifier,
    TreeClassifier,
)
from treekit_core.builtins.pruners.cost_complexity import CostComplexity
from treekit_core.datasets import load_dataset
from treekit_core.estimators.model_file import ModelFileError


def bupa_outputs():
    """The bundled liver disorders: (selector, drinks in three bands: < 1, 1 to 4, > 4
    half-pints a day) from the five blood tests (drinks is the response the data set was
    collected for)."""
    data = load_dataset("bupa")
    names = list(data.feature_names)
    drinks = data.X[:, names.index("drinks")]
    X = np.delete(data.X, names.index("drinks"), axis=1)
    return float32_exact(X), np.column_stack([data.y, np.digitize(drinks, [1, 5])])


def pima_outputs():
    """The bundled Pima diabetes: (test result, pregnancies none / 1-3 / 4 or more) from
    the other seven measurements; labels of two dtypes (text and numbers), as object."""
    data = load_dataset("pima")
    names = list(data.feature_names)
    preg = data.X[:, names.index("preg")]
    X = np.delete(data.X, names.index("preg"), axis=1)
    Y = np.empty((X.shape[0], 2), dtype=object)
    Y[:, 0] = data.y
    Y[:, 1] = np.digitize(preg, [1, 4])
    return float32_exact(X), Y


def synthetic_outputs(seed, n=300):
    """Three outputs of 2, 4 and 3 classes (text labels in the last) from five features."""
    rng = np.random.default_rng(seed)
    X = float32_exact(rng.normal(size=(n, 5)))
    Y = np.column_stack(
        [
            (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int),
            np.digitize(X[:, 1] + X[:, 2], [-1, 0, 1]),
            np.array(["low", "mid", "high"])[np.digitize(X[:, 3] + 0.5 * X[:, 0], [-0.5, 0.5])],
        ]
    ).astype(object)
    Y[:, :2] = Y[:, :2].astype(int)
    return X, Y


def agreed_sklearn_tree(X, Y, **params):
    """scikit-learn's tree where its five seeds grow the same one, else None."""
    return agreed_tree(DecisionTreeClassifier, X, Y, **params)


CASES = [
    ("bupa", {"min_samples_leaf": 10}),
    ("bupa", {"criterion": "entropy", "max_depth": 4}),
    ("pima", {"max_leaf_nodes": 15}),
    ("pima", {"min_samples_leaf": 20}),
    ("synthetic0", {"criterion": "entropy", "min_samples_leaf": 10}),
    ("synthetic2", {"max_depth": 4}),
    ("synthetic3", {"min_samples_leaf": 10}),
]


def case_data(name):
    """The case's (X, Y), Y's labels as text where it mixes text and numbers (scikit-learn
    sorts each output's labels together, and cannot order text against numbers)."""
    X, Y = {"bupa": bupa_outputs, "pima": pima_outputs}.get(
        name, lambda: synthetic_outputs(int(name[-1]))
    )()
    return X, Y.astype(str) if Y.dtype == object else Y


@pytest.mark.parametrize("name, params", CASES)
def test_the_tree_scikit_learn_grows_on_several_label_columns(name, params):
    """Same nodes, features, thresholds, sample counts and impurities (the mean of the
    outputs' impurities); each output's class shares; predict and predict_proba equal;
    importances and score (subset accuracy) equal."""
    X, Y = case_data(name)
    theirs = agreed_sklearn_tree(X, Y, **params)
    assert theirs is not None, "scikit-learn's seeds disagree: choose data without ties"
    ours = TreeClassifier(**params).fit(X, Y)
    tree, t = ours.tree_, theirs.tree_
    assert_same_nodes(tree, t, impurity_atol=1e-12)
    assert ours.n_outputs_ == theirs.n_outputs_ == Y.shape[1]
    assert ours.n_classes_ == list(theirs.n_classes_)
    for mine, their in zip(ours.classes_, theirs.classes_, strict=True):
        assert mine.tolist() == their.tolist()
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    for mine, their in zip(ours.predict_proba(X), theirs.predict_proba(X), strict=True):
        np.testing.assert_allclose(mine, their, rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        ours.feature_importances_, theirs.feature_importances_, rtol=1e-9, atol=1e-12
    )
    exact = (theirs.predict(X) == Y).all(axis=1).mean()
    assert ours.score(X, Y) == pytest.approx(exact, abs=1e-15)


def test_the_pruning_path_is_scikit_learns():
    """cost_complexity_pruning_path on two outputs: scikit-learn's alphas and impurities
    (the weighted mean Gini of the leaves)."""
    X, Y = bupa_outputs()
    theirs = DecisionTreeClassifier(random_state=0, min_samples_leaf=5)
    theirs = theirs.cost_complexity_pruning_path(X, Y)
    ours = TreeClassifier(min_samples_leaf=5).cost_complexity_pruning_path(X, Y)
    np.testing.assert_allclose(ours.ccp_alphas, theirs.ccp_alphas, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours.impurities, theirs.impurities, rtol=1e-9, atol=1e-12)


def test_class_weights_of_several_outputs_are_scikit_learns():
    """class_weight="balanced" and a list of dicts: each output's weights multiplied, as
    scikit-learn's compute_sample_weight; the same tree as scikit-learn's."""
    X, Y = bupa_outputs()
    for class_weight in ("balanced", [{1: 1.0, 2: 3.0}, {0: 2.0, 1: 1.0, 2: 0.5}]):
        theirs = agreed_sklearn_tree(X, Y, class_weight=class_weight, max_depth=4)
        assert theirs is not None
        ours = TreeClassifier(class_weight=class_weight, max_depth=4).fit(X, Y)
        np.testing.assert_allclose(ours.tree_.weight, theirs.tree_.weighted_n_node_samples)
        np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    with pytest.raises(ValueError, match="class_weight for y of 2 columns"):
        TreeClassifier(class_weight={0: 2.0}).fit(X, Y)


def test_a_forest_of_several_outputs_is_scikit_learns_without_bootstrap():
    """Without bootstrap and with every feature, every tree is the exhaustive tree: the
    same forest as scikit-learn's (predict_proba per output the trees' mean)."""
    X, Y = case_data("synthetic1")
    params = {"n_estimators": 4, "bootstrap": False, "max_features": None, "max_depth": 4}
    ours = ForestClassifier(random_state=0, **params).fit(X, Y)
    theirs = RandomForestClassifier(random_state=0, **params).fit(X, Y)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    for mine, their in zip(ours.predict_proba(X), theirs.predict_proba(X), strict=True):
        np.testing.assert_allclose(mine, their, atol=1e-12)


def test_out_of_bag_figures_of_several_outputs():
    """oob_decision_function_ is a list per output (each row's out-of-bag trees' mean
    shares); oob_score_ the mean over outputs of their accuracy, as scikit-learn's."""
    X, Y = synthetic_outputs(2, n=200)
    forest = ForestClassifier(n_estimators=30, oob_score=True, random_state=0).fit(X, Y)
    assert [p.shape for p in forest.oob_decision_function_] == [(200, 2), (200, 4), (200, 3)]
    known = ~np.isnan(forest.oob_decision_function_[0][:, 0])
    predicted = np.column_stack(
        [
            np.asarray(classes)[np.argmax(p[known], axis=1)]
            for classes, p in zip(forest.classes_, forest.oob_decision_function_, strict=True)
        ]
    )
    assert forest.oob_score_ == pytest.approx((predicted == Y[known]).mean(), abs=1e-15)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n_classes=st.integers(2, 4))
@example(seed=5930, n_classes=4)  # a tie the first version of this test called a bug
def test_copies_of_one_label_column_grow_its_tree(seed, n_classes):
    """Two identical label columns have the mean impurity of one: the tree of y twice is
    the tree of y (features, thresholds), each output predicting y's labels; except
    where two cuts' drops tie exactly in exact arithmetic (rounded one way for one
    output and another for the mean of two: seed 5930, three cuts of a 20-row node with
    drop 1/30), where the first node the trees differ at must be such a tie."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 3)).round(1)
    y = rng.integers(0, n_classes, size=60)
    one = TreeClassifier(min_samples_leaf=3).fit(X, y)
    twice = TreeClassifier(min_samples_leaf=3).fit(X, np.column_stack([y, y]))
    differ = np.flatnonzero(
        (twice.tree_.feature[: one.tree_.n_nodes] != one.tree_.feature[: twice.tree_.n_nodes])
        | (twice.tree_.threshold[: one.tree_.n_nodes] != one.tree_.threshold[: twice.tree_.n_nodes])
    )
    if differ.size:  # the same tree up to this node (numbered depth first): a tie there
        node = int(differ[0])
        rows = np.array([r for r in range(60) if node in _path(one.tree_, X[r])])
        drops = [
            _gini_drop(X, y, rows, tree.feature[node], tree.threshold[node])
            for tree in (one.tree_, twice.tree_)
        ]
        assert drops[0] == pytest.approx(drops[1], abs=1e-12)
        return
    np.testing.assert_array_equal(twice.tree_.feature, one.tree_.feature)
    np.testing.assert_array_equal(twice.tree_.threshold, one.tree_.threshold)
    np.testing.assert_allclose(twice.tree_.impurity, one.tree_.impurity, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(twice.predict(X), np.column_stack([one.predict(X)] * 2))


def _path(tree, x) -> list:
    """The nodes a row passes, root to leaf (x <= threshold goes left)."""
    node, path = 0, [0]
    while tree.children_left[node] >= 0:
        go_left = x[tree.feature[node]] <= tree.threshold[node]
        node = tree.children_left[node] if go_left else tree.children_right[node]
        path.append(node)
    return path


def _gini_drop(X, y, rows, feature, threshold) -> float:
    """Gini's drop of a cut of ``rows``, by hand."""

    def gini(labels):
        shares = np.bincount(labels) / labels.size
        return 1.0 - (shares**2).sum()

    left = X[rows, feature] <= threshold
    parts = (y[rows][left], y[rows][~left])
    return gini(y[rows]) - sum(part.size * gini(part) for part in parts) / rows.size


def test_one_output_is_todays_tree_exactly():
    """k = 1 is today's arithmetic: the impurity of one output's class counts is the plain
    formula bit for bit, and a column vector y is a 1-D y (scikit-learn's warning)."""
    X, Y = synthetic_outputs(0)
    y = Y[:, 1].astype(int)
    plain = TreeClassifier().fit(X, y)
    with pytest.warns(UserWarning, match="column-vector"):
        column = TreeClassifier().fit(X, y[:, None])
    np.testing.assert_array_equal(column.tree_.impurity, plain.tree_.impurity)
    assert column.n_outputs_ == 1 and column.predict(X).shape == (X.shape[0],)
    sums = np.array([3.0, 5.0, 0.0, 2.0])
    gini = plain.composition_.criterion.node_impurity(sums, sums.sum())
    assert gini == 1.0 - sum((s / 10.0) ** 2 for s in sums)


def test_pruned_trees_cross_validate_on_the_summed_risk():
    """Cost-complexity pruning of a tree of two outputs: its node risks are the
    misclassified weight summed over the outputs (by hand at every node), and the
    cross-validated choice gives a subtree of the grown tree."""
    X, Y = bupa_outputs()
    model = TreeClassifier(pruner="cost_complexity", random_state=0).fit(X, Y)
    grown = TreeClassifier().fit(X, Y)
    assert 1 <= model.get_n_leaves() < grown.get_n_leaves()
    target = model.composition_.target
    risks = target.node_risk(grown.tree_.statistics, grown.tree_.weight, None)
    by_hand = [
        sum(
            grown.tree_.weight[node] - grown.tree_.statistics[node, block].max()
            for block in (slice(0, 2), slice(2, 5))
        )
        for node in range(grown.tree_.n_nodes)
    ]
    np.testing.assert_allclose(risks, by_hand)
    sequence = CostComplexity().pruning_sequence(grown.tree_, None, target)
    assert sequence.risk[0] == pytest.approx(risks[grown.tree_.is_leaf].sum() / risks[0])


def test_model_files_pickles_and_json_keep_several_outputs(tmp_path):
    """A tree and a forest of several outputs come back from JSON and pickle predicting
    the same labels and shares; a file whose class counts do not sum to a node's weight
    in every output, or whose classes lists do not match the trees, is refused by field."""
    X, Y = synthetic_outputs(0)
    for model in (
        TreeClassifier(max_depth=4).fit(X, Y),
        ForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, Y),
    ):
        for back in (type(model).from_json(model.to_json()), pickle.loads(pickle.dumps(model))):
            np.testing.assert_array_equal(back.predict(X), model.predict(X))
            for mine, theirs in zip(back.predict_proba(X), model.predict_proba(X), strict=True):
                np.testing.assert_array_equal(mine, theirs)
            assert [c.tolist() for c in back.classes_] == [c.tolist() for c in model.classes_]
    payload = json.loads(TreeClassifier(max_depth=2).fit(X, Y).to_json())
    assert payload["classes"] == [[0, 1], [0, 1, 2, 3], ["high", "low", "mid"]]
    dtypes = payload["classes_dtype"]
    short = {**payload, "classes": payload["classes"][:2], "classes_dtype": dtypes[:2]}
    with pytest.raises(ModelFileError, match="statistics"):
        TreeClassifier.from_json(json.dumps(short))
    uneven = {**payload, "classes_dtype": payload["classes_dtype"][:2]}
    with pytest.raises(ModelFileError, match="classes_dtype"):
        TreeClassifier.from_json(json.dumps(uneven))
    path = tmp_path / "tree.json"
    path.write_text(TreeClassifier(max_depth=2).fit(X, Y).to_json())
    text = path.read_text()
    tree = json.loads(text)
    tree_fields = tree["tree"] if "tree" in tree else tree["trees"][0]
    statistics = tree_fields["statistics"]
    statistics[0][0] += 1.0  # output 0's counts at the root no longer sum to its weight
    with pytest.raises(ModelFileError, match="output 0"):
        TreeClassifier.from_json(json.dumps(tree))


def test_extremely_randomised_honest_and_missing_value_trees_take_several_outputs():
    """ExtraTreesClassifier, honest trees, C4.5's missing-value shares and nominal
    features grow trees of several outputs whose leaves hold each output's shares."""
    X, Y = synthetic_outputs(3)
    X = X.copy()
    X[np.random.default_rng(0).random(X.shape) < 0.1] = np.nan
    X[:, 4] = np.random.default_rng(1).integers(0, 4, X.shape[0])
    for model in (
        ExtraTreesClassifier(n_estimators=5, random_state=0),
        TreeClassifier(honest=True, random_state=0),
        TreeClassifier(categorical_features=[4], max_depth=4),
    ):
        model.fit(X, Y)
        shares = model.predict_proba(X)
        for p in shares:
            np.testing.assert_allclose(p.sum(axis=1), 1.0)
        assert model.predict(X).shape == Y.shape


def test_pictures_texts_and_pruning_of_several_outputs(tmp_path):
    """plot_tree and export_text word a leaf by each output's class; prune(alpha) gives a
    subtree predicting labels of every output; xpred (one prediction per row and cp)
    refuses, naming the outputs."""
    import matplotlib

    matplotlib.use("Agg")
    from treekit_core.tools.plots import plot_tree

    X, Y = synthetic_outputs(0)
    model = TreeClassifier(pruner="cost_complexity", random_state=0, max_depth=4).fit(X, Y)
    leaf = int(np.flatnonzero(model.tree_.is_leaf)[0])
    labels = model.predict(X[model.apply(X) == leaf][:1])[0]
    words = "classes: [" + ", ".join(str(v) for v in labels) + "]"
    assert words in model.export_text()
    axes = plot_tree(model)
    assert any(words in text.get_text() for text in axes.texts)
    pruned = model.prune(alpha=0.05)
    assert pruned.get_n_leaves() <= model.get_n_leaves() and pruned.predict(X).shape == Y.shape
    with pytest.raises(ValueError, match="xpred gives one prediction per row and cp"):
        model.xpred(X, Y)


def test_exports_of_several_outputs():
    """to_sklearn: a DecisionTreeClassifier of k outputs predicting the same labels and
    shares; to_shap: SHAP values for every output's classes (their columns side by side)
    that add up to predict_proba; to_onnx refuses (its classifier labels one output)."""
    from treekit_core.export import NotExportableError, to_onnx, to_sklearn

    X, Y = synthetic_outputs(0)
    tree = TreeClassifier(max_depth=5).fit(X, Y)
    exported = to_sklearn(tree)
    assert exported.n_outputs_ == 3
    np.testing.assert_array_equal(exported.predict(X), tree.predict(X))
    for mine, theirs in zip(tree.predict_proba(X), exported.predict_proba(X), strict=True):
        np.testing.assert_allclose(mine, theirs, atol=1e-12)
    shap = pytest.importorskip("shap")
    from treekit_core.export import to_shap

    explainer = shap.TreeExplainer(to_shap(tree))
    explained = explainer.shap_values(X[:20])  # rows x features x the outputs' classes
    shares = np.hstack(tree.predict_proba(X[:20]))
    np.testing.assert_allclose(explained.sum(axis=1) + explainer.expected_value, shares, atol=1e-9)
    pytest.importorskip("onnx")
    with pytest.raises(NotExportableError, match="3 outputs"):
        to_onnx(tree)


@pytest.mark.parametrize(
    "params, named",
    [
        ({"reject": 0.6}, "reject"),
        ({"calibration": "isotonic"}, "calibration"),
        ({"abstain_value": "?"}, "abstain_value"),
        ({"labeler": "cost_matrix", "labeler_params": {"costs": [[0, 1], [1, 0]]}}, "labeler"),
        ({"conformal_fraction": 0.2}, "conformal_fraction"),
        ({"monotonic_cst": [1, 0, 0, 0, 0]}, "monotonic_cst"),
    ],
)
def test_what_decides_one_label_per_row_is_refused_by_name(params, named):
    X, Y = synthetic_outputs(0)
    with pytest.raises(ValueError, match=f"{named}.*3 columns"):
        TreeClassifier(**params).fit(X, Y)


def test_other_refusals_name_the_component_or_method():
    X, Y = synthetic_outputs(0)
    with pytest.raises(CompositionError, match="criterion 'misclassification'.*class_label_sets"):
        TreeClassifier(criterion="misclassification").fit(X, Y)
    with pytest.raises(CompositionError, match="splitter 'c45'.*class_label_sets"):
        TreeClassifier(splitter="c45").fit(X, Y)
    for params, named in (
        ({"forest_confidence": "vote_margin"}, "forest_confidence"),
        ({"balanced_bootstrap": True}, "balanced_bootstrap"),
    ):
        with pytest.raises(ValueError, match=named):
            ForestClassifier(n_estimators=2, **params).fit(X, Y)
    model = TreeClassifier(max_depth=2).fit(X, Y)
    for method in ("decide", "risk_coverage"):
        with pytest.raises(ValueError, match=f"{method} scores one decision per row"):
            getattr(model, method)(X) if method == "decide" else model.risk_coverage(X, Y)
    with pytest.raises(ValueError, match="conformal_rows"):
        TreeClassifier().fit(X, Y, conformal_rows=(X[:10], Y[:10]))
    with pytest.raises(ValueError, match=r"y has shape \(300, 2\)"):
        model.score(X, Y[:, :2])


def test_the_command_line_fits_predicts_and_evaluates_several_label_columns(tmp_path, capsys):
    """fit --target y1 y2 on label columns: a classifier of two outputs (the task says
    so); predict writes a label column per output named after it; evaluate prints each
    output's accuracy and the share of rows with every output right."""
    from treekit_core.tools.cli import main

    X, Y = synthetic_outputs(0)
    data = tmp_path / "rows.csv"
    lines = ["a,b,c,d,e,first,third"]
    for x, y in zip(X, Y, strict=True):
        lines.append(",".join([*(f"{v:.6g}" for v in x), str(y[0]), y[2]]))
    data.write_text("\n".join(lines) + "\n")
    model = tmp_path / "model.json"
    assert main(["fit", str(data), "--target", "first", "third", "--out", str(model)]) == 0
    assert "classifier of several outputs" in capsys.readouterr().out
    out = tmp_path / "predicted.csv"
    assert main(["predict", str(model), str(data), "--out", str(out)]) == 0
    rows = out.read_text().splitlines()
    assert rows[0] == "prediction_first,prediction_third"
    fitted = TreeClassifier.from_json(model.read_text())
    expected = fitted.predict(np.loadtxt(data, delimiter=",", skiprows=1, usecols=range(5)))
    assert rows[1:] == [f"{a},{b}" for a, b in expected.tolist()]
    capsys.readouterr()
    assert main(["evaluate", str(model), str(data), "--target", "first", "third"]) == 0
    printed = capsys.readouterr().out
    right = expected == Y[:, [0, 2]]
    assert f"{right[:, 0].mean():.6f}" in printed
    assert f"{right.all(axis=1).mean():.6f}" in printed
