"""Gradient boosting (issue 60, first step): losses as components, BoostingRegressor and
BoostingClassifier against scikit-learn's GradientBoosting* (the same algorithm: squared-
error trees on the negative gradient, leaves by the loss's line search), by hand for the
losses scikit-learn's classic boosting lacks, and their promises (staged predictions,
early stopping, monotonic constraints)."""

import json
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor

from treekit_core import BoostingClassifier, BoostingRegressor
from treekit_core.builtins.losses import weighted_percentile
from treekit_core.registry import get_registry

SETTINGS = dict(learning_rate=0.1, n_estimators=50, max_depth=3, subsample=1.0)


def _data(n=300, d=5, seed=0):
    """Continuous features cast to float32 (as scikit-learn casts X for its trees)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32).astype(np.float64)
    y = 2 * X[:, 0] + np.sin(3 * X[:, 1]) + rng.normal(0, 0.3, n)
    return X, y


@pytest.mark.parametrize(
    "loss, n_features, weighted",
    [
        ("squared_error", 5, False),
        ("squared_error", 5, True),
        ("absolute_error", 1, False),
        ("absolute_error", 1, True),
        ("huber", 1, False),
        ("quantile@0.5", 1, False),
        ("quantile@0.25", 1, True),
        ("quantile@0.75", 1, True),
    ],
)
def test_the_regressor_predicts_what_scikit_learn_predicts(loss, n_features, weighted):
    """Predictions, scores per round and importances equal GradientBoostingRegressor's
    (scikit-learn 1.9) to 1e-8. The absolute, Huber and quantile losses on one feature:
    their two-valued gradients tie split improvements across features, which
    scikit-learn's own seeds break differently. Quantiles whose gradients (-alpha,
    1 - alpha) are sums of few powers of two: at other alphas (0.9 and 0.1, say)
    scikit-learn splits nodes whose gradients are all equal, because a child's impurity
    there comes from its parent's sums less its sibling's and rounds to 4.4e-16, above
    its EPSILON, where treekit sums the node's rows and finds it pure (so the trees
    differ from the first round on; not matched)."""
    X, y = _data()
    X = X[:, :n_features]
    weight = np.random.default_rng(1).integers(1, 4, y.size).astype(float) if weighted else None
    loss, _, alpha = loss.partition("@")  # "quantile@0.25": alpha 0.25
    extra = {"alpha": float(alpha)} if alpha else {}
    theirs = GradientBoostingRegressor(loss=loss, random_state=0, **extra, **SETTINGS)
    theirs.fit(X, y, sample_weight=weight)
    ours = BoostingRegressor(
        loss=loss, loss_params=extra or None, splitter="exhaustive", **SETTINGS
    )
    ours.fit(X, y, sample_weight=weight)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=0, atol=1e-8)
    if n_features == 1:
        # new rows: with several features, small nodes that two features split alike
        # (the same training rows each side) route new rows by the feature each library
        # picks (scikit-learn: its seeded feature order); with one there is no such tie
        X_new = _data(100, 5, seed=7)[0][:, :1]
        np.testing.assert_allclose(ours.predict(X_new), theirs.predict(X_new), atol=1e-8)
    np.testing.assert_allclose(ours.train_score_, theirs.train_score_, rtol=1e-10)
    # importances: the same ties credit a small node's decrease to either feature
    np.testing.assert_allclose(
        ours.feature_importances_, theirs.feature_importances_, rtol=0, atol=2e-3
    )
    assert ours.n_iter_ == 50


@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_classifier_predicts_what_scikit_learn_predicts(n_classes):
    """log_loss: binomial (one tree per round) and multinomial (one per class and round,
    scikit-learn's (K-1)/K Newton step and symmetric link) probabilities to 1e-8."""
    X, y = _data()
    labels = np.array(["a", "b", "c"])[np.digitize(y, [0.3] if n_classes == 2 else [-1, 1])]
    theirs = GradientBoostingClassifier(random_state=0, **SETTINGS).fit(X, labels)
    ours = BoostingClassifier(splitter="exhaustive", **SETTINGS).fit(X, labels)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-8)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    np.testing.assert_allclose(ours.train_score_, theirs.train_score_, rtol=1e-10)
    assert list(ours.classes_) == list(theirs.classes_)
    assert len(ours.estimators_[0]) == (1 if n_classes == 2 else n_classes)


def test_poisson_and_gamma_take_one_newton_step_per_leaf():
    """By hand, one stump with learning rate 1: the start is log of the mean; a leaf adds
    -sum(g) / sum(h) with g = mu - y, h = mu (Poisson) and g = 1 - y / mu, h = y / mu
    (gamma), mu = exp(start)."""
    X = np.array([[0.0], [0.0], [0.0], [1.0], [1.0]])
    y = np.array([1.0, 2.0, 0.0, 5.0, 7.0])
    start = np.log(y.mean())
    mu = np.exp(start)
    for loss, g, h in (
        ("poisson", mu - y, np.full(5, mu)),
        ("gamma", 1 - (y + 1) / mu, (y + 1) / mu),
    ):
        target = y if loss == "poisson" else y + 1
        if loss == "gamma":
            start_g = np.log(target.mean())
            mu_g = np.exp(start_g)
            g, h = 1 - target / mu_g, target / mu_g
        model = BoostingRegressor(
            loss=loss, splitter="exhaustive", n_estimators=1, learning_rate=1.0, max_depth=1
        ).fit(X, target)
        begin = start if loss == "poisson" else start_g
        left = -g[:3].sum() / h[:3].sum()
        right = -g[3:].sum() / h[3:].sum()
        expected = np.exp(begin + np.array([left, left, left, right, right]))
        np.testing.assert_allclose(model.predict(X), expected, rtol=1e-12)


def test_staged_predictions_end_where_predict_is():
    X, y = _data(200)
    model = BoostingRegressor(splitter="exhaustive", n_estimators=12).fit(X, y)
    stages = list(model.staged_predict(X))
    assert len(stages) == model.n_iter_ == 12
    np.testing.assert_array_equal(stages[-1], model.predict(X))
    errors = [np.mean((s - y) ** 2) for s in stages]
    assert all(b <= a for a, b in zip(errors, errors[1:], strict=False))  # squared error falls
    labels = (y > 0).astype(int)
    classifier = BoostingClassifier(splitter="exhaustive", n_estimators=5).fit(X, labels)
    probas = list(classifier.staged_predict_proba(X))
    np.testing.assert_array_equal(probas[-1], classifier.predict_proba(X))
    assert [list(p) for p in classifier.staged_predict(X)][-1] == list(classifier.predict(X))
    raws = list(classifier.staged_decision_function(X))
    np.testing.assert_array_equal(raws[-1], classifier.decision_function(X))
    np.testing.assert_allclose(
        np.exp(classifier.predict_log_proba(X)), classifier.predict_proba(X), rtol=1e-12
    )


def test_early_stopping_stops_where_the_held_out_loss_stops_falling():
    """Pure noise: the held-out loss stops falling early; the fit stops exactly
    n_iter_no_change rounds after the best held-out loss (none of the later rounds beat it
    by tol), and no earlier stretch of that many rounds went without an improvement."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 4))
    y = rng.normal(size=400)
    model = BoostingRegressor(
        splitter="exhaustive",
        n_estimators=500,
        early_stopping=True,
        n_iter_no_change=5,
        tol=1e-4,
        random_state=0,
    ).fit(X, y)
    scores = model.validation_score_
    assert model.n_iter_ < 500 and scores.size == model.n_iter_
    best = int(np.argmin(scores))
    assert model.n_iter_ == best + 6
    assert np.all(scores[best + 1 :] > scores[best] - 1e-4)
    assert model.train_score_.size == model.n_iter_


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    sign=st.sampled_from([1, -1]),
    loss=st.sampled_from(["squared_error", "absolute_error", "huber"]),
)
def test_monotonic_constraints_hold_after_every_round(seed, sign, loss):
    """monotonic_cst on feature 0: no pair of rows differing only in that feature
    predicts against the constraint, after any round (hypothesis). The loss's leaf values
    are clipped to the intervals the constrained tree keeps its means in (a first version
    without the clip failed here)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(150, 2))
    y = sign * X[:, 0] + np.sin(4 * X[:, 0]) + X[:, 1] + rng.normal(0, 0.5, 150)
    model = BoostingRegressor(
        loss=loss, splitter="exhaustive", n_estimators=20, monotonic_cst=[sign, 0]
    ).fit(X, y)
    grid = np.linspace(-2.5, 2.5, 41)
    for other in rng.uniform(-2, 2, 3):
        probe = np.column_stack([grid, np.full(grid.size, other)])
        for stage in model.staged_predict(probe):
            assert np.all(np.diff(stage) * sign >= -1e-12)


def test_a_monotonic_binary_classifier_keeps_its_constraint():
    rng = np.random.default_rng(4)
    X = rng.uniform(-2, 2, size=(300, 2))
    labels = (X[:, 0] + np.sin(3 * X[:, 0]) + rng.normal(0, 0.7, 300) > 0).astype(int)
    model = BoostingClassifier(splitter="exhaustive", n_estimators=30, monotonic_cst=[1, 0])
    model.fit(X, labels)
    probe = np.column_stack([np.linspace(-2.5, 2.5, 60), np.zeros(60)])
    assert np.all(np.diff(model.predict_proba(probe)[:, 1]) >= -1e-12)


def test_weighted_percentile_is_scikit_learn_s():
    from sklearn.utils.stats import _weighted_percentile

    rng = np.random.default_rng(0)
    for _ in range(50):
        values = rng.integers(0, 6, 9).astype(float)
        weight = rng.integers(0, 3, 9).astype(float)
        weight[0] = 1.0
        for rank in (0, 10, 50, 90, 100):
            assert weighted_percentile(values, weight, rank) == _weighted_percentile(
                values, weight, rank
            )


def test_bad_parameters_are_named():
    X, y = _data(50)
    for params, word in (
        ({"learning_rate": 0}, "learning_rate"),
        ({"subsample": 1.5}, "subsample"),
        ({"n_estimators": 0}, "n_estimators"),
        ({"loss": "log_loss"}, "log_loss"),
        ({"loss": "huber", "alpha": 1.5}, "alpha"),
        ({"max_iter": 0}, "max_iter"),
    ):
        with pytest.raises(ValueError, match=word):
            BoostingRegressor(splitter="exhaustive", **params).fit(X, y)
    with pytest.raises(ValueError, match="squared_error"):
        BoostingClassifier(loss="squared_error", splitter="exhaustive").fit(X, y > 0)
    for class_weight in ({True: -1.0}, {True: np.nan}, {"c": 1.0}, "evenly"):
        with pytest.raises(ValueError, match="class_weight"):
            BoostingClassifier(splitter="exhaustive", class_weight=class_weight).fit(X, y > 0)
    with pytest.raises(ValueError, match="poisson"):
        BoostingRegressor(loss="poisson", splitter="exhaustive").fit(X, y - 100)


def test_max_iter_is_n_estimators_and_pickles_predict_alike():
    X, y = _data(120)
    model = BoostingRegressor(splitter="exhaustive", max_iter=7).fit(X, y)
    assert model.n_iter_ == 7  # max_iter, when given, is the number of rounds
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(X), model.predict(X))


def test_missing_values_go_as_the_trees_send_them():
    """A row missing a tested value mixes its leaves' values by C4.5's shares, as the
    trees' evaluator mixes any values: its prediction lies between the two branches'."""
    X, y = _data(200, 2)
    X[::7, 0] = np.nan
    model = BoostingRegressor(splitter="exhaustive", n_estimators=10, max_depth=1).fit(X, y)
    probe = np.array([[np.nan, 0.0], [-5.0, 0.0], [5.0, 0.0]])
    missing, low, high = model.predict(probe)
    assert min(low, high) < missing < max(low, high)


def test_the_losses_are_registered_components():
    names = set(get_registry().components("loss"))
    assert {
        "squared_error",
        "absolute_error",
        "huber",
        "quantile",
        "poisson",
        "gamma",
        "log_loss",
        "cox",
    } <= names


def _boosted(classifier=False):
    X, y = _data(150, 3)
    X[::9, 1] = np.nan  # trees that mix leaves for rows missing a tested value
    if classifier:
        labels = np.array(["low", "mid", "high"])[np.digitize(y, [-1, 1])]
        return BoostingClassifier(splitter="exhaustive", n_estimators=6).fit(X, labels), X
    return BoostingRegressor(loss="huber", splitter="exhaustive", n_estimators=6).fit(X, y), X


@pytest.mark.parametrize("classifier", [False, True])
def test_a_model_file_predicts_what_the_model_predicts(classifier, tmp_path):
    model, X = _boosted(classifier)
    path = tmp_path / "boosted.json"
    model.to_json(path)
    loaded = type(model).from_json(path)
    method = "predict_proba" if classifier else "predict"
    np.testing.assert_array_equal(getattr(loaded, method)(X), getattr(model, method)(X))
    np.testing.assert_array_equal(loaded.train_score_, model.train_score_)
    assert loaded.n_iter_ == model.n_iter_
    if classifier:
        assert list(loaded.classes_) == list(model.classes_)
        np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


EDITS = {
    "a leaf value NaN": (
        False,
        lambda p: p["trees"][0][0]["leaf_values"].__setitem__(0, "nan"),
        "leaf_values",
    ),
    "a leaf value short": (
        False,
        lambda p: p["trees"][1][0]["leaf_values"].pop(),
        r"trees\[1\]\[0\]: 'leaf_values' must hold",
    ),
    "a round with two trees": (
        False,
        lambda p: p["trees"][2].append(p["trees"][2][0]),
        r"trees\[2\] must list 1 tree",
    ),
    "initial_raw of two": (
        False,
        lambda p: p["boosting"]["initial_raw"].append(0.0),
        "'initial_raw' must hold 1",
    ),
    "another loss": (
        False,
        lambda p: p["boosting"]["loss"].update(name="quantile"),
        "names loss 'quantile'",
    ),
    "no classes for a classifier": (
        True,
        lambda p: p.update(classes=None),
        "'classes' must be a list of labels",
    ),
    "a multinomial round short of a tree": (
        True,
        lambda p: p["trees"][0].pop(),
        r"trees\[0\] must list 3 tree",
    ),
    "a tree's child out of range": (
        False,
        lambda p: p["trees"][0][0]["tree"]["children_left"].__setitem__(0, 10**6),
        r"trees\[0\]\[0\]",
    ),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edited_model_file_is_refused_naming_the_field(edit):
    from treekit_core import ModelFileError

    classifier, change, message = EDITS[edit]
    model, _ = _boosted(classifier)
    payload = json.loads(model.to_json())
    change(payload)
    with pytest.raises(ModelFileError, match=message):
        type(model).from_json(json.dumps(payload))


def _follow_up(n=300, seed=0):
    from sksurv.util import Surv

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 1)).astype(np.float32).astype(np.float64)
    time = np.round(rng.exponential(np.exp(-X[:, 0])) * 10) + 1  # ties in time
    event = rng.random(n) < 0.7
    return X, Surv.from_arrays(event, time), event, time


def test_cox_boosting_is_scikit_survival_s():
    """BoostingSurvival(loss="cox") against scikit-survival 0.28's
    GradientBoostingSurvivalAnalysis(loss="coxph") on one feature, tied times: risk
    scores after every round and scores per round to 1e-8, Breslow survival curves, concordance."""
    from sksurv.ensemble import GradientBoostingSurvivalAnalysis

    from treekit_core import BoostingSurvival

    X, y, _, _ = _follow_up()
    theirs = GradientBoostingSurvivalAnalysis(loss="coxph", random_state=0, **SETTINGS).fit(X, y)
    ours = BoostingSurvival(splitter="exhaustive", **SETTINGS).fit(X, y)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), atol=1e-8)
    for mine, peer in zip(ours.staged_predict(X), theirs.staged_predict(X), strict=True):
        np.testing.assert_allclose(mine, peer, atol=1e-8)
    np.testing.assert_allclose(ours.train_score_, theirs.train_score_, rtol=1e-10)
    np.testing.assert_allclose(
        ours.predict_survival_function(X[:20], return_array=True),
        theirs.predict_survival_function(X[:20], return_array=True),
        atol=1e-10,
    )
    curve = ours.predict_cumulative_hazard_function(X[:1])[0]
    assert curve(ours.unique_times_[-1]) == pytest.approx(
        theirs.predict_cumulative_hazard_function(X[:1])[0](ours.unique_times_[-1])
    )
    assert ours.score(X, y) == pytest.approx(theirs.score(X, y), abs=1e-12)


def test_cox_gradient_is_the_weighted_partial_likelihood_s():
    """The weighted Breslow partial likelihood's gradient by central differences, and the
    Newton option's one stump by hand (-sum g / sum h per leaf)."""
    from treekit_core import BoostingSurvival
    from treekit_core.builtins.losses import Cox

    _, _, event, time = _follow_up(40, seed=2)
    rng = np.random.default_rng(3)
    raw = rng.normal(size=(40, 1))
    weight = rng.uniform(0.5, 2, 40)
    rows = np.column_stack([time, event.astype(float)])
    loss = Cox()
    gradient, _ = loss.gradient_hessian(rows, raw, {"weight": weight})
    step = 1e-6
    for i in range(0, 40, 7):
        up, down = raw.copy(), raw.copy()
        up[i, 0] += step
        down[i, 0] -= step
        numeric = (loss.loss(rows, up, weight) - loss.loss(rows, down, weight)) / (2 * step)
        assert gradient[i, 0] * weight[i] == pytest.approx(numeric, rel=1e-5, abs=1e-8)
    X = (np.arange(40) % 2).astype(float)[:, None]
    model = BoostingSurvival(
        splitter="exhaustive",
        n_estimators=1,
        learning_rate=1.0,
        max_depth=1,
        loss_params={"newton": True},
    ).fit(X, np.column_stack([time, event]))
    g, h = Cox(newton=True).gradient_hessian(rows, np.zeros((40, 1)), {"weight": np.ones(40)})
    for side in (0, 1):
        rows_here = X[:, 0] == side
        expected = -g[rows_here, 0].sum() / h[rows_here, 0].sum()
        assert model.predict(X[rows_here][:1])[0] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_cox_sorts_the_times_once_and_scores_each_round_at_its_predictions(weighted, monkeypatch):
    """Cox's risk sets come from the times sorted once per fit (Loss.fit_state), and a
    round's gradient and the previous round's training loss from one pass: the same bits
    as the two calls with the times sorted afresh, train_score_[t] the loss at the raw
    prediction round t left, and ten rounds' scores twenty's first ten."""
    from treekit_core import BoostingSurvival
    from treekit_core.builtins.losses import Cox

    X, y, event, time = _follow_up(150, seed=4)
    rows = np.column_stack([time, event.astype(float)])
    weight = np.random.default_rng(5).uniform(0.5, 2, 150) if weighted else None
    rng = np.random.default_rng(6)
    raw = rng.normal(size=(150, 1))
    # a subsample's round scores its own rows: weights unlike the gradient's, two passes
    subsampled = (weight if weighted else np.ones(150)) * (rng.random(150) < 0.7)
    for newton in (False, True):
        loss = Cox(newton=newton)
        state = {**loss.fit_state(rows, weight), **loss.round_state(rows, raw, weight)}
        for scored_weight in (weight, subsampled):
            fused = loss.gradient_hessian_scored(rows, raw, state, scored_weight, state)
            apart = (
                *loss.gradient_hessian(rows, raw, {"weight": weight}),
                loss.loss(rows, raw, scored_weight),
            )
            assert [np.asarray(a).tobytes() for a in fused] == [
                np.asarray(a).tobytes() for a in apart
            ]
    calls = []
    fit_state = Cox.fit_state
    monkeypatch.setattr(Cox, "fit_state", lambda self, *a: calls.append(1) or fit_state(self, *a))
    settings = dict(splitter="exhaustive", max_depth=2)
    twenty = BoostingSurvival(n_estimators=20, **settings).fit(X, y, sample_weight=weight)
    ten = BoostingSurvival(n_estimators=10, **settings).fit(X, y, sample_weight=weight)
    assert calls == [1, 1]
    assert twenty.train_score_[:10].tobytes() == ten.train_score_.tobytes()
    staged = list(twenty.staged_predict(X))
    assert len(staged) == twenty.train_score_.size == 20
    for predicted, score in zip(staged, twenty.train_score_, strict=True):
        assert score == Cox().loss(rows, predicted.reshape(-1, 1), weight)


def test_a_survival_model_file_keeps_its_baseline():
    from treekit_core import BoostingSurvival, ModelFileError

    X, y, _, _ = _follow_up(120)
    model = BoostingSurvival(splitter="exhaustive", n_estimators=5).fit(X, y)
    loaded = BoostingSurvival.from_json(model.to_json())
    np.testing.assert_array_equal(
        loaded.predict_survival_function(X, return_array=True),
        model.predict_survival_function(X, return_array=True),
    )
    payload = json.loads(model.to_json())
    payload["boosting"]["baseline"]["cumulative_hazard"][3] = -1.0
    with pytest.raises(ModelFileError, match="cumulative_hazard"):
        BoostingSurvival.from_json(json.dumps(payload))


def test_a_loss_for_other_rows_is_refused_by_name():
    from treekit_core import BoostingSurvival

    X, y, _, _ = _follow_up(50)
    with pytest.raises(ValueError, match="loss 'squared_error' reads numbers"):
        BoostingSurvival(loss="squared_error", splitter="exhaustive").fit(X, y)
    with pytest.raises(ValueError, match="loss 'cox' reads censored follow-up"):
        BoostingRegressor(loss="cox", splitter="exhaustive").fit(X, np.arange(50.0))


@pytest.mark.parametrize("subsample", [1.0, 0.7])
def test_the_training_loss_of_each_round_is_the_loss_at_its_predictions(subsample):
    """train_score_[t]: the log loss at the raw prediction round t left, of the rows in
    its subsample (taken in the next round's pass for the gradient, the last round's on
    its own: the same bits either way, so ten rounds' scores are twenty's first ten)."""
    from treekit_core.builtins.losses import LogLoss

    X, y = _data(400)
    labels = (y > 0.3).astype(int)
    settings = dict(splitter="exhaustive", max_depth=3, subsample=subsample, random_state=3)
    twenty = BoostingClassifier(n_estimators=20, **settings).fit(X, labels)
    ten = BoostingClassifier(n_estimators=10, **settings).fit(X, labels)
    assert twenty.train_score_[:10].tobytes() == ten.train_score_.tobytes()
    staged = list(twenty.staged_decision_function(X))
    assert len(staged) == twenty.train_score_.size == 20
    if subsample == 1.0:
        for raw, score in zip(staged, twenty.train_score_, strict=True):
            assert score == LogLoss().loss(labels, raw.reshape(-1, 1), None)
    else:  # each round's rows drawn afresh: the loss over all rows is not the score
        every_row = [LogLoss().loss(labels, raw.reshape(-1, 1), None) for raw in staged]
        assert not np.allclose(every_row, twenty.train_score_, rtol=1e-6)


def test_warm_start_adds_the_rounds_a_longer_fit_grows():
    """Ten rounds, then warm_start up to twenty: the fit of twenty rounds at once, bit for
    bit (the trees depend on the rounds before only)."""
    X, y = _data(200)
    once = BoostingRegressor(splitter="exhaustive", n_estimators=20).fit(X, y)
    warm = BoostingRegressor(splitter="exhaustive", n_estimators=10, warm_start=True).fit(X, y)
    warm.set_params(n_estimators=20).fit(X, y)
    assert warm.n_iter_ == 20
    np.testing.assert_array_equal(warm.predict(X), once.predict(X))
    np.testing.assert_array_equal(warm.train_score_, once.train_score_)
    with pytest.raises(ValueError, match="warm_start"):
        warm.set_params(n_estimators=5).fit(X, y)


def test_interaction_constraints_hold_on_every_path():
    """interaction_cst [[0, 1], [2]]: no tree of any round tests feature 2 on a path that
    tests 0 or 1."""
    X, y = _data(300, 3)
    y = y + X[:, 2] * X[:, 0]
    model = BoostingRegressor(
        splitter="exhaustive", n_estimators=15, interaction_cst=[[0, 1], [2]]
    ).fit(X, y)
    for trees in model.estimators_:
        tree = trees[0]
        parents = tree.parents()
        for leaf in np.flatnonzero(tree.is_leaf):
            used, node = set(), parents[leaf]
            while node >= 0:
                used.add(int(tree.feature[node]))
                node = parents[node]
            assert used <= {0, 1} or used <= {2}


def test_a_round_as_text_is_scikit_learn_s_tree():
    """export_text(round=r): scikit-learn's export_text of its r-th tree, line for line
    (its feature_i for our x[i], its value for what our leaf adds)."""
    from sklearn.tree import export_text

    X, y = _data(200, 2)
    theirs = GradientBoostingRegressor(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    ours = BoostingRegressor(splitter="exhaustive", n_estimators=3, max_depth=2).fit(X, y)
    for r in range(3):
        text = ours.export_text(round=r)
        expected = export_text(theirs.estimators_[r, 0], decimals=4)
        expected = expected.replace("feature_", "x[").replace(" <=", "] <=").replace(" >", "] >")
        assert text == expected.replace("value:", "add:")
    with pytest.raises(ValueError, match="round"):
        ours.export_text(round=3)


def test_the_kit_checks_every_built_in_loss_and_catches_broken_ones():
    """check_loss passes every built-in loss, and names what a broken one breaks: a
    gradient of the wrong sign, a negative hessian, a start that is not the best constant,
    a fused pass whose loss is not the loss."""
    import attrs

    from treekit_core.builtins import losses
    from treekit_core.testing import ConformanceError, check_loss

    for loss in losses.BUILTIN_LOSSES:
        check_loss(loss)

    @attrs.define(frozen=True)
    class WrongSign(losses.SquaredError):
        name = "wrong_sign"

        def gradient_hessian(self, y, raw, state):
            gradient, hessian = super().gradient_hessian(y, raw, state)
            return -gradient, hessian

    @attrs.define(frozen=True)
    class NegativeHessian(losses.SquaredError):
        name = "negative_hessian"

        def gradient_hessian(self, y, raw, state):
            gradient, hessian = super().gradient_hessian(y, raw, state)
            return gradient, -hessian

    @attrs.define(frozen=True)
    class OffCentre(losses.SquaredError):
        name = "off_centre"

        def initial_raw(self, y, weight, n_classes):
            return super().initial_raw(y, weight, n_classes) + 1.0

    @attrs.define(frozen=True)
    class StaleScore(losses.SquaredError):
        name = "stale_score"

        def gradient_hessian_scored(self, y, raw, state, weight, scored_state):
            gradient, hessian = self.gradient_hessian(y, raw, state)
            return gradient, hessian, self.loss(y, raw * 0.5, weight, scored_state)

    for broken, message in (
        (WrongSign, "not the derivative"),
        (StaleScore, "gradient_hessian_scored"),
        (NegativeHessian, "hessian must be >= 0"),
        (OffCentre, "not the best constant"),
    ):
        with pytest.raises(ConformanceError, match=message):
            check_loss(broken)


def _export_cases():
    X, y = _data(250, 4)
    X = X.astype(np.float32).astype(np.float64)
    counts = np.random.default_rng(2).poisson(np.exp(X[:, 0] / 2))
    return X, [
        BoostingRegressor(splitter="exhaustive", n_estimators=15).fit(X, y),
        BoostingRegressor(loss="poisson", splitter="exhaustive", n_estimators=15).fit(X, counts),
        BoostingClassifier(splitter="exhaustive", n_estimators=8).fit(X, y > 0),
        BoostingClassifier(splitter="exhaustive", n_estimators=8).fit(
            X, np.array(["a", "b", "c"])[np.digitize(y, [-1, 1])]
        ),
    ]


def test_shap_values_add_up_to_the_raw_prediction():
    """to_shap of a boosted model: TreeSHAP's values plus the expected value are the raw
    prediction (decision_function; a regressor's raw column), exactly."""
    shap = pytest.importorskip("shap")
    from treekit_core.export import to_shap

    X, models = _export_cases()
    for model in models:
        explainer = shap.TreeExplainer(to_shap(model))
        values = np.asarray(explainer.shap_values(X))
        raw = model._raw_predict(X)
        total = values.sum(axis=1) + explainer.expected_value
        np.testing.assert_allclose(total.reshape(raw.shape), raw, atol=1e-10)


def test_onnx_predicts_what_the_boosted_model_predicts():
    """to_onnx: onnxruntime's output on float32 rows equals predict / predict_proba to
    float32's precision, the labels exactly."""
    ort = pytest.importorskip("onnxruntime")
    from treekit_core.export import to_onnx

    X, models = _export_cases()
    for model in models:
        session = ort.InferenceSession(to_onnx(model).SerializeToString())
        outputs = session.run(None, {"X": X.astype(np.float32)})
        if hasattr(model, "classes_"):
            labels, proba = outputs
            np.testing.assert_allclose(proba, model.predict_proba(X), atol=1e-6)
            assert list(labels) == list(model.predict(X))
        else:
            expected = model.predict(X)
            np.testing.assert_allclose(outputs[0][:, 0], expected, rtol=1e-6, atol=1e-5)


def test_max_features_draws_features_at_every_node():
    """max_features=1: every split tests one feature drawn for its node, so with a seed
    the trees differ from all features' and repeat with the same seed; a bad value is
    refused by name."""
    X, y = _data(300)
    full = BoostingRegressor(splitter="exhaustive", n_estimators=5).fit(X, y)
    drawn = BoostingRegressor(
        splitter="exhaustive", n_estimators=5, max_features=1, random_state=3
    ).fit(X, y)
    again = BoostingRegressor(
        splitter="exhaustive", n_estimators=5, max_features=1, random_state=3
    ).fit(X, y)
    np.testing.assert_array_equal(drawn.predict(X), again.predict(X))
    assert not np.array_equal(drawn.predict(X), full.predict(X))
    used = {int(f) for trees in drawn.estimators_ for f in trees[0].feature[~trees[0].is_leaf]}
    assert len(used) > 1
    with pytest.raises(ValueError, match="max_features"):
        BoostingRegressor(splitter="exhaustive", max_features=9).fit(X, y)


def test_a_loss_typed_at_a_prompt_boosts():
    """An ElementwiseLoss whose row functions have no source file (typed at a prompt, made
    by exec) compiles for the process instead of failing to cache (the benchmark's first
    run crashed so): it boosts as the built-in squared error does."""
    from typing import ClassVar

    import attrs

    from treekit_core import ElementwiseLoss, hookimpl, registered

    functions = {}
    exec(  # noqa: S102 - the point: functions without a file
        "def row_gradient(y, raw, params):\n    return raw - y\n"
        "def row_hessian(y, raw, params):\n    return 1.0\n"
        "def row_loss(y, raw, params):\n    return (y - raw) ** 2\n",
        functions,
    )

    @attrs.define(frozen=True)
    class PromptSquaredError(ElementwiseLoss):
        name: ClassVar[str] = "prompt_squared_error"
        row_gradient = staticmethod(functions["row_gradient"])
        row_hessian = staticmethod(functions["row_hessian"])
        row_loss = staticmethod(functions["row_loss"])

        def initial_raw(self, y, weight, n_classes):
            return np.array([np.average(y, weights=weight)])

        def link(self, raw):
            return raw[:, 0]

    class Plugin:
        @hookimpl
        def treekit_losses(self):
            return [PromptSquaredError]

    X, y = _data(200)
    with registered(Plugin(), name="prompt-loss"):
        typed = BoostingRegressor(loss="prompt_squared_error", splitter="exhaustive")
        typed.set_params(n_estimators=5).fit(X, y, sample_weight=np.ones(200))
    built_in = BoostingRegressor(splitter="exhaustive", n_estimators=5).fit(X, y)
    np.testing.assert_allclose(typed.predict(X), built_in.predict(X), atol=1e-12)


@pytest.mark.parametrize("splitter", ["exhaustive", "histogram"])
def test_nominal_columns_are_asked_subset_questions(splitter):
    """A DataFrame's category column: the trees ask which categories go left (the shift
    of categories a and c is found in the first round), the model file keeps the
    categories, and new rows predict alike after a round trip."""
    import contextlib

    from treekit_core import registered

    pd = pytest.importorskip("pandas")
    plugin = contextlib.nullcontext()
    if splitter == "histogram":  # the core's tests start from the built-ins alone
        plugin = registered(pytest.importorskip("treekit_histogram"), name="treekit-histogram")
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {"c": pd.Categorical(rng.choice(list("abcde"), 400)), "x": rng.normal(size=400)}
    )
    y = np.where(frame["c"].isin(["a", "c"]), 2.0, 0.0) + frame["x"] + rng.normal(0, 0.2, 400)
    with plugin:
        model = BoostingRegressor(splitter=splitter, n_estimators=20).fit(frame, y)
        first = model.estimators_[0][0]
        assert first.question_of(0).name == "subset"
        assert "c in {b, d, e}" in model.export_text(round=0).splitlines()[0]
        loaded = BoostingRegressor.from_json(model.to_json())
        np.testing.assert_array_equal(loaded.predict(frame), model.predict(frame))
        assert model.score(frame, y) > 0.9


def test_a_row_of_weight_zero_is_a_removed_row():
    """Classifier and survival model: rows of weight 0 fit the model the other rows fit
    alone (their labels and follow-up dropped with them, in step)."""
    from treekit_core import BoostingSurvival
    from treekit_core.datasets import load_dataset

    X, y = _data(300, 4)
    labels = (y > 0).astype(int)
    weight = np.ones(300)
    weight[:50] = 0.0
    fit = lambda X, y, w: BoostingClassifier(splitter="exhaustive", n_estimators=10).fit(  # noqa: E731
        X, y, sample_weight=w
    )
    np.testing.assert_array_equal(
        fit(X, labels, weight).predict_proba(X),
        fit(X[50:], labels[50:], weight[50:]).predict_proba(X),
    )
    data = load_dataset("veteran")
    weight = np.ones(len(data.y))
    weight[:20] = 0.0
    survival = lambda X, y, w: BoostingSurvival(splitter="exhaustive", n_estimators=10).fit(  # noqa: E731
        X, y, sample_weight=w
    )
    np.testing.assert_array_equal(
        survival(data.X, data.y, weight).predict(data.X),
        survival(data.X[20:], data.y[20:], weight[20:]).predict(data.X),
    )


def test_a_frame_s_columns_are_kept_by_the_model_file():
    """Fitted on a DataFrame: the model file keeps the column labels, so the loaded model
    refuses a frame whose columns are in another order, naming them, as the fitted one
    does; a crafted file with the wrong number of labels is refused."""
    pd = pytest.importorskip("pandas")
    from treekit_core import ModelFileError

    X, y = _data(150, 3)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = BoostingRegressor(splitter="exhaustive", n_estimators=4).fit(frame, y)
    loaded = BoostingRegressor.from_json(model.to_json())
    np.testing.assert_array_equal(loaded.predict(frame), model.predict(frame))
    for fitted in (model, loaded):
        with pytest.raises(ValueError, match="feature names"):
            fitted.predict(frame[["c", "b", "a"]])
    payload = json.loads(model.to_json())
    payload["column_keys"] = ["a", "b"]
    with pytest.raises(ModelFileError, match="column_keys"):
        BoostingRegressor.from_json(json.dumps(payload))
