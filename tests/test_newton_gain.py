"""The Newton gain (criterion ``newton``, target ``newton_step``): second-order boosting
trees as LightGBM and scikit-learn's HistGradientBoosting grow them. By hand, by the
conformance kit, against HistGradientBoosting (the same algorithm: gain G^2 / (H + l2),
children of at least 1e-3 hessian, leaves -G / (H + l2), best first), and the choice
boosting makes when ``criterion`` is None."""

import contextlib
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

from treekit_core import (
    BoostingClassifier,
    BoostingRegressor,
    BoostingSurvival,
    ModelFileError,
    TreeRegressor,
    registered,
)
from treekit_core.builtins.newton import NewtonGain, NewtonStep, newton_gain_score
from treekit_core.testing import check_criterion, check_target, reference_leaf, small_data


def test_the_gain_is_the_second_order_gain_by_hand():
    """G_L = 3, H_L = 2; G_R = -1, H_R = 1; lambda = 1: 9/3 + 1/2 - 4/4 = 2.5, over the
    parent's weight 5; a child below min_child_hessian is no candidate."""
    left, right = np.array([3.0, 2.0, 7.0]), np.array([-1.0, 1.0, 4.0])
    parent = left + right
    params = NewtonGain(l2_regularization=1.0).impurity_params(3)
    assert newton_gain_score(left, 2.0, right, 3.0, parent, 5.0, 0.0, params) == 0.5
    thin = np.array([-1.0, 0.0005, 4.0])
    score = newton_gain_score(left, 2.0, thin, 3.0, left + thin, 5.0, 0.0, params)
    assert score == -math.inf
    # a child without hessian, no minimum and no lambda: no step, no candidate (not a
    # division by 0, which plain Python raises)
    bare = NewtonGain(min_child_hessian=0.0).impurity_params(3)
    empty = np.array([0.0, 0.0, 0.0])
    assert newton_gain_score(left, 2.0, empty, 1.0, left, 3.0, 0.0, bare) == -math.inf
    # the impurity: (Q - G^2 / (H + lambda)) / W = (11 - 4 / 4) / 5
    assert NewtonGain(l2_regularization=1.0).node_impurity(parent, 5.0) == 2.0


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    l2=st.sampled_from([0.0, 0.5, 3.0]),
    n=st.integers(4, 40),
)
def test_the_score_is_the_impurity_drop(seed, l2, n):
    """Of random rows (-g, h, g^2 / h) cut anywhere: the score is the drop of the
    impurity, i(t) - (w_L i(L) + w_R i(R)) / w_t (the Q sums cancel), to rounding; every
    impurity >= 0 (Cauchy-Schwarz)."""
    rng = np.random.default_rng(seed)
    g, h, w = rng.normal(size=n), rng.uniform(0.01, 1, n), rng.uniform(0.5, 2, n)
    rows = np.column_stack([-g, h, g * g / h])
    criterion = NewtonGain(l2_regularization=l2, min_child_hessian=0.0)
    params = criterion.impurity_params(3)
    cut = rng.integers(1, n)
    left, right = w[:cut] @ rows[:cut], w[cut:] @ rows[cut:]
    wl, wr = w[:cut].sum(), w[cut:].sum()
    impurities = [criterion.node_impurity(s, t) for s, t in ((left, wl), (right, wr))]
    parent_impurity = criterion.node_impurity(left + right, wl + wr)
    assert min(impurities + [parent_impurity]) >= -1e-12
    drop = parent_impurity - (wl * impurities[0] + wr * impurities[1]) / (wl + wr)
    score = newton_gain_score(left, wl, right, wr, left + right, wl + wr, 0.0, params)
    scale = abs(left[2] + right[2]) / (wl + wr)
    assert score == pytest.approx(drop, abs=1e-10 * scale)


def test_the_kit_accepts_the_criterion_and_its_target():
    y = np.sin(np.arange(small_data(2)[0].shape[0])) * 3.0
    check_criterion(NewtonGain, y=y)
    check_target(NewtonStep, y=y)


def test_a_tree_of_a_y_is_squared_error_s_tree():
    """From a y the rows are (y, 1, y^2): the gain is squared error's drop, so the tree
    asks the same questions and predicts the same means."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4))
    y = X[:, 0] + np.sin(2 * X[:, 1]) + rng.normal(0, 0.3, 300)
    newton = TreeRegressor(criterion="newton", max_depth=4).fit(X, y)
    squared = TreeRegressor(criterion="squared_error", max_depth=4).fit(X, y)
    np.testing.assert_array_equal(newton.tree_.feature, squared.tree_.feature)
    np.testing.assert_array_equal(newton.tree_.threshold, squared.tree_.threshold)
    np.testing.assert_allclose(newton.predict(X), squared.predict(X), rtol=1e-12)


def _few_values(n=400, d=4, seed=0):
    """Integer-valued features (12 values each: every value has a bin of its own in
    HistGradientBoosting, and the exhaustive search's cuts are the histograms')."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 12, size=(n, d)).astype(np.float64)
    return X, rng


def _splitter(name):
    """(the splitter's name, the context registering it): the core's tests start from the
    built-ins alone."""
    if name == "histogram":
        plugin = pytest.importorskip("treekit_histogram")
        return name, registered(plugin, name="treekit-histogram")
    return name, contextlib.nullcontext()


def _split_sets(hgb_predictor, tree):
    """The (feature, threshold) pairs of a HistGradientBoosting tree and of ours."""
    ours = sorted(
        (int(tree.feature[i]), float(tree.threshold[i]))
        for i in range(tree.n_nodes)
        if not tree.is_leaf[i]
    )
    theirs = sorted(
        (int(node["feature_idx"]), float(node["num_threshold"]))
        for node in hgb_predictor.nodes
        if not node["is_leaf"]
    )
    return ours, theirs


HGB_CASES = [
    ("log_loss", 0.0, 8),
    ("log_loss", 1.0, 4),
    ("poisson", 0.0, 8),
    ("gamma", 0.5, 8),
]


@pytest.mark.parametrize("splitter_name", ["exhaustive", "histogram"])
@pytest.mark.parametrize("loss, l2, leaves", HGB_CASES)
def test_boosting_with_the_newton_gain_is_hist_gradient_boosting(splitter_name, loss, l2, leaves):
    """scikit-learn 1.9's HistGradientBoosting (the same algorithm; its gradients and
    hessians are float32, so its predictions agree to about 1e-8, not to the bit): every
    round's tree asks the same questions (the exhaustive splitter's cuts lie halfway
    between a node's values, the histogram's between all values: the same features), and
    the predictions agree to 1e-7 relative.
    Squared error of the gradient (Friedman's trees) grows other trees on these data
    (predictions 0.25 apart for the classifier), so the comparison can fail."""
    X, rng = _few_values()
    if loss == "log_loss":
        logit = X[:, 0] / 3 - X[:, 1] / 4 + np.sin(X[:, 2]) - 1
        y = (rng.random(X.shape[0]) < 1 / (1 + np.exp(-logit))).astype(int)
    else:
        mu = np.exp(X[:, 0] / 6 - X[:, 1] / 8 + np.sin(X[:, 2]) / 3)
        y = rng.poisson(mu).astype(float) if loss == "poisson" else rng.gamma(2.0, mu / 2)
    settings = dict(learning_rate=0.3, max_leaf_nodes=leaves, min_samples_leaf=10)
    peer = HistGradientBoostingClassifier if loss == "log_loss" else HistGradientBoostingRegressor
    theirs = peer(
        **({} if loss == "log_loss" else {"loss": loss}),
        max_iter=30,
        l2_regularization=l2,
        early_stopping=False,
        **settings,
    ).fit(X, y)
    name, plugin = _splitter(splitter_name)
    ours_class = BoostingClassifier if loss == "log_loss" else BoostingRegressor
    with plugin:
        ours = ours_class(
            **({} if loss == "log_loss" else {"loss": loss}),
            n_estimators=30,
            l2_regularization=l2,
            max_depth=None,
            splitter=name,
            criterion="newton",
            n_threads=1,
            **settings,
        ).fit(X, y)
        predicted = ours.predict_proba(X) if loss == "log_loss" else ours.predict(X)
    expected = theirs.predict_proba(X) if loss == "log_loss" else theirs.predict(X)
    np.testing.assert_allclose(predicted, expected, rtol=1e-7, atol=1e-7)
    for r in range(30):
        mine, peer_splits = _split_sets(theirs._predictors[r][0], ours.estimators_[r][0])
        if name == "exhaustive":  # its cuts halve a node's values, the bins' all values
            mine, peer_splits = sorted(f for f, _ in mine), sorted(f for f, _ in peer_splits)
        assert mine == peer_splits, f"round {r}"


def test_the_criterion_boosting_chooses():
    """None: the Newton gain for the losses that prefer it (log loss, Poisson, gamma) with
    the histogram splitter (a binned search: HistGradientBoosting's rule, its default
    splitter too), squared error of the negative gradient otherwise (scikit-learn's
    GradientBoosting* with the exhaustive splitter; losses of constant hessian, or leaves
    of their own, Cox's); "newton" as named, with the estimator's l2_regularization
    unless criterion_params names one."""
    from sksurv.util import Surv

    X, rng = _few_values(120)
    labels = (X[:, 0] > 5).astype(int)
    surv = Surv.from_arrays(X[:, 1] > 3, 1.0 + X[:, 0])
    with _splitter("histogram")[1]:
        chosen = {
            (loss, splitter): BoostingRegressor(loss=loss, splitter=splitter, n_estimators=2)
            .fit(X, X[:, 1] + 1.0)
            .composition_.criterion.name
            for loss in ("squared_error", "huber", "poisson", "gamma")
            for splitter in (None, "histogram", "exhaustive")
        }
        for splitter in (None, "histogram", "exhaustive"):
            model = BoostingClassifier(splitter=splitter, n_estimators=2).fit(X, labels)
            chosen["log_loss", splitter] = model.composition_.criterion.name
            model = BoostingSurvival(splitter=splitter, n_estimators=2).fit(X, surv)
            chosen["cox", splitter] = model.composition_.criterion.name
        classifier = BoostingClassifier(criterion="newton", n_estimators=2, l2_regularization=2)
        newton = classifier.fit(X, labels).composition_.criterion
        own = BoostingClassifier(
            criterion="newton", criterion_params={"l2_regularization": 0.5}, n_estimators=2
        )
        own_l2 = own.fit(X, labels).composition_.criterion.l2_regularization
    newton_losses = {"poisson", "gamma", "log_loss"}
    assert chosen == {
        (loss, splitter): "newton"
        if loss in newton_losses and splitter != "exhaustive"
        else "squared_error"
        for loss, splitter in chosen
    }
    assert len(chosen) == 18
    assert (newton.name, newton.l2_regularization, own_l2) == ("newton", 2.0, 0.5)
    model = BoostingSurvival(criterion="newton", n_estimators=2, loss_params={"newton": True}).fit(
        X, surv
    )
    assert model.composition_.criterion.name == "newton"


def test_criteria_reading_other_rows_and_bad_parameters_are_refused_by_name():
    X, _ = _few_values(60)
    labels = (X[:, 0] > 5).astype(int)
    with pytest.raises(ValueError, match="criterion 'gini' reads 'one_hot' rows; boosting"):
        BoostingClassifier(criterion="gini", n_estimators=2).fit(X, labels)
    with pytest.raises(ValueError, match="min_child_hessian must be a finite number >= 0"):
        BoostingClassifier(
            criterion="newton", criterion_params={"min_child_hessian": -1.0}, n_estimators=2
        ).fit(X, labels)


def test_min_child_hessian_keeps_thin_children_out():
    """Each child of every split holds at least min_child_hessian of summed hessian (a
    round's hessians are p (1 - p) at its start); so large a minimum that no cut meets it
    leaves every tree a leaf."""
    X, rng = _few_values(300)
    labels = (X[:, 0] + rng.normal(0, 2, 300) > 5).astype(int)
    params = dict(n_estimators=5, criterion="newton", splitter="exhaustive", max_depth=4)
    model = BoostingClassifier(criterion_params={"min_child_hessian": 5.0}, **params)
    model.fit(X, labels)
    raw = np.tile(model._init_raw, (X.shape[0], 1))
    for trees in model.estimators_:
        tree = trees[0]
        p = 1 / (1 + np.exp(-raw[:, 0]))
        hessian = p * (1 - p)
        leaves = np.array([reference_leaf(tree, x) for x in X])
        for node in np.flatnonzero(tree.is_leaf):
            assert hessian[leaves == node].sum() >= 5.0 - 1e-9
        raw[:, 0] += model.learning_rate * tree.value[leaves, 0]
    blocked = BoostingClassifier(criterion_params={"min_child_hessian": 1e6}, **params)
    assert all(trees[0].n_nodes == 1 for trees in blocked.fit(X, labels).estimators_)


def test_a_newton_model_file_round_trips_and_its_statistics_are_checked():
    X, rng = _few_values(200)
    labels = (X[:, 0] + rng.normal(0, 2, 200) > 5).astype(int)
    model = BoostingClassifier(criterion="newton", splitter="exhaustive", n_estimators=4)
    model.fit(X, labels)
    loaded = BoostingClassifier.from_json(model.to_json())
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    payload = json.loads(model.to_json())
    payload["trees"][1][0]["tree"]["statistics"][0][1] = -1.0
    with pytest.raises(ModelFileError, match="a sum of h or of g\\^2 / h is negative"):
        BoostingClassifier.from_json(json.dumps(payload))


@pytest.mark.parametrize("splitter_name", ["exhaustive", "histogram"])
def test_newton_trees_keep_monotonic_and_interaction_constraints(splitter_name):
    """The step G / H is what monotonic constraints order (MonotoneValue of the sums), the
    loss's leaves are kept in its intervals: P(second class) never falls along feature 0
    after any round; every path tests features of one interaction group."""
    rng = np.random.default_rng(4)
    X = rng.uniform(-2, 2, size=(400, 3))
    labels = (X[:, 0] + np.sin(3 * X[:, 0]) + X[:, 1] + rng.normal(0, 0.7, 400) > 0).astype(int)
    name, plugin = _splitter(splitter_name)
    with plugin:
        model = BoostingClassifier(
            splitter=name,
            criterion="newton",
            n_estimators=30,
            max_depth=3,
            monotonic_cst=[1, 0, 0],
            interaction_cst=[[0, 1], [2]],
        ).fit(X, labels)
    assert model.composition_.criterion.name == "newton"
    grid = np.linspace(-2.5, 2.5, 61)
    for other in rng.uniform(-2, 2, size=(3, 2)):
        probe = np.column_stack([grid, np.full(61, other[0]), np.full(61, other[1])])
        for stage in model.staged_predict_proba(probe):
            assert np.all(np.diff(stage[:, 1]) >= -1e-12)
    from treekit_core.testing import tree_paths

    for (tree,) in model.estimators_:
        for used in tree_paths(tree):
            assert set(used) <= {0, 1} or set(used) <= {2}


def test_weighted_rows_boost_as_hist_gradient_boosting_weighs_them():
    """Sample weights multiply each row's gradient and hessian (and the start's class
    shares), as HistGradientBoosting's; min_samples_leaf still counts rows."""
    X, rng = _few_values(300, 3, seed=2)
    y = (rng.random(300) < 1 / (1 + np.exp(-(X[:, 0] - X[:, 1]) / 3))).astype(int)
    weight = rng.uniform(0.2, 3.0, 300)
    settings = dict(learning_rate=0.3, max_leaf_nodes=6, min_samples_leaf=8)
    theirs = HistGradientBoostingClassifier(max_iter=20, early_stopping=False, **settings)
    theirs.fit(X, y, sample_weight=weight)
    ours = BoostingClassifier(
        n_estimators=20, max_depth=None, splitter="exhaustive", criterion="newton", **settings
    ).fit(X, y, sample_weight=weight)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-7)
