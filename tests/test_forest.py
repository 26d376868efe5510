"""ForestClassifier: reproducible, n_jobs-independent, fresh feature subsets per node."""

from typing import ClassVar

import attrs
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import cross_val_score

from treekit_core import Confidence, ForestClassifier, TreeClassifier, hookimpl, registered
from treekit_core.builtins.splitters import Exhaustive
from treekit_core.datasets import load_dataset
from treekit_core.estimators.ensemble import bootstrap_counts, resolve_max_features
from treekit_core.estimators.inputs import class_weights


@pytest.fixture(scope="module")
def wdbc():
    return load_dataset("wdbc")


def thresholds(forest):
    return [tree.threshold.copy() for tree in forest.estimators_]


def test_seeded_runs_are_identical_and_independent_of_n_jobs(wdbc):
    a = ForestClassifier(n_estimators=8, random_state=3).fit(wdbc.X, wdbc.y)
    b = ForestClassifier(n_estimators=8, random_state=3).fit(wdbc.X, wdbc.y)
    c = ForestClassifier(n_estimators=8, random_state=3, n_jobs=2).fit(wdbc.X, wdbc.y)
    other = ForestClassifier(n_estimators=8, random_state=4).fit(wdbc.X, wdbc.y)
    for x, y, z in zip(thresholds(a), thresholds(b), thresholds(c), strict=True):
        np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(x, z)
    np.testing.assert_array_equal(a.predict_proba(wdbc.X), c.predict_proba(wdbc.X))
    assert any(
        x.shape != y.shape or not np.array_equal(x, y)
        for x, y in zip(thresholds(a), thresholds(other), strict=False)
    )


def test_feature_subset_is_drawn_afresh_at_every_node(wdbc):
    # With one candidate feature per node, a subset drawn once per tree would make every
    # node of a tree use the same feature.
    forest = ForestClassifier(n_estimators=5, max_features=1, random_state=0).fit(wdbc.X, wdbc.y)
    for tree in forest.estimators_:
        used = set(tree.feature[tree.feature >= 0])
        assert len(used) > 5


@attrs.define(slots=False)
class RecordingExhaustive(Exhaustive):
    """Node-by-node exhaustive search that records each node's candidate features."""

    name: ClassVar[str] = "recording"
    seen: list = attrs.field(factory=list, eq=False)

    def build_tree(self, composition, data, rng, rules):
        return None

    def find_split(self, state, node, rules):
        self.seen.append(tuple(node.features))
        return super().find_split(state, node, rules)


class Plugin:
    @hookimpl
    def treekit_splitters(self):
        return [RecordingExhaustive]


def test_node_by_node_path_draws_subsets_per_node(wdbc):
    splitter = RecordingExhaustive()
    with registered(Plugin(), name="recording"):
        ForestClassifier(
            n_estimators=1, splitter=splitter, max_features=3, random_state=0, max_depth=4
        ).fit(wdbc.X, wdbc.y)
    assert len(splitter.seen) > 5 and all(len(s) == 3 for s in splitter.seen)
    assert len(set(splitter.seen)) > len(splitter.seen) // 2


def test_forest_beats_a_single_tree(wdbc):
    forest = cross_val_score(
        ForestClassifier(n_estimators=30, random_state=0), wdbc.X, wdbc.y, cv=5
    ).mean()
    tree = cross_val_score(TreeClassifier(), wdbc.X, wdbc.y, cv=5).mean()
    assert forest > tree and forest > 0.93


def test_balanced_bootstrap_draws_classes_equally():
    labels = np.array([0] * 90 + [1] * 10)
    counts = bootstrap_counts(np.random.default_rng(0), labels, 2, balanced=True)
    assert counts[labels == 0].sum() == counts[labels == 1].sum() == 10
    plain = bootstrap_counts(np.random.default_rng(0), labels, 2, balanced=False)
    assert plain.sum() == 100


def test_class_weights_balanced_and_explicit():
    labels = np.array([0] * 90 + [1] * 10)
    np.testing.assert_allclose(
        class_weights("balanced", labels, 2, np.array(["a", "b"])), [100 / 180, 100 / 20]
    )
    np.testing.assert_allclose(
        class_weights({"b": 5.0}, labels, 2, np.array(["a", "b"])), [1.0, 5.0]
    )
    with pytest.raises(ValueError, match="not in"):
        class_weights({"c": 1.0}, labels, 2, np.array(["a", "b"]))


def test_weighted_forest_shifts_decisions_towards_the_minority():
    data = load_dataset("haberman")
    plain = ForestClassifier(n_estimators=20, random_state=0, min_samples_leaf=5).fit(
        data.X, data.y
    )
    weighted = ForestClassifier(
        n_estimators=20, random_state=0, min_samples_leaf=5, class_weight="balanced"
    ).fit(data.X, data.y)
    assert (weighted.predict(data.X) == "positive").sum() > (
        plain.predict(data.X) == "positive"
    ).sum()


@pytest.mark.parametrize(
    "value,expected", [("sqrt", 5), ("log2", 4), (None, 30), (7, 7), (0.5, 15)]
)
def test_max_features(value, expected):
    assert resolve_max_features(value, 30) == expected


def test_bad_forest_parameters(wdbc):
    with pytest.raises(ValueError, match="max_features"):
        ForestClassifier(max_features=0).fit(wdbc.X, wdbc.y)
    with pytest.raises(ValueError, match="n_estimators must be an int >= 1"):
        ForestClassifier(n_estimators=0).fit(wdbc.X, wdbc.y)


@attrs.define(slots=False)
class NeedsOneTree(Confidence):
    name: ClassVar[str] = "needs_one_tree"
    needs_single_tree: ClassVar[bool] = True

    def score(self, tree, X, proba, decision):
        return np.zeros(X.shape[0])


class ConfidencePlugin:
    @hookimpl
    def treekit_confidences(self):
        return [NeedsOneTree]


def test_forest_refuses_a_confidence_that_needs_one_tree(wdbc):
    with registered(ConfidencePlugin(), name="one-tree"):
        with pytest.raises(ValueError, match="confidence 'needs_one_tree' cannot score a forest"):
            ForestClassifier(n_estimators=2, confidence="needs_one_tree").fit(wdbc.X, wdbc.y)


def test_clone_and_decide(wdbc):
    forest = ForestClassifier(n_estimators=5, random_state=0)
    assert clone(forest).get_params() == forest.get_params()
    forest.fit(wdbc.X, wdbc.y)
    decision = forest.decide(wdbc.X)
    np.testing.assert_allclose(decision.proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(decision.labels, forest.predict(wdbc.X))


def test_a_saved_forest_predicts_identically_and_is_validated_like_a_tree(tmp_path):
    import json
    import pickle

    from treekit_core import TreeClassifier

    data = load_dataset("soybean")
    forest = ForestClassifier(
        n_estimators=4, random_state=0, criterion="entropy", categorical_features=data.categorical
    ).fit(data.X, data.y)
    expected = forest.decide(data.X)
    path = tmp_path / "forest.json"
    forest.to_json(path)
    for copy in (ForestClassifier.from_json(path), pickle.loads(pickle.dumps(forest))):
        again = copy.decide(data.X)
        np.testing.assert_array_equal(again.proba, expected.proba)
        np.testing.assert_array_equal(again.labels, expected.labels)
        assert copy.feature_subset_size_ == forest.feature_subset_size_
    payload = json.loads(path.read_text())
    payload["trees"][2]["children_left"][0] = 10**9
    with pytest.raises(ValueError, match=r"trees\[2\].*children_left"):
        ForestClassifier.from_json(json.dumps(payload))
    with pytest.raises(ValueError, match="holds a 'ForestClassifier', not a 'TreeClassifier'"):
        TreeClassifier.from_json(path)


def test_the_command_line_fits_saves_and_predicts_a_forest(tmp_path, capsys):
    from treekit_core.datasets import dataset_path
    from treekit_core.tools.cli import main

    data = str(dataset_path("vote"))
    model = str(tmp_path / "forest.json")
    assert main(["fit", data, "--target", "class", "--forest", "3", "--out", model]) == 0
    assert "fitted 3 trees" in capsys.readouterr().out
    assert main(["evaluate", model, data, "--target", "class"]) == 0
    assert "accuracy on decided samples" in capsys.readouterr().out
    out = tmp_path / "predictions.csv"
    assert main(["predict", model, data, "--out", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 436


def test_class_weights_that_would_overflow_a_bootstrap_are_refused_at_fit():
    """A model file refuses sums past the fit bound (issue 33), so fit must never write one:
    class weights that could make a bootstrap weigh more are refused naming class_weight."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match=r"class_weight \{0: 1e\+200\} makes a sample weigh"):
        ForestClassifier(n_estimators=2, class_weight={0: 1e200}).fit(X, y)


@pytest.mark.parametrize("max_features", [None, "sqrt"])
def test_no_fitted_leaf_of_a_forest_has_zero_training_weight(max_features):
    """Issue 36: a bootstrap's out-of-bag rows have weight 0, and a zero-weight row is a
    removed row: it places no threshold and makes no leaf (a leaf of them broke SHAP's
    TreeExplainer). Both growers: the presorted builder, and the node loop (missing
    values)."""
    data = load_dataset("pima")
    X = data.X.copy()
    for missing in (False, True):
        if missing:
            X[::37, 1] = np.nan
        forest = ForestClassifier(n_estimators=8, max_features=max_features, random_state=0).fit(
            X, data.y
        )
        for tree in forest.estimators_:
            assert (tree.weight[tree.is_leaf] > 0).all()
            assert tree.n_samples[0] < X.shape[0]  # the root holds the in-bag rows only


def test_shap_values_of_a_forest_add_up_to_its_probabilities():
    shap = pytest.importorskip("shap")
    import warnings

    from treekit_core.export import MissingValueExportWarning, to_shap

    data = load_dataset("wdbc")
    forest = ForestClassifier(n_estimators=10, max_depth=6, random_state=0).fit(data.X, data.y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingValueExportWarning)
        explainer = shap.TreeExplainer(to_shap(forest))
    values = np.asarray(explainer.shap_values(data.X[:50]))
    if values.ndim == 3 and values.shape[0] == 2:  # a list per class (older shap)
        values = np.moveaxis(values, 0, -1)
    expected = np.asarray(explainer.expected_value)
    np.testing.assert_allclose(
        values.sum(axis=1) + expected, forest.predict_proba(data.X[:50]), atol=1e-6
    )


# -- scikit-learn's max_samples, oob_score and warm_start (issue 37) -----------------------


def _drawn(forest, tree_index, y, n_draws):
    """The bootstrap counts of one tree, recomputed from its seed as the forest draws them."""
    rng = np.random.default_rng(forest._tree_seeds[tree_index])
    labels = np.searchsorted(forest.classes_, y)
    return bootstrap_counts(rng, labels, len(forest.classes_), False, n_draws)


def test_oob_decision_function_averages_the_trees_that_did_not_draw_a_row(wdbc):
    X, y = wdbc.X, wdbc.y
    forest = ForestClassifier(n_estimators=12, random_state=4, oob_score=True).fit(X, y)
    total, n_trees = np.zeros((len(y), 2)), np.zeros(len(y))
    for i, tree in enumerate(forest.estimators_):
        unseen = _drawn(forest, i, y, len(y)) == 0
        # the root of a bootstrap tree weighs exactly the rows it drew
        assert tree.weight[0] == pytest.approx(len(y))
        total[unseen] += forest.composition_.evaluator.predict_distribution(tree, X[unseen])
        n_trees[unseen] += 1
    scored = n_trees > 0
    expected = total[scored] / n_trees[scored, None]
    np.testing.assert_allclose(forest.oob_decision_function_[scored], expected, rtol=1e-12)
    assert np.isnan(forest.oob_decision_function_[~scored]).all()
    accuracy = np.mean(forest.classes_[expected.argmax(axis=1)] == y[scored])
    assert forest.oob_score_ == pytest.approx(accuracy)


def test_oob_score_is_close_to_scikit_learns_and_takes_a_metric(wdbc):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.metrics import balanced_accuracy_score

    X, y = wdbc.X, wdbc.y
    ours = ForestClassifier(n_estimators=200, random_state=0, oob_score=True).fit(X, y)
    theirs = RandomForestClassifier(n_estimators=200, random_state=0, oob_score=True).fit(X, y)
    assert not np.isnan(ours.oob_decision_function_).any()  # 200 trees: every row is left out
    assert abs(ours.oob_score_ - theirs.oob_score_) < 0.02
    metric = ForestClassifier(n_estimators=200, random_state=0, oob_score=balanced_accuracy_score)
    metric.fit(X, y)
    decided = ours.classes_[ours.oob_decision_function_.argmax(axis=1)]
    assert metric.oob_score_ == pytest.approx(balanced_accuracy_score(y, decided))


def test_few_trees_warn_about_rows_without_an_out_of_bag_prediction(wdbc):
    with pytest.warns(UserWarning, match="no out-of-bag prediction"):
        ForestClassifier(n_estimators=2, random_state=0, oob_score=True).fit(wdbc.X, wdbc.y)


@pytest.mark.parametrize("max_samples, draws", [(100, 100), (0.25, 142), (1.0, 569)])
def test_max_samples_draws_that_many_rows_per_tree(wdbc, max_samples, draws):
    X, y = wdbc.X, wdbc.y
    forest = ForestClassifier(n_estimators=3, random_state=1, max_samples=max_samples)
    forest.fit(X, y)
    for i, tree in enumerate(forest.estimators_):
        assert tree.weight[0] == pytest.approx(draws)
        np.testing.assert_allclose(
            tree.statistics[0].sum(), _drawn(forest, i, y, draws).sum(), rtol=1e-12
        )


def test_without_a_bootstrap_max_samples_draws_a_subsample(wdbc):
    """bootstrap=False with max_samples: each tree grows on that many distinct rows
    (partykit's cforest: 0.632 of them, without replacement), drawn from its seed as
    bootstrap_counts draws them; the out-of-bag rows are the others."""
    X, y = wdbc.X, wdbc.y
    forest = ForestClassifier(
        n_estimators=6, random_state=2, bootstrap=False, max_samples=0.632, oob_score=True
    ).fit(X, y)
    draws = round(0.632 * len(y))
    total, n_trees = np.zeros((len(y), 2)), np.zeros(len(y))
    labels = np.searchsorted(forest.classes_, y)
    for i, tree in enumerate(forest.estimators_):
        rng = np.random.default_rng(forest._tree_seeds[i])
        counts = bootstrap_counts(rng, labels, 2, False, draws, replace=False)
        assert set(np.unique(counts)) == {0.0, 1.0} and counts.sum() == draws
        assert tree.weight[0] == draws  # each drawn row once
        np.testing.assert_array_equal(tree.statistics[0], np.bincount(labels, weights=counts))
        unseen = counts == 0
        total[unseen] += forest.composition_.evaluator.predict_distribution(tree, X[unseen])
        n_trees[unseen] += 1
    scored = n_trees > 0
    np.testing.assert_allclose(
        forest.oob_decision_function_[scored], total[scored] / n_trees[scored, None], rtol=1e-12
    )


@pytest.mark.parametrize(
    "params, message",
    [
        ({"max_samples": 0}, "max_samples must be an int in"),
        ({"max_samples": 1.5}, "max_samples must be None"),
        ({"oob_score": True, "bootstrap": False}, "oob_score needs bootstrap=True or max_s"),
        ({"max_samples": 600, "bootstrap": False}, "max_samples must be an int in"),
        ({"max_samples": 10, "balanced_bootstrap": True}, "balanced_bootstrap"),
    ],
)
def test_bad_bootstrap_parameters_are_refused_naming_them(wdbc, params, message):
    with pytest.raises(ValueError, match=message):
        ForestClassifier(n_estimators=2, **params).fit(wdbc.X, wdbc.y)


@pytest.mark.filterwarnings("ignore:.*no out-of-bag prediction")
def test_warm_start_grows_only_the_added_trees_as_one_fit_would(wdbc):
    X, y = wdbc.X, wdbc.y
    warm = ForestClassifier(n_estimators=4, random_state=7, warm_start=True, oob_score=True)
    first = warm.fit(X, y).estimators_[:]
    warm.set_params(n_estimators=9).fit(X, y)
    assert all(a is b for a, b in zip(first, warm.estimators_[:4], strict=True))
    cold = ForestClassifier(n_estimators=9, random_state=7, oob_score=True).fit(X, y)
    for ours, theirs in zip(warm.estimators_, cold.estimators_, strict=True):
        np.testing.assert_array_equal(ours.threshold, theirs.threshold)
    np.testing.assert_array_equal(warm.predict_proba(X), cold.predict_proba(X))
    np.testing.assert_array_equal(warm.oob_decision_function_, cold.oob_decision_function_)
    with pytest.warns(UserWarning, match="does not fit new trees"):
        warm.fit(X, y)
    with pytest.raises(ValueError, match="must be >= the 9 fitted trees"):
        warm.set_params(n_estimators=3).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        warm.set_params(n_estimators=12).fit(X[:, :5], y)


def test_warm_start_refuses_a_forest_read_from_json(wdbc):
    X, y = wdbc.X, wdbc.y
    forest = ForestClassifier(n_estimators=3, random_state=0, warm_start=True).fit(X, y)
    again = ForestClassifier.from_json(forest.to_json())
    again.set_params(n_estimators=5)
    with pytest.raises(ValueError, match="JSON model file"):
        again.fit(X, y)


class SplitThreads:
    """Records the thread that announces every split (where the tree grew)."""

    def __init__(self):
        self.threads = set()

    @hookimpl
    def treekit_node_split(self, node_id, depth, feature, threshold, improvement, n_samples):
        import threading

        self.threads.add(threading.get_ident())


@pytest.mark.parametrize("name, in_one_call", [("vote", False), ("wdbc", True)])
def test_trees_grown_node_by_node_are_not_run_in_contending_threads(name, in_one_call):
    """Node-by-node growth (missing values, nominal columns) is Python: with n_jobs=2 it
    runs in the calling thread, as n_jobs=1 (threads only fought for the GIL: twice the
    time); whole-tree compiled growth still runs in worker threads. Same trees either way."""
    import threading

    data = load_dataset(name)
    forest = ForestClassifier(n_estimators=6, random_state=0, n_jobs=2)
    recorder = SplitThreads()
    with registered(recorder, name="split-threads"):
        forest.fit(data.X, data.y)
    assert (recorder.threads == {threading.get_ident()}) != in_one_call
    single = ForestClassifier(n_estimators=6, random_state=0, n_jobs=1).fit(data.X, data.y)
    np.testing.assert_array_equal(forest.predict_proba(data.X), single.predict_proba(data.X))
