"""The tree API scikit-learn and rpart users reach for: importances, apply and
decision_path, log probabilities, the cost-complexity path, the cp table and pruning a
fitted tree without regrowing."""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier
from sklearn_parity import assert_same_tree, float32_exact

from treekit_core import ForestClassifier, TreeClassifier
from treekit_core.datasets import load_dataset
from treekit_core.tools.cli import main


@pytest.fixture(scope="module")
def wisconsin():
    return load_dataset("wisconsin", dropna=True)


@pytest.fixture(scope="module")
def same_trees(wisconsin):
    """A treekit tree and a scikit-learn tree that are node for node the same."""
    X = float32_exact(wisconsin.X)
    ours = TreeClassifier(min_samples_leaf=5).fit(X, wisconsin.y)
    theirs = DecisionTreeClassifier(min_samples_leaf=5, random_state=0).fit(X, wisconsin.y)
    assert_same_tree(ours.tree_, theirs.tree_)
    return X, ours, theirs


def test_feature_importances_equal_sklearns_on_the_same_tree(same_trees):
    X, ours, theirs = same_trees
    np.testing.assert_allclose(ours.feature_importances_, theirs.feature_importances_, atol=1e-12)
    assert ours.feature_importances_.sum() == pytest.approx(1.0)


def test_decision_path_and_apply_equal_sklearns_on_the_same_tree(same_trees):
    X, ours, theirs = same_trees
    np.testing.assert_array_equal(ours.apply(X), theirs.apply(X))
    np.testing.assert_array_equal(
        ours.decision_path(X).toarray(), theirs.decision_path(X).toarray()
    )


def test_predict_log_proba_is_the_log_of_predict_proba(same_trees):
    X, ours, _ = same_trees
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(ours.predict_log_proba(X), np.log(ours.predict_proba(X)))


def test_forest_importances_are_the_mean_of_normalised_tree_importances(wisconsin):
    forest = ForestClassifier(n_estimators=7, random_state=0).fit(wisconsin.X, wisconsin.y)
    per_tree = []
    for tree in forest.estimators_:  # by hand, node by node
        total = np.zeros(tree.n_features)
        for node in np.flatnonzero(~tree.is_leaf):
            left, right = tree.children(node)
            total[tree.feature[node]] += (
                tree.weight[node] * tree.impurity[node]
                - tree.weight[left] * tree.impurity[left]
                - tree.weight[right] * tree.impurity[right]
            )
        per_tree.append(total / total.sum())
    expected = np.mean(per_tree, axis=0)
    np.testing.assert_allclose(forest.feature_importances_, expected / expected.sum())
    leaves = forest.apply(wisconsin.X[:5])
    indicator, ptr = forest.decision_path(wisconsin.X[:5])
    assert leaves.shape == (5, 7) and ptr[-1] == indicator.shape[1]
    for i in range(len(forest.estimators_)):
        block = indicator[:, ptr[i] : ptr[i + 1]].toarray()
        assert (block[np.arange(5), leaves[:, i]] == 1).all() and (block[:, 0] == 1).all()
    # scikit-learn's forest returns the same kind of objects
    theirs = RandomForestClassifier(n_estimators=3, random_state=0).fit(wisconsin.X, wisconsin.y)
    assert type(theirs.decision_path(wisconsin.X[:5])[1]) is type(ptr)


def test_cost_complexity_pruning_path_equals_sklearns(wisconsin):
    X = float32_exact(wisconsin.X)
    ours = TreeClassifier(min_samples_leaf=5).cost_complexity_pruning_path(X, wisconsin.y)
    theirs = DecisionTreeClassifier(
        min_samples_leaf=5, random_state=0
    ).cost_complexity_pruning_path(X, wisconsin.y)
    np.testing.assert_allclose(ours.ccp_alphas, theirs.ccp_alphas, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(ours.impurities, theirs["impurities"], rtol=1e-9, atol=1e-15)


@pytest.fixture(scope="module")
def cv_model(wisconsin):
    return TreeClassifier(pruner="cost_complexity", random_state=0).fit(wisconsin.X, wisconsin.y)


def test_pruning_path_is_one_dataframe(cv_model):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(cv_model.pruning_path_)
    assert list(frame.columns[:4]) == ["alphas", "cp", "n_leaves", "n_splits"]
    assert frame["selected"].sum() == 1
    assert frame.loc[frame["selected"], "n_leaves"].item() == cv_model.get_n_leaves()
    # binary trees: one split fewer than leaves; rel_error is the risk over the root's
    np.testing.assert_array_equal(frame["n_splits"], frame["n_leaves"] - 1)
    np.testing.assert_allclose(frame["rel_error"], frame["risk"] / frame["risk"].iloc[-1])
    np.testing.assert_allclose(frame["xerror"], frame["cv_error"] / frame["risk"].iloc[-1])


def test_cp_table_prints_like_printcp(cv_model, wisconsin, tmp_path, capsys):
    text = cv_model.cp_table()
    lines = text.splitlines()
    minority = int(min(np.unique(wisconsin.y, return_counts=True)[1]))
    n = wisconsin.X.shape[0]
    assert lines[0] == f"Root node error: {minority}/{n} = {minority / n:.5f}"
    assert lines[2] == f"n= {n}"
    assert lines[4].split() == ["CP", "nsplit", "rel", "error", "xerror", "xstd"]
    rows = [line.split() for line in lines[5:]]
    path = cv_model.pruning_path_
    assert len(rows) == len(path["cp"])
    assert rows[0][2] == "0" and rows[0][3] == "1.00000"  # the root first, as rpart
    marked = [r for r in rows if r[-1] == "*"]
    assert len(marked) == 1 and int(marked[0][2]) == cv_model.get_n_leaves() - 1
    model_file = tmp_path / "model.json"
    cv_model.to_json(model_file)
    assert main(["path", str(model_file)]) == 0
    assert capsys.readouterr().out == text


@pytest.mark.parametrize("which", ["below", "above"])
def test_prune_equals_refitting_with_that_alpha(cv_model, wisconsin, which):
    path = cv_model.pruning_path_
    chosen = int(np.flatnonzero(path["selected"])[0])
    level = chosen - 2 if which == "below" else chosen + 2
    alpha = float(np.sqrt(path["alphas"][level] * path["alphas"][level + 1]))
    pruned = cv_model.prune(alpha=alpha)
    refit = TreeClassifier(
        pruner="cost_complexity", pruner_params={"alpha": alpha}, random_state=0
    ).fit(wisconsin.X, wisconsin.y)
    assert pruned.get_n_leaves() == refit.get_n_leaves() == path["n_leaves"][level]
    np.testing.assert_array_equal(pruned.tree_.threshold, refit.tree_.threshold)
    np.testing.assert_array_equal(
        pruned.predict_proba(wisconsin.X), refit.predict_proba(wisconsin.X)
    )
    assert pruned.get_params() == refit.get_params() | {
        "pruner_params": {"risk": "prediction", "alpha": alpha}
    }
    # rpart's cp is alpha over the root's risk; after a JSON round trip the grown tree is kept
    loaded = TreeClassifier.from_json(cv_model.to_json())
    by_cp = loaded.prune(cp=alpha / path["risk"][-1])
    np.testing.assert_array_equal(by_cp.tree_.threshold, pruned.tree_.threshold)
    assert cv_model.get_n_leaves() == path["n_leaves"][chosen]  # the original is unchanged


def test_prune_refuses_what_it_cannot_do(cv_model):
    with pytest.raises(ValueError, match="exactly one of alpha= or cp="):
        cv_model.prune()
    with pytest.raises(ValueError, match="cp must be"):
        cv_model.prune(cp=-1.0)
    with pytest.raises(ValueError, match="alpha must be"):
        cv_model.prune(alpha=float("nan"))


def test_pandas_text_columns_are_nominal_by_default():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    colour = rng.choice(["red", "green", "blue"], size=200)
    size = rng.normal(size=200)
    y = (colour == "green").astype(int)
    frame = pd.DataFrame({"colour": pd.Series(colour, dtype="str"), "size": size})
    as_object = frame.astype({"colour": object})
    declared = TreeClassifier(categorical_features=["colour"]).fit(frame, y)
    for X in (frame, as_object):
        model = TreeClassifier().fit(X, y)
        assert model.categories_ == {0: ["blue", "green", "red"]}
        assert model.score(X, y) == 1.0
        np.testing.assert_array_equal(model.tree_.threshold, declared.tree_.threshold)
    # a numpy object array with text in a column: that column too
    model = TreeClassifier().fit(as_object.to_numpy(), y)
    assert model.categories_ == {0: ["blue", "green", "red"]}


def test_importances_of_multiway_nodes_sum_every_branch():
    lenses = load_dataset("lenses")
    model = TreeClassifier(splitter="c45", categorical_features=lenses.categorical).fit(
        lenses.X, lenses.y
    )
    tree = model.tree_
    assert tree.n_children.max() > 2
    expected = np.zeros(tree.n_features)
    for node in np.flatnonzero(~tree.is_leaf):
        kids = tree.children(node)
        expected[tree.feature[node]] += tree.weight[node] * tree.impurity[node] - sum(
            tree.weight[k] * tree.impurity[k] for k in kids
        )
    np.testing.assert_allclose(model.feature_importances_, expected / expected.sum())


def test_a_corrupt_grown_tree_is_refused_naming_it(cv_model):
    import json

    from treekit_core.estimators.model_file import ModelFileError

    payload = json.loads(cv_model.to_json())
    assert "grown_tree" in payload
    payload["grown_tree"]["feature"][0] = 99
    with pytest.raises(ModelFileError, match="model file: grown_tree"):
        TreeClassifier.from_json(json.dumps(payload))
    payload = json.loads(cv_model.to_json())
    payload["grown_tree"]["statistics"] = payload["grown_tree"]["statistics"][:3]
    with pytest.raises(ModelFileError, match="model file: grown_tree"):
        TreeClassifier.from_json(json.dumps(payload))


def test_sparse_x_is_densified_or_refused_naming_its_size():
    from scipy import sparse

    data = load_dataset("haberman")
    dense = TreeClassifier().fit(data.X, data.y)
    for kind in (sparse.csr_matrix, sparse.csc_array):
        model = TreeClassifier().fit(kind(data.X), data.y)
        np.testing.assert_array_equal(model.tree_.threshold, dense.tree_.threshold)
        np.testing.assert_array_equal(model.predict(kind(data.X)), dense.predict(data.X))
    huge = sparse.csr_matrix((10**6, 10**6))  # 7451 GiB dense
    with pytest.raises(ValueError, match=r"shape \(1000000, 1000000\).*7450\.6 GiB"):
        TreeClassifier().fit(huge, np.arange(10**6) % 2)


def test_every_memory_order_of_X_reaches_the_same_leaves():
    """The threshold walk reads C- and Fortran-ordered X as they are, and copies any other
    layout: the leaves, probabilities and labels agree for all of them."""
    data = load_dataset("satimage")
    model = TreeClassifier(max_depth=8).fit(data.X, data.y)
    X = np.ascontiguousarray(data.X)
    layouts = {
        "fortran": np.asfortranarray(X),
        "every other row": np.asfortranarray(np.repeat(X, 2, axis=0))[::2],
        "reversed columns": np.ascontiguousarray(X[:, ::-1])[:, ::-1],
        "read-only": np.frombuffer(X.tobytes(), dtype=np.float64).reshape(X.shape),
    }
    expected_leaves = model.apply(X)
    assert np.unique(expected_leaves).size > 20
    for name, other in layouts.items():
        np.testing.assert_array_equal(model.apply(other), expected_leaves, err_msg=name)
        np.testing.assert_array_equal(model.predict_proba(other), model.predict_proba(X))
        np.testing.assert_array_equal(model.predict(other), model.predict(X))


def test_export_text_accepts_the_fitted_estimator():
    """Issue 37: treekit_core.export_text(model) raised AttributeError; it is the model's
    own text, with its feature names and classes."""
    import treekit_core
    from treekit_core.datasets import load_dataset

    data = load_dataset("haberman")
    model = treekit_core.TreeClassifier(max_depth=2).fit(data.X, data.y)
    assert treekit_core.export_text(model) == model.export_text()
    assert treekit_core.export_text(model, style="j48") == model.export_text(style="j48")
    assert treekit_core.export_text(model.tree_) == treekit_core.export_text(
        model.tree_, None, None
    )
    forest = treekit_core.ForestClassifier(n_estimators=2, random_state=0).fit(data.X, data.y)
    with pytest.raises(TypeError, match="a forest holds several"):
        treekit_core.export_text(forest)
    with pytest.raises(TypeError, match="a fitted TreeClassifier or a Tree, got str"):
        treekit_core.export_text("tree")


def test_printcp_names_the_variables_used_as_rpart_does(cv_model, capsys):
    """Issue 37: rpart's printcp starts with the variables the tree splits on (sorted,
    printed as an R character vector), then the cp table."""
    from treekit_core.estimators.pruning_paths import r_vector_text

    cv_model.printcp()
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "Variables actually used in tree construction:"
    tree = cv_model.tree_
    used = sorted({f"x[{j}]" for j in np.unique(tree.feature[~tree.is_leaf])})
    assert lines[1].split()[1:] == used and lines[1].startswith("[1] ")
    assert lines[2] == "" and out.endswith(cv_model.cp_table())
    assert r_vector_text(["Age", "Start"]) == "[1] Age   Start"  # rpart's kyphosis line
    many = r_vector_text([f"v{k:02d}" for k in range(30)], width=40)
    assert many.splitlines()[1].startswith("[10] v09")  # R labels every line's first index


def _rpart_xpred_fixture(name):
    import json
    from pathlib import Path

    path = Path(__file__).parent / "fixtures" / "rpart_xpred" / f"{name}.json"
    reference = json.loads(path.read_text())
    assert reference["rpart_version"] == "4.1.19"
    data = load_dataset(name)
    root_error = 1 - np.unique(data.y, return_counts=True)[1].max() / data.y.size
    model = TreeClassifier(
        propagator="surrogate",
        evaluator="surrogate",
        pruner="cost_complexity",
        pruner_params={"alpha": 0.01 * root_error},  # rpart's cp = 0.01
        min_samples_split=20,
        min_samples_leaf=7,
    ).fit(data.X, data.y)
    theirs = np.asarray(reference["levels"], dtype=object)[np.asarray(reference["xpred"]) - 1]
    return data, model, reference, theirs


def test_xpred_equals_rpart_on_the_same_folds():
    """Issue 37: rpart's xpred.rpart (fixture made by tests/fixtures/rpart_xpred/
    make_fixtures.R with the folds as a vector), on wdbc, where rpart's cp table is the
    exact weakest-link sequence treekit computes: every cross-validated prediction at
    every cp equal."""
    data, model, reference, theirs = _rpart_xpred_fixture("wdbc")
    ours = model.xpred(data.X, data.y, xval=np.asarray(reference["folds"]), cp=reference["cp"])
    assert ours.shape == theirs.shape == (569, 4)
    np.testing.assert_array_equal(ours, theirs)
    # rpart's default cp: geometric means of adjacent cp-table rows, the first at (1 + cp) / 2
    table = model.pruning_path_["cp"][::-1]
    default = model.xpred(data.X, data.y, xval=np.asarray(reference["folds"]))
    assert default.shape == (569, table.size)
    np.testing.assert_array_equal(default[:, :3], theirs[:, :3])  # the rows rpart's table has


def test_xpred_differs_from_rpart_only_where_rparts_cp_table_is_not_weakest_link():
    """On pima rpart's cp table leaves the exact weakest-link sequence below cp 0.0175
    (rpart estimates a node's cp from its children and grandchildren while it grows:
    0.0149 and 0.0131 where the sequence has 0.0155): the predictions agree at the cps
    above that, and differ on few rows below."""
    data, model, reference, theirs = _rpart_xpred_fixture("pima")
    ours = model.xpred(data.X, data.y, xval=np.asarray(reference["folds"]), cp=reference["cp"])
    np.testing.assert_array_equal(ours[:, :2], theirs[:, :2])
    assert (ours != theirs).mean() < 0.02


def test_xpred_with_a_number_of_folds_and_its_refusals(cv_model):
    data = load_dataset("wisconsin")
    X, y = data.X[:200], data.y[:200]
    model = TreeClassifier(pruner="cost_complexity", pruner_params={"alpha": 0.0}).fit(X, y)
    predictions = model.xpred(X, y, xval=5, cp=[0.0, 2.0])
    assert predictions.shape == (200, 2)
    folds = np.arange(200) % 4
    by_hand = model.xpred(X, y, xval=folds, cp=[0.0, 2.0])
    for k in range(4):
        train, test = folds != k, folds == k
        # cp above 1: every fold tree is its root, deciding the other folds' majority
        labels, counts = np.unique(y[train], return_counts=True)
        assert (by_hand[test, 1] == labels[counts.argmax()]).all()
        # cp 0: the fold tree grown out
        grown = TreeClassifier().fit(X[train], y[train])
        np.testing.assert_array_equal(by_hand[test, 0], grown.predict(X[test]))
    with pytest.raises(ValueError, match="xval must be >= 2 folds"):
        model.xpred(X, y, xval=1)
    with pytest.raises(ValueError, match="one fold id per row"):
        model.xpred(X, y, xval=np.zeros(3))
    with pytest.raises(ValueError, match="cp must be finite"):
        model.xpred(X, y, cp=[-1.0])
    plain = TreeClassifier().fit(X, y)
    with pytest.raises(AttributeError, match="records no"):
        plain.xpred(X, y)
