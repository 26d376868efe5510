"""ForestRegressor and quantiles from the same trees (issue 39): a single tree's quantiles
are its leaf's weighted training quantiles (by hand), a forest's are Meinshausen's (by
hand), and 80% intervals cover 80% of held-out rows."""

import pickle

import numpy as np
import pytest

from treekit_core import ForestRegressor, TreeRegressor
from treekit_core.datasets import load_dataset
from treekit_core.estimators.regression import weighted_quantiles


def by_hand(values, weights, q):
    """The smallest value whose cumulative weight share reaches q, written out."""
    order = np.argsort(values, kind="stable")
    values, weights = values[order], weights[order]
    share = np.cumsum(weights) / weights.sum()
    return np.array([values[np.flatnonzero(share >= p - 1e-12)[0]] for p in q])


def test_weighted_quantiles_are_numpys_inverted_cdf_with_unit_weights():
    rng = np.random.default_rng(0)
    for n in (1, 2, 7, 50):
        values = rng.normal(size=n).round(1)
        q = np.array([0.0, 0.1, 0.25, 0.5, 0.9, 1.0])
        np.testing.assert_array_equal(
            weighted_quantiles(values, np.ones(n), q),
            np.quantile(values, q, method="inverted_cdf"),
        )
        weights = rng.uniform(0.1, 3.0, n)
        np.testing.assert_array_equal(
            weighted_quantiles(values, weights, q), by_hand(values, weights, q)
        )


def test_a_trees_quantiles_are_its_leafs_weighted_training_quantiles():
    data = load_dataset("quakes")
    X, y = data.X, data.y
    weight = np.random.default_rng(1).uniform(0.5, 2.0, y.size)
    train, test = np.arange(700), np.arange(700, 1000)
    tree = TreeRegressor(min_samples_leaf=15).fit(X[train], y[train], sample_weight=weight[train])
    q = [0.1, 0.5, 0.9]
    predicted = tree.predict(X[test], quantiles=q)
    assert predicted.shape == (300, 3)
    leaves_train, leaves_test = tree.apply(X[train]), tree.apply(X[test])
    for i in range(0, 300, 7):
        members = leaves_train == leaves_test[i]
        expected = by_hand(y[train][members], weight[train][members], q)
        np.testing.assert_array_equal(predicted[i], expected)
    np.testing.assert_array_equal(tree.predict(X[test]), tree.predict(X[test], quantiles=None))


def test_a_forests_quantiles_are_meinshausens_by_hand():
    data = load_dataset("airquality", dropna=True)
    X, y = data.X, data.y
    forest = ForestRegressor(n_estimators=3, random_state=2, min_samples_leaf=5).fit(X, y)
    strata = np.zeros(y.size, dtype=np.int64)
    counts = [
        forest._drawn_counts(seeds, strata, 1, y.size)
        for seeds in forest._draw_seeds(forest._tree_seeds)
    ]
    leaves_train = forest.apply(X)
    q = [0.2, 0.5, 0.8]
    predicted = forest.predict(X[:20], quantiles=q)
    for i in range(20):
        share = np.zeros(y.size)
        for t in range(3):
            members = leaves_train[:, t] == leaves_train[i, t]
            share += np.where(members, counts[t], 0.0) / (counts[t][members].sum() * 3)
        np.testing.assert_array_equal(predicted[i], by_hand(y, share, q))


@pytest.mark.parametrize("name", ["airquality", "cu_summary"])
def test_a_quantile_forests_80_percent_intervals_cover_80_percent(name):
    """Pooled 5-fold cross-validation, 200 trees, min_samples_leaf=5, the other parameters
    the defaults, chosen before looking (the note reports the data sets with discrete
    responses, which over-cover: an interval's ends are observed values, ties inside)."""
    data = load_dataset(name)
    X, y = data.X, data.y
    nominal = data.categorical if data.categorical.any() else None
    fold = np.random.default_rng(0).permutation(y.size) % 5
    inside = np.zeros(y.size, dtype=bool)
    for k in range(5):
        train, test = fold != k, fold == k
        forest = ForestRegressor(
            n_estimators=200, random_state=0, min_samples_leaf=5, categorical_features=nominal
        ).fit(X[train], y[train])
        low, high = forest.predict(X[test], quantiles=[0.1, 0.9]).T
        inside[test] = (y[test] >= low) & (y[test] <= high)
    assert abs(inside.mean() - 0.8) <= 0.03


def test_one_tree_without_bootstrap_is_the_tree_regressor():
    data = load_dataset("quakes")
    X, y = data.X, data.y
    forest = ForestRegressor(n_estimators=1, bootstrap=False, max_features=None).fit(X, y)
    tree = TreeRegressor().fit(X, y)
    np.testing.assert_array_equal(forest.predict(X), tree.predict(X))
    np.testing.assert_array_equal(
        forest.predict(X[:50], quantiles=[0.3]), tree.predict(X[:50], quantiles=[0.3])
    )


def test_out_of_bag_r2_warm_start_and_round_trips():
    from sklearn.ensemble import RandomForestRegressor

    data = load_dataset("quakes")
    X, y = data.X, data.y
    forest = ForestRegressor(n_estimators=60, random_state=0, oob_score=True).fit(X, y)
    scored = ~np.isnan(forest.oob_prediction_)
    residual = ((y[scored] - forest.oob_prediction_[scored]) ** 2).sum()
    assert forest.oob_score_ == pytest.approx(
        1 - residual / ((y[scored] - y[scored].mean()) ** 2).sum()
    )
    theirs = RandomForestRegressor(n_estimators=60, random_state=0, oob_score=True).fit(X, y)
    assert abs(forest.oob_score_ - theirs.oob_score_) < 0.03
    warm = ForestRegressor(n_estimators=3, random_state=5, warm_start=True).fit(X, y)
    warm.set_params(n_estimators=6).fit(X, y)
    cold = ForestRegressor(n_estimators=6, random_state=5).fit(X, y)
    np.testing.assert_array_equal(warm.predict(X), cold.predict(X))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(forest)).predict(X), forest.predict(X))
    again = ForestRegressor.from_json(forest.to_json())
    np.testing.assert_array_equal(again.predict(X), forest.predict(X))
    with pytest.raises(ValueError, match="quantiles need the training responses"):
        again.predict(X, quantiles=[0.5])
    assert forest.score(X, y) > 0.8 and not hasattr(forest, "predict_proba")


def test_quantile_refusals_name_what_is_wrong():
    data = load_dataset("quakes")
    X, y = data.X, data.y
    tree = TreeRegressor(max_depth=3).fit(X, y)
    for bad in ([1.5], [], [[0.5]], ["a"]):
        with pytest.raises(ValueError, match="quantiles must be numbers in \\[0, 1\\]"):
            tree.predict(X, quantiles=bad)
    loaded = TreeRegressor.from_json(tree.to_json())  # written without its leaf responses
    with pytest.raises(ValueError, match="quantiles need the training responses"):
        loaded.predict(X, quantiles=[0.5])
    with pytest.raises(ValueError, match="reads class labels"):
        ForestRegressor(criterion="gini").fit(X, y)


def test_exports_of_regressors_predict_what_treekit_predicts():
    """to_sklearn gives a DecisionTreeRegressor with treekit's tree; SHAP values of a tree
    and of a forest add up to the prediction."""
    shap = pytest.importorskip("shap")
    from treekit_core.export import to_shap, to_sklearn

    data = load_dataset("quakes")
    X = data.X.astype(np.float32).astype(np.float64)  # scikit-learn compares in float32
    y = data.y
    tree = TreeRegressor(min_samples_leaf=10).fit(X, y)
    twin = to_sklearn(tree)
    assert type(twin).__name__ == "DecisionTreeRegressor"
    np.testing.assert_array_equal(twin.predict(X), tree.predict(X))
    np.testing.assert_array_equal(twin.apply(X), tree.apply(X))
    forest = ForestRegressor(n_estimators=5, random_state=0, min_samples_leaf=10).fit(X, y)
    for model in (tree, forest):
        explainer = shap.TreeExplainer(to_shap(model))
        values = explainer.shap_values(X[:200])
        total = (
            np.asarray(values).reshape(200, -1).sum(axis=1) + np.ravel(explainer.expected_value)[0]
        )
        np.testing.assert_allclose(total, model.predict(X[:200]), rtol=1e-9, atol=1e-9)


def test_onnx_export_of_regressors_predicts_what_treekit_predicts():
    pytest.importorskip("onnx")
    onnxruntime = pytest.importorskip("onnxruntime")
    from treekit_core.export import to_onnx

    data = load_dataset("cu_summary")
    X, y = data.X.astype(np.float32).astype(np.float64), data.y
    complete = ~np.isnan(X).any(axis=1)
    tree = TreeRegressor(min_samples_leaf=5, categorical_features=data.categorical).fit(X, y)
    forest = ForestRegressor(
        n_estimators=4, random_state=0, min_samples_leaf=5, categorical_features=data.categorical
    ).fit(X, y)
    for model in (tree, forest):
        with pytest.warns(UserWarning, match="missing"):
            proto = to_onnx(model)
        session = onnxruntime.InferenceSession(proto.SerializeToString())
        (out,) = session.run(None, {"X": X[complete].astype(np.float32)})
        np.testing.assert_allclose(out[:, 0], model.predict(X[complete]), rtol=1e-6)


def test_dtreeviz_draws_a_regression_tree():
    pytest.importorskip("dtreeviz")
    from treekit_core.export import dtreeviz_model

    data = load_dataset("quakes")
    model = TreeRegressor(max_depth=2).fit(data.X, data.y)
    rendered = dtreeviz_model(model, data.X, data.y, target_name="mag").view()
    assert rendered.dot.lstrip().startswith("digraph")
    assert rendered.dot.count("leaf") >= model.get_n_leaves()


def test_quantiles_with_missing_values_mix_both_branches_by_c45_shares():
    """A row missing the tested value reaches both leaves with the node's training shares
    (as its mean does), and training rows missing it are counted in both leaves with the
    same shares: the quantile by hand on a one-split tree."""
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 10, 120)
    y = np.where(x > 5, 10.0, 0.0) + rng.normal(0, 1, 120)
    x[::9] = np.nan
    X = x[:, None]
    tree = TreeRegressor(max_depth=1).fit(X, y)
    shares = tree.tree_.child_shares[:2]  # of the root's two branches
    left = X[:, 0] <= tree.tree_.threshold[0]
    missing = np.isnan(X[:, 0])
    membership = np.column_stack(
        [np.where(missing, shares[0], left), np.where(missing, shares[1], ~left & ~missing)]
    )
    totals = membership.sum(axis=0)
    q = np.array([0.1, 0.5, 0.9])
    weights = (membership * (shares / totals)).sum(axis=1)  # a sample missing x
    got = tree.predict(np.array([[np.nan]]), quantiles=q)[0]
    np.testing.assert_array_equal(got, by_hand(y, weights, q))
    mean = tree.predict(np.array([[np.nan]]))[0]
    assert mean == pytest.approx((weights * y).sum() / weights.sum(), rel=1e-12)


def test_a_forest_presorts_on_its_jobs(monkeypatch):
    """Splitter.share_across_trees gets the forest's threads: the exhaustive splitter's
    presort of X, once a fit for every tree, runs on ``n_jobs`` threads (every usable
    CPU for -1); the forests are the same."""
    import treekit_core.kernels.builder as builder
    from treekit_core.kernels.usable_cpus import fit_threads

    original, calls = builder.presort, []

    def recorded(X, n_threads=1):
        calls.append(n_threads)
        return original(X, n_threads)

    monkeypatch.setattr(builder, "presort", recorded)
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 4))
    y = X[:, 1] - X[:, 2] + rng.normal(0, 0.3, 300)
    make = lambda jobs: ForestRegressor(n_estimators=4, n_jobs=jobs, random_state=0)  # noqa: E731
    forests = []
    for jobs in (2, -1):
        calls.clear()
        forests.append(make(jobs).fit(X, y))
        assert calls == [fit_threads(jobs)], jobs
    np.testing.assert_array_equal(forests[0].predict(X), forests[1].predict(X))
