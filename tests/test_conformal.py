"""Prediction intervals and prediction sets (issue 63): split conformal, conformalised
quantile regression, the jackknife+-after-bootstrap and adaptive prediction sets
(treekit_core/estimators/conformal.py), against hand computations, and their coverage by
simulation with its Monte Carlo error stated."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_core import ForestClassifier, ForestRegressor, TreeClassifier, TreeRegressor
from treekit_core.estimators.conformal import (
    adaptive_set_scores,
    adaptive_sets,
    conformal_quantile,
    lower_conformal_quantile,
    upper_conformal_quantile,
)


def test_the_conformal_quantile_is_the_ceil_of_1_minus_alpha_times_n_plus_1_th_smallest():
    scores = np.array([5.0, 1.0, 4.0, 2.0, 3.0, 9.0, 7.0, 8.0, 6.0])  # n = 9
    assert conformal_quantile(scores, 0.1) == 9.0  # ceil(0.9 * 10) = 9th
    assert conformal_quantile(scores, 0.2) == 8.0  # ceil(0.8 * 10) = 8th
    assert conformal_quantile(scores, 0.05) == math.inf  # ceil(9.5) = 10th: past n
    values = np.array([[3.0, 1.0, 2.0, 5.0, 4.0]])  # n = 5
    assert lower_conformal_quantile(values, 0.2)[0] == 1.0  # floor(0.2 * 6) = 1st
    assert lower_conformal_quantile(values, 0.1)[0] == -math.inf  # floor(0.6) = 0
    assert upper_conformal_quantile(values, 0.2)[0] == 5.0  # ceil(4.8) = 5th


def test_adaptive_set_scores_and_sets_by_hand():
    proba = np.array([[0.2, 0.5, 0.3], [0.4, 0.4, 0.2]])
    # row 0, label 2 (ranked second): 0.5 above it, plus u x 0.3; row 1, label 1: tied
    # with label 0, which ranks first by column, so 0.4 above it, plus u x 0.4
    scores = adaptive_set_scores(proba, np.array([2, 1]), np.array([0.5, 0.25]))
    np.testing.assert_allclose(scores, [0.5 + 0.15, 0.4 + 0.1])
    sets = adaptive_sets(proba, np.array([0.5, 0.25]), threshold=0.65)
    # row 0: label 1 scores 0.25, label 2 0.65, label 0 0.9; row 1: 0.1, 0.5, 0.85
    np.testing.assert_array_equal(sets, [[False, True, True], [True, True, False]])


def _noisy(n, rng, noise="normal"):
    X = rng.uniform(-2, 2, size=(n, 3))
    scale = 0.5 + np.abs(X[:, 1])  # heteroscedastic
    draw = rng.normal(size=n) if noise == "normal" else rng.standard_t(2, size=n)
    return X, np.sin(2 * X[:, 0]) + X[:, 2] + scale * draw


def test_split_conformal_interval_by_hand():
    rng = np.random.default_rng(0)
    X, y = _noisy(200, rng)
    X_c, y_c = _noisy(19, rng)
    model = TreeRegressor(max_depth=3).fit(X, y, conformal_rows=(X_c, y_c))
    residuals = np.sort(np.abs(y_c - model.predict(X_c)))
    q = residuals[math.ceil(0.9 * 20) - 1]  # the 18th of 19
    interval = model.predict_interval(X[:5], alpha=0.1)
    np.testing.assert_array_equal(interval[:, 0], model.predict(X[:5]) - q)
    np.testing.assert_array_equal(interval[:, 1], model.predict(X[:5]) + q)


def test_cqr_interval_by_hand():
    rng = np.random.default_rng(1)
    X, y = _noisy(400, rng)
    X_c, y_c = _noisy(39, rng)
    model = TreeRegressor(min_samples_leaf=30).fit(X, y, conformal_rows=(X_c, y_c))
    quantiles = model.predict(X_c, quantiles=[0.1, 0.9])
    scores = np.maximum(quantiles[:, 0] - y_c, y_c - quantiles[:, 1])
    q = np.sort(scores)[math.ceil(0.8 * 40) - 1]
    interval = model.predict_interval(X[:7], alpha=0.2, method="cqr")
    raw = model.predict(X[:7], quantiles=[0.1, 0.9])
    np.testing.assert_array_equal(interval, raw + [-q, q])
    np.testing.assert_array_equal(model.predict_interval(X[:7], 0.2, "quantile"), raw)


def test_jackknife_plus_after_bootstrap_by_brute_force():
    rng = np.random.default_rng(2)
    X, y = _noisy(60, rng)
    forest = ForestRegressor(n_estimators=15, max_depth=3, oob_score=True, random_state=5)
    forest.fit(X, y)
    X_new = X[:4] + 0.1
    leaves_new, leaves_train = forest.apply(X_new), forest.apply(X)  # rows x trees
    trees = forest.estimators_
    new = np.array([tree.value[leaves_new[:, b], 0] for b, tree in enumerate(trees)])
    train = np.array([tree.value[leaves_train[:, b], 0] for b, tree in enumerate(trees)])
    zeros = np.zeros(60, dtype=np.int64)
    drawn = np.array(
        [forest._drawn_counts(s, zeros, 1, 60) for s in forest._draw_seeds(forest._tree_seeds)]
    )
    lows, highs = [], []
    for i in range(60):
        unseen = np.flatnonzero(drawn[:, i] == 0)
        if not unseen.size:
            continue
        residual = abs(y[i] - train[unseen, i].mean())
        assert residual == pytest.approx(abs(y[i] - forest.oob_prediction_[i]), rel=1e-12)
        mu = new[unseen].mean(axis=0)
        lows.append(mu - residual)
        highs.append(mu + residual)
    lows, highs = np.array(lows).T, np.array(highs).T
    n = lows.shape[1]
    expected_low = np.sort(lows, axis=1)[:, math.floor(0.2 * (n + 1)) - 1]
    expected_high = np.sort(highs, axis=1)[:, math.ceil(0.8 * (n + 1)) - 1]
    interval = forest.predict_interval(X_new, alpha=0.2)
    np.testing.assert_allclose(interval[:, 0], expected_low, rtol=1e-12)
    np.testing.assert_allclose(interval[:, 1], expected_high, rtol=1e-12)


def test_conformal_fraction_holds_rows_out_of_training():
    rng = np.random.default_rng(3)
    X, y = _noisy(100, rng)
    model = TreeRegressor(conformal_fraction=0.25, random_state=0).fit(X, y)
    X_c, y_c = model._conformal_rows
    assert model.tree_.weight[0] == 75 and len(y_c) == 25
    held = [int(np.flatnonzero((X == row).all(axis=1))[0]) for row in X_c]
    np.testing.assert_array_equal(y[held], y_c)
    again = TreeRegressor(conformal_fraction=0.25, random_state=0).fit(X, y)
    np.testing.assert_array_equal(again._conformal_rows[1], y_c)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda m, X: m.predict_interval(X, alpha=0.0), "alpha"),
        (lambda m, X: m.predict_interval(X, method="bands"), "method must be one of"),
    ],
)
def test_bad_interval_arguments_are_refused_by_name(call, message):
    rng = np.random.default_rng(4)
    X, y = _noisy(50, rng)
    model = TreeRegressor(conformal_fraction=0.2, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match=message):
        call(model, X)


def test_intervals_without_conformal_rows_say_how_to_get_them():
    rng = np.random.default_rng(5)
    X, y = _noisy(50, rng)
    with pytest.raises(ValueError, match="conformal_rows=\\(X_c, y_c\\)"):
        TreeRegressor().fit(X, y).predict_interval(X)
    with pytest.raises(ValueError, match="conformal_rows=\\(X_c, y_c\\)"):
        TreeClassifier().fit(X, y > 0).predict_set(X)
    with pytest.raises(ValueError, match="give one"):
        TreeRegressor(conformal_fraction=0.2).fit(X, y, conformal_rows=(X, y))
    with pytest.raises(ValueError, match="conformal_fraction"):
        TreeRegressor(conformal_fraction=1.0).fit(X, y)
    with pytest.raises(ValueError, match="X_c has 50 rows and y_c 3"):
        TreeRegressor().fit(X, y, conformal_rows=(X, y[:3]))
    with pytest.raises(ValueError, match="labels the model does not know"):
        TreeClassifier().fit(X, y > 0, conformal_rows=(X, np.full(50, 7))).predict_set(X)


def test_prediction_sets_are_the_same_for_a_fixed_seed():
    rng = np.random.default_rng(6)
    X, y = _noisy(300, rng)
    labels = np.digitize(y, [-1, 1])
    model = TreeClassifier(max_depth=3, conformal_fraction=0.3, random_state=2).fit(X, labels)
    first = model.predict_set(X, alpha=0.1)
    assert first.shape == (300, 3) and first.dtype == bool
    np.testing.assert_array_equal(first, model.predict_set(X, alpha=0.1))


def _coverage(make, n, noise, repeats, method, alpha=0.1, n_test=1000):
    covered, widths = [], []
    for r in range(repeats):
        rng = np.random.default_rng(10_000 * n + r + (0 if noise == "normal" else 7))
        X, y = _noisy(n, rng, noise)
        X_test, y_test = _noisy(n_test, rng, noise)
        interval = make(r).fit(X, y).predict_interval(X_test, alpha, method)
        covered.append(np.mean((interval[:, 0] <= y_test) & (y_test <= interval[:, 1])))
        widths.append(np.median(interval[:, 1] - interval[:, 0]))
    covered = np.array(covered)
    return covered.mean(), covered.std(ddof=1) / math.sqrt(repeats), float(np.median(widths))


#: (n, repeats, model): forests on the smaller sets, a tree on 20 000 rows (the promise
#: holds for any model; only the width depends on it).
_DESIGNS = [
    (
        200,
        150,
        lambda r: ForestRegressor(20, min_samples_leaf=5, conformal_fraction=0.3, random_state=r),
    ),
    (
        2000,
        30,
        lambda r: ForestRegressor(20, min_samples_leaf=10, conformal_fraction=0.3, random_state=r),
    ),
    (
        20_000,
        6,
        lambda r: TreeRegressor(min_samples_leaf=50, conformal_fraction=0.3, random_state=r),
    ),
]


@pytest.mark.parametrize("method", ["conformal", "cqr"])
def test_conformal_and_cqr_intervals_cover_1_minus_alpha(method):
    """Over 3 sizes x 2 noises (heteroscedastic normal; t with 2 degrees of freedom,
    heavy tails), 1000 held-out rows each (CQR: half the repeats): every design's mean
    coverage is at least 0.9 less 3 Monte Carlo standard errors (the standard error of
    the mean over its repeats: about 0.003-0.005 at 200 rows, 0.002 at 2000 and 20 000),
    and the mean over the
    designs is within 0.89-0.91 (split conformal's expectation with 60, 600 and 6000
    conformal rows: 0.902, 0.900, 0.900)."""
    means = []
    for n, repeats, make in _DESIGNS:
        if method == "cqr":  # a forest's quantiles are walked leaf by leaf in Python
            repeats = max(6, repeats // 2)
        for noise in ("normal", "t2"):
            mean, error, _ = _coverage(make, n, noise, repeats, method)
            assert mean >= 0.9 - 3 * error, (n, noise, mean, error)
            means.append(mean)
    assert 0.89 <= np.mean(means) <= 0.91, means


def test_the_jackknife_plus_after_bootstrap_covers_about_1_minus_alpha():
    """The guarantee is 1 - 2 alpha; Kim et al. measure about 1 - alpha. 40 data sets of
    300 rows, 1000 held-out rows each: the mean coverage is at least 0.9 less 3 Monte
    Carlo standard errors (about 0.004) and at most 0.95."""
    mean, error, _ = _coverage(
        lambda r: ForestRegressor(30, min_samples_leaf=5, oob_score=True, random_state=r),
        300,
        "normal",
        40,
        "conformal",
        n_test=300,
    )
    assert 0.9 - 3 * error <= mean <= 0.95, (mean, error)


@pytest.mark.parametrize("n, repeats", [(300, 100), (3000, 20)])
def test_prediction_sets_cover_1_minus_alpha(n, repeats):
    """Three classes from noisy thresholds; 30% of the rows calibrate; 1000 held-out rows.
    Randomised adaptive sets cover exactly 1 - alpha in expectation (up to 1 / (n_c + 1)):
    the mean coverage is within 0.9 -+ 3 Monte Carlo standard errors (about 0.003) and
    0.01."""
    covered = []
    for r in range(repeats):
        rng = np.random.default_rng(500 + n + r)
        X, y = _noisy(n + 1000, rng)
        labels = np.digitize(y, [-1.0, 1.0])
        model = ForestClassifier(
            20, min_samples_leaf=5, conformal_fraction=0.3, random_state=r
        ).fit(X[:n], labels[:n])
        sets = model.predict_set(X[n:], alpha=0.1)
        covered.append(sets[np.arange(1000), labels[n:]].mean())
    mean, error = np.mean(covered), np.std(covered, ddof=1) / math.sqrt(repeats)
    assert abs(mean - 0.9) <= 3 * error + 0.01, (mean, error)


def test_model_files_and_pickles_keep_the_conformal_rows_of_a_frame_with_categories():
    import pickle

    import pandas as pd

    rng = np.random.default_rng(7)
    X, y = _noisy(300, rng)
    frame = pd.DataFrame(
        {"a": X[:, 0], "b": X[:, 1], "c": pd.Categorical(rng.choice(list("xyz"), 300))}
    )
    y = y + (frame["c"] == "y").to_numpy()
    for model in (
        TreeRegressor(min_samples_leaf=20, conformal_fraction=0.3, random_state=0),
        ForestRegressor(10, min_samples_leaf=10, conformal_fraction=0.3, random_state=0),
    ):
        model.fit(frame, y)
        for method in ("conformal", "cqr"):
            interval = model.predict_interval(frame, 0.1, method)
            again = pickle.loads(pickle.dumps(model)).predict_interval(frame, 0.1, method)
            np.testing.assert_array_equal(again, interval)
        loaded = type(model).from_json(model.to_json(leaf_responses=True))
        for method in ("conformal", "cqr"):
            np.testing.assert_array_equal(
                loaded.predict_interval(frame, 0.1, method),
                model.predict_interval(frame, 0.1, method),
            )
    labels = np.digitize(y, [-1.0, 1.0])
    classifier = ForestClassifier(10, conformal_fraction=0.3, random_state=3).fit(frame, labels)
    loaded = ForestClassifier.from_json(classifier.to_json())
    np.testing.assert_array_equal(loaded.predict_set(frame), classifier.predict_set(frame))


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda rows: rows.update(X=[[1.0, 2.0]]), "rows of 3 numbers"),
        (lambda rows: rows.update(y=rows["y"][:-1]), "one finite number per row"),
        (lambda rows: rows.update(y=["nan"] * len(rows["y"])), "one finite number per row"),
        (lambda rows: rows.update(X=[["inf", 0.0, 0.0]] * len(rows["y"])), "finite numbers"),
        (lambda rows: rows.pop("y"), "an object with X and y"),
    ],
)
def test_a_model_files_conformal_rows_are_checked_before_use(change, message):
    import json

    from treekit_core.estimators.model_file import ModelFileError

    rng = np.random.default_rng(8)
    X, y = _noisy(60, rng)
    payload = json.loads(TreeRegressor(conformal_fraction=0.3, random_state=0).fit(X, y).to_json())
    change(payload["conformal_rows"])
    with pytest.raises(ModelFileError, match=message):
        TreeRegressor.from_json(json.dumps(payload))


def test_a_classifier_files_conformal_labels_must_be_class_positions():
    import json

    from treekit_core.estimators.model_file import ModelFileError

    rng = np.random.default_rng(9)
    X, y = _noisy(60, rng)
    model = TreeClassifier(conformal_fraction=0.3, random_state=0).fit(X, y > 0)
    payload = json.loads(model.to_json())
    payload["conformal_rows"]["y"][0] = 2
    with pytest.raises(ModelFileError, match="positions in classes"):
        TreeClassifier.from_json(json.dumps(payload))


def test_a_boosted_regressor_calibrates_with_conformal_rows():
    from treekit_core import BoostingRegressor

    rng = np.random.default_rng(10)
    X, y = _noisy(300, rng)
    X_c, y_c = _noisy(99, rng)
    model = BoostingRegressor(n_estimators=20).fit(X, y, conformal_rows=(X_c, y_c))
    q = np.sort(np.abs(y_c - model.predict(X_c)))[math.ceil(0.9 * 100) - 1]
    with pytest.raises(ValueError, match="does not predict; use method='conformal'"):
        model.predict_interval(X[:5], method="cqr")
    np.testing.assert_allclose(
        model.predict_interval(X[:5]),
        np.column_stack([model.predict(X[:5]) - q, model.predict(X[:5]) + q]),
        rtol=1e-12,
    )


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    bootstrap=st.booleans(),
    weighted=st.booleans(),
    trees=st.integers(1, 8),
)
def test_compiled_forest_quantiles_equal_the_python_loop(seed, bootstrap, weighted, trees):
    """What CQR reads: kernels/leaf_quantiles.py against RegressorFamily._quantiles's
    loop, bit for bit (rounded responses: many ties; whole and fractional weights)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(150, 3))
    y = np.round(X[:, 0] + rng.normal(size=150), 1)
    weight = rng.integers(1, 4, 150) * (0.5 if seed % 2 else 1.0) if weighted else None
    forest = ForestRegressor(
        trees, bootstrap=bootstrap, max_features=0.7, min_samples_leaf=3, random_state=seed
    ).fit(X, y, sample_weight=weight)
    q = np.array([0.0, 0.05, 1 / 3, 0.5, 0.95, 1.0])
    X_new = rng.normal(size=(40, 3))
    with forest._checked_for_predict(X_new) as checked:
        loop = forest._quantiles(checked, q, forest._leaf_responses, compiled=False)
    np.testing.assert_array_equal(forest.predict(X_new, quantiles=q), loop)


def test_a_boosted_classifiers_prediction_sets_cover_1_minus_alpha():
    """30 data sets of 400 rows (30% calibrate), three classes, 1000 held-out rows: the
    mean coverage within 0.9 -+ (3 Monte Carlo standard errors + 0.01)."""
    from treekit_core import BoostingClassifier

    covered = []
    for r in range(30):
        rng = np.random.default_rng(900 + r)
        X, y = _noisy(1400, rng)
        labels = np.digitize(y, [-1.0, 1.0])
        X_c, y_c = X[280:400], labels[280:400]
        model = BoostingClassifier(n_estimators=30, random_state=r)
        model.fit(X[:280], labels[:280], conformal_rows=(X_c, y_c))
        sets = model.predict_set(X[400:], alpha=0.1)
        covered.append(sets[np.arange(1000), labels[400:]].mean())
    mean, error = np.mean(covered), np.std(covered, ddof=1) / math.sqrt(30)
    assert abs(mean - 0.9) <= 3 * error + 0.01, (mean, error)
