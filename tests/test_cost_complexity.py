"""Minimal cost-complexity pruning: scikit-learn's path, hand computations, CV rules."""

import json

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier
from sklearn_parity import assert_same_tree, float32_exact

from treekit_core import ModelFileError, TreeClassifier
from treekit_core.builtins.labelers import Majority
from treekit_core.builtins.pruners.cost_complexity import (
    CostComplexity,
    node_risk,
    subtree_levels,
    weakest_link_sequence,
)
from treekit_core.datasets import load_dataset
from treekit_core.engine.tree import Tree


@pytest.mark.parametrize(
    "name,min_samples_leaf", [("haberman", 20), ("bupa", 20), ("wisconsin", 20)]
)
def test_impurity_risk_equals_sklearn_ccp(name, min_samples_leaf):
    data = load_dataset(name, dropna=True)
    X = float32_exact(data.X)
    full = TreeClassifier(min_samples_leaf=min_samples_leaf).fit(X, data.y)
    sequence = CostComplexity(risk="impurity").pruning_sequence(
        full.tree_, full.composition_.labeler
    )
    path = DecisionTreeClassifier(
        min_samples_leaf=min_samples_leaf, random_state=0
    ).cost_complexity_pruning_path(X, data.y)
    np.testing.assert_allclose(sequence.alphas, path.ccp_alphas, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(sequence.risk, path.impurities, rtol=1e-9, atol=1e-15)
    distinct = np.unique(path.ccp_alphas)
    # Between consecutive path alphas the optimal subtree is unique (at an alpha on the
    # path float rounding decides the side).
    for alpha in (distinct[:-1] + distinct[1:]) / 2:
        ours = TreeClassifier(
            min_samples_leaf=min_samples_leaf,
            pruner="cost_complexity",
            pruner_params={"risk": "impurity", "alpha": float(alpha)},
        ).fit(X, data.y)
        theirs = DecisionTreeClassifier(
            min_samples_leaf=min_samples_leaf, random_state=0, ccp_alpha=alpha
        ).fit(X, data.y)
        assert_same_tree(ours.tree_, theirs.tree_)


def hand_tree():
    """root[12,8] -> left[9,1] (-> [6,0], [3,1]) and
    right[3,7] (-> [0,5], RR[3,2] (-> [3,0], [0,2]))."""
    sums = np.array(
        [[12, 8], [9, 1], [6, 0], [3, 1], [3, 7], [0, 5], [3, 2], [3, 0], [0, 2]], float
    )
    left = np.array([1, 2, -1, -1, 5, -1, 7, -1, -1])
    right = np.array([4, 3, -1, -1, 6, -1, 8, -1, -1])
    n = len(left)
    return Tree.from_binary(
        left,
        right,
        np.where(left >= 0, 0, -1),
        np.where(left >= 0, 0.5, -2.0),
        sums,
        sums.sum(1),
        sums.sum(1).astype(int),
        np.zeros(n),
        np.zeros(n, int),
        np.zeros((n, 2)),
        np.zeros(n, int),
        1,
    )


def test_misclassification_sequence_equals_hand_computation():
    # R as a fraction of 20: root 8, left 1, LR 1, right 3, RR 2, other leaves 0.
    # g(left) = (1 - 1)/1 = 0 -> pruned first; then g(right) = 3/20/2 = 0.075 beats
    # g(RR) = 0.1 and g(root) = (8 - 1)/20/3; last g(root) = (8 - 4)/20/1 = 0.2.
    tree = hand_tree()
    sequence = weakest_link_sequence(tree, node_risk(tree, "misclassification", Majority()))
    np.testing.assert_array_equal(sequence.pruned_node, [1, 4, 0])
    np.testing.assert_allclose(sequence.alphas, [0.0, 0.0, 0.075, 0.2])
    np.testing.assert_allclose(sequence.risk, [0.05, 0.05, 0.2, 0.4])
    np.testing.assert_array_equal(sequence.n_leaves, [5, 4, 2, 1])
    np.testing.assert_allclose(subtree_levels(sequence), [0.0, 0.075, 0.2])
    pruned = tree.collapse(sequence.prune_mask(0.1, tree.n_nodes))
    assert pruned.n_leaves == 2 and pruned.n_nodes == 3


@pytest.fixture(scope="module")
def wisconsin():
    return load_dataset("wisconsin", dropna=True)


def _cv_model(data, rule, seed):
    return TreeClassifier(
        pruner="cost_complexity",
        pruner_params={"rule": rule, "seed": seed},
        min_samples_split=20,
        min_samples_leaf=7,
    ).fit(data.X, data.y)


@pytest.mark.parametrize("name", ["wisconsin", "pima", "haberman"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cv_is_deterministic_and_one_se_never_larger(name, seed):
    data = load_dataset(name, dropna=True)
    minimum = _cv_model(data, "min_error", seed)
    again = _cv_model(data, "min_error", seed)
    one_se = _cv_model(data, "one_se", seed)
    np.testing.assert_array_equal(
        minimum.pruning_path_["cv_error"], again.pruning_path_["cv_error"]
    )
    np.testing.assert_array_equal(minimum.tree_.threshold, again.tree_.threshold)
    assert one_se.get_n_leaves() <= minimum.get_n_leaves()
    path = minimum.pruning_path_
    selected = path["selected"]
    assert path["cv_error"][selected] == path["cv_error"].min()
    assert minimum.get_n_leaves() == path["n_leaves"][selected]
    assert (path["cv_std_error"] > 0).all() and np.all(np.diff(path["n_leaves"]) < 0)


def test_path_is_exposed_like_rpart_cp_table(wisconsin):
    model = _cv_model(wisconsin, "min_error", 0)
    path = model.pruning_path_
    for key in ("alphas", "n_leaves", "risk", "cp", "cv_error", "cv_std_error", "selected"):
        assert key in path
    np.testing.assert_allclose(
        path["cp"], path["alphas"] / path["risk"][-1]
    )  # rpart: relative to the root
    assert path["n_leaves"][-1] == 1
    assert path["alphas"][0] == 0 and np.all(np.diff(path["alphas"]) > 0)
    with pytest.raises(AttributeError, match="records no pruning path"):
        _ = TreeClassifier().fit(wisconsin.X, wisconsin.y).pruning_path_


def test_pruned_model_round_trips_through_json(wisconsin):
    model = _cv_model(wisconsin, "one_se", 0)
    loaded = TreeClassifier.from_json(model.to_json())
    np.testing.assert_array_equal(loaded.predict(wisconsin.X), model.predict(wisconsin.X))
    np.testing.assert_allclose(loaded.pruning_path_["cv_error"], model.pruning_path_["cv_error"])


def test_fractional_weights_prune_like_scaled_integer_weights(wisconsin):
    integer = np.random.default_rng(0).integers(1, 4, size=wisconsin.X.shape[0]).astype(float)
    fractional = integer * 0.37
    assert not np.allclose(fractional, np.round(fractional))
    for params in ({"alpha": 0.005}, {"seed": 3}):
        a = TreeClassifier(pruner="cost_complexity", pruner_params=params, min_samples_leaf=5).fit(
            wisconsin.X, wisconsin.y, sample_weight=integer
        )
        b = TreeClassifier(pruner="cost_complexity", pruner_params=params, min_samples_leaf=5).fit(
            wisconsin.X, wisconsin.y, sample_weight=fractional
        )
        np.testing.assert_array_equal(a.tree_.feature, b.tree_.feature)
        np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)
        np.testing.assert_allclose(a.tree_.statistics * 0.37, b.tree_.statistics)


@pytest.mark.parametrize(
    "params,message",
    [
        ({"risk": "gini"}, "risk"),
        ({"alpha": -1.0}, "alpha must be None"),
        ({"cv": 1}, "cv"),
        ({"rule": "two_se"}, "rule"),
    ],
)
def test_bad_parameters(params, message):
    with pytest.raises(ValueError, match=message):
        TreeClassifier(pruner="cost_complexity", pruner_params=params).fit([[0.0], [1.0]], [0, 1])


def test_cv_on_a_tree_that_is_only_a_root():
    X = np.arange(20.0).reshape(-1, 1)
    y = np.array([0, 1] * 10)
    model = TreeClassifier(pruner="cost_complexity", max_depth=1, min_samples_leaf=10).fit(X, y)
    path = model.pruning_path_
    assert np.isfinite(path["cv_error"]).all() and model.get_n_leaves() >= 1


def test_the_risk_of_a_prediction_is_named_for_any_target_and_keeps_its_old_name():
    """``risk="prediction"`` (the default) is the loss of each node's own prediction: the
    misclassified weight of a classifier's decision, the residual sum of squares of a
    regressor's mean. "misclassification", its name when every tree predicted classes, is
    a synonym: the same sequence and the same pruned tree."""
    from treekit_core import TreeRegressor

    assert CostComplexity().risk == "prediction"
    data = load_dataset("airquality", dropna=True)
    regressor = TreeRegressor(min_samples_leaf=5).fit(data.X, data.y)
    tree = regressor.tree_
    rss = node_risk(tree, "prediction", None, regressor.composition_.target) * tree.weight[0]
    means = tree.statistics[:, 0] / tree.weight  # (sum of y, sum of y^2) per node
    np.testing.assert_allclose(rss, tree.statistics[:, 1] - tree.weight * means**2, rtol=1e-9)
    for model, labeler in ((regressor, None), (None, Majority())):
        if model is None:
            wisconsin = load_dataset("wisconsin", dropna=True)
            model = TreeClassifier(min_samples_leaf=5).fit(wisconsin.X, wisconsin.y)
        composition = model.composition_
        sequences = [
            weakest_link_sequence(
                model.tree_, node_risk(model.tree_, name, labeler, composition.target)
            )
            for name in ("prediction", "misclassification")
        ]
        np.testing.assert_array_equal(sequences[0].alphas, sequences[1].alphas)
        np.testing.assert_array_equal(sequences[0].pruned_node, sequences[1].pruned_node)
        alpha = float(sequences[0].alphas[len(sequences[0].alphas) // 2])
        pruned = [
            model.prune(alpha=alpha, risk=name) for name in ("prediction", "misclassification")
        ]
        assert pruned[0].get_n_leaves() == pruned[1].get_n_leaves() < model.get_n_leaves()
        np.testing.assert_array_equal(pruned[0].tree_.feature, pruned[1].tree_.feature)


def test_rparts_cp_rows_merge_only_bit_identical_complexities():
    """Issue 57: rpart keeps two cp-table rows whose complexities differ in the last bits
    (0.0018009902449136932 and 0.0018009902449136923: nsplit 9 and 10) and merges only
    equal doubles (make_cp_list.c); the weakest-link sequence merges alphas within a
    relative 1e-12 (mathematically equal alphas computed along two branches)."""
    from treekit_core.builtins.pruners.cost_complexity import WeakestLinkSequence, subtree_levels

    a, b = 0.0018009902449136923, 0.0018009902449136932
    steps = dict(
        pruned_node=np.array([3, 1, 0]),
        step_alpha=np.array([a, b, 0.5]),
        risk=np.array([0.1, 0.2, 0.3, 0.4]),
        n_leaves=np.array([4, 3, 2, 1]),
        n_internal=np.array([3, 2, 1, 0]),
    )
    np.testing.assert_array_equal(
        subtree_levels(WeakestLinkSequence(**steps, exact_levels=True)), [0.0, a, b, 0.5]
    )
    np.testing.assert_array_equal(subtree_levels(WeakestLinkSequence(**steps)), [0.0, a, 0.5])
    # the same double twice is one level either way (a parent's cap copies its value)
    steps["step_alpha"] = np.array([a, a, 0.5])
    np.testing.assert_array_equal(
        subtree_levels(WeakestLinkSequence(**steps, exact_levels=True)), [0.0, a, 0.5]
    )


def test_a_pure_tree_s_risk_is_not_below_zero_and_its_file_loads():
    """A pure grown tree's risk came out as -2.4e-16 (the sequence subtracts pruned risks)
    and its own model file was refused (found by tests/fixtures/models_v3: a class-weighted
    tree); now the risk is clamped at 0, and files written before load."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(240, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 2] + rng.normal(scale=0.5, size=240) > 0, "yes", "no")
    model = TreeClassifier(pruner="cost_complexity", random_state=0, class_weight="balanced")
    model.fit(X, y)
    assert (model.pruning_path_["risk"] >= 0).all()
    assert model.pruning_path_["risk"][0] == 0.0  # the grown tree is pure
    loaded = TreeClassifier.from_json(model.to_json())
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    payload = json.loads(model.to_json())
    payload["tree"]["component_state"]["pruner"]["risk"][0] = -1e-3  # not rounding
    with pytest.raises(ModelFileError, match="pruner.risk holds values below"):
        TreeClassifier.from_json(json.dumps(payload))
