"""Soft search, soft propagation and soft evaluation (Nunes et al.)."""

from typing import ClassVar

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_core import Criterion, TreeClassifier, hookimpl, registered
from treekit_core.datasets import load_dataset
from treekit_soft_search.kernels import grid_for, sample_increments, soft_scan


def grid_data(seed=4, n=80):
    """Values on a 0.1 grid (gaps far wider than a tiny sigma's window), positive means."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(5.0, 1.0, size=(n, 3)), 1)
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(0, 0.5, size=n) > 7.5).astype(int)
    return X, y


def leaf_partition(model, X):
    leaves = model.apply(X)
    return sorted(tuple(np.flatnonzero(leaves == leaf)) for leaf in np.unique(leaves))


def test_soft_search_tends_to_exhaustive_partition_as_u_vanishes():
    X, y = grid_data()
    exact = TreeClassifier(criterion="entropy", min_samples_leaf=3).fit(X, y)
    soft = TreeClassifier(
        criterion="entropy",
        min_samples_leaf=3,
        splitter="soft_search",
        splitter_params={"u": 1e-4, "max_candidates": None},
    ).fit(X, y)
    np.testing.assert_array_equal(soft.tree_.feature, exact.tree_.feature)
    assert leaf_partition(soft, X) == leaf_partition(exact, X)
    assert not np.array_equal(
        soft.tree_.threshold, exact.tree_.threshold
    )  # grid points, not midpoints


def test_soft_propagation_tends_to_hard_as_u_vanishes():
    data = load_dataset("haberman")
    hard = TreeClassifier(criterion="entropy", min_samples_leaf=5).fit(data.X, data.y)
    soft = TreeClassifier(
        criterion="entropy", min_samples_leaf=5, propagator="soft", propagator_params={"u": 1e-9}
    ).fit(data.X, data.y)
    for field in ("feature", "threshold", "n_samples"):
        np.testing.assert_array_equal(getattr(soft.tree_, field), getattr(hard.tree_, field))
    np.testing.assert_allclose(soft.tree_.statistics, hard.tree_.statistics, atol=1e-9)


def test_soft_evaluation_tends_to_hard_as_u_vanishes():
    data = load_dataset("pima")
    hard = TreeClassifier(max_depth=5).fit(data.X, data.y)
    soft = TreeClassifier(max_depth=5, evaluator="soft", evaluator_params={"u": 1e-9}).fit(
        data.X, data.y
    )
    np.testing.assert_allclose(soft.predict_proba(data.X), hard.predict_proba(data.X), atol=1e-9)
    wide = TreeClassifier(max_depth=5, evaluator="soft", evaluator_params={"u": 0.2}).fit(
        data.X, data.y
    )
    proba = wide.predict_proba(data.X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.abs(proba - hard.predict_proba(data.X)).max() > 0.05


@settings(max_examples=100, deadline=None)
@given(st.floats(-50, 50), st.floats(0.01, 5.0), st.floats(1.0, 4.0), st.floats(1.0, 8.0))
def test_density_increments_of_a_sample_sum_to_one(x, sigma, window, resolution):
    values = np.array([x - 3.0, x, x + 7.0])
    low, delta, count = grid_for(values, sigma, window, resolution, 0)
    out = np.zeros(int(np.ceil(2 * window * resolution)) + 3)
    sample_increments(x, sigma, window, low, delta, int(count), out)
    assert out.sum() == pytest.approx(1.0, abs=1e-12)
    assert (out >= -1e-15).all()


def _scan(n, seed=0, sigma=0.5):
    rng = np.random.default_rng(seed)
    values = np.sort(rng.uniform(0.0, 10.0, size=n))
    values[0], values[-1] = 0.0, 10.0  # the same range whatever n is
    classes = (values > 5).astype(int)
    weights = rng.uniform(0.5, 2.0, size=n)
    weighted = np.zeros((n, 2))
    weighted[np.arange(n), classes] = weights
    from treekit_core.builtins import Entropy

    criterion = Entropy()
    sums = weighted.sum(axis=0)
    parent = criterion.node_impurity(sums, weights.sum())
    result = soft_scan(
        criterion.compiled_impurity(),
        np.zeros(1),
        values,
        weighted,
        weights,
        sums,
        weights.sum(),
        parent,
        sigma,
        3.0,
        4.0,
        0,
        1,
        0.0,
        0.0,
    )[:3]
    return result, grid_for(values, sigma, 3.0, 4.0, 0)


def test_evaluations_per_feature_equal_the_grid_and_do_not_grow_with_n():
    (_, threshold_small, evaluations_small), grid = _scan(50)
    (_, threshold_large, evaluations_large), _ = _scan(20000)
    assert evaluations_small == evaluations_large == int(grid[2])
    assert abs(threshold_small - 5) < 1.0 and abs(threshold_large - 5) < 0.3


def test_candidate_cap_bounds_the_grid():
    values = np.linspace(1.0, 1000.0, 50)
    assert grid_for(values, 0.01, 3.0, 4.0, 500)[2] == 500
    assert grid_for(values, 0.01, 3.0, 4.0, 0)[2] > 100_000


def test_toy_clean_data_soft_search_picks_zero_where_c45_picks_minus_one():
    X = np.array([[-3.0], [-1.0], [1.0], [3.0]])
    y = ["A", "A", "B", "B"]
    soft = TreeClassifier(
        criterion="entropy", splitter="soft_search", splitter_params={"sigma": [1.0]}, max_depth=1
    ).fit(X, y)
    c45 = TreeClassifier(criterion="entropy", splitter="c45", max_depth=1).fit(X, y)
    assert soft.tree_.threshold[0] == pytest.approx(0.0, abs=1e-12)
    assert c45.tree_.threshold[0] == -1.0


def test_toy_noisy_data_soft_search_with_sigma_two_picks_near_zero():
    X = np.array([[-3.0], [0.5], [-0.5], [3.0]])
    y = ["A", "A", "B", "B"]
    soft = TreeClassifier(
        criterion="entropy", splitter="soft_search", splitter_params={"sigma": [2.0]}, max_depth=1
    ).fit(X, y)
    exhaustive = TreeClassifier(criterion="entropy", max_depth=1).fit(X, y)
    assert abs(soft.tree_.threshold[0]) < 0.1
    assert (
        abs(exhaustive.tree_.threshold[0]) > 1.0
    )  # the exact search sits on a plateau away from 0


def test_soft_propagation_leaves_are_less_extreme():
    data = load_dataset("wdbc")
    hard = TreeClassifier(criterion="entropy", max_depth=1).fit(data.X, data.y)
    soft = TreeClassifier(
        criterion="entropy", max_depth=1, propagator="soft", propagator_params={"u": 0.1}
    ).fit(data.X, data.y)
    assert (
        soft.tree_.feature[0] == hard.tree_.feature[0]
        and soft.tree_.threshold[0] == hard.tree_.threshold[0]
    )
    leaves = hard.tree_.is_leaf
    assert (soft.tree_.value[leaves].max(axis=1) < hard.tree_.value[leaves].max(axis=1)).all()
    assert soft.tree_.weight[leaves].sum() == pytest.approx(data.X.shape[0])  # mass is conserved


def asymmetric(class_sums, total_weight, params):
    if total_weight <= 0.0:
        return 0.0
    h = 0.0
    for k in range(class_sums.shape[0]):
        p = class_sums[k] / total_weight
        w = params[k]
        h += p * (1.0 - p) / ((1.0 - 2.0 * w) * p + w * w)
    return h


@attrs.define(slots=False)
class Asymmetric(Criterion):
    name: ClassVar[str] = "test_asymmetric"
    impurity = staticmethod(asymmetric)

    def impurity_params(self, n_classes):
        return np.full(n_classes, 1.0 / n_classes) if n_classes > 2 else np.array([0.8, 0.2])


class CriterionPlugin:
    @hookimpl
    def treekit_criteria(self):
        return [Asymmetric]


@pytest.mark.parametrize("pruner", ["none", "pessimistic", "cost_complexity"])
def test_soft_search_and_soft_propagation_combined_with_any_criterion_and_pruner(pruner):
    data = load_dataset("haberman")
    with registered(CriterionPlugin(), name="asym"):
        for criterion in ("entropy", "gini", "test_asymmetric"):
            model = TreeClassifier(
                criterion=criterion,
                splitter="soft_search",
                propagator="soft",
                evaluator="soft",
                pruner=pruner,
                min_samples_leaf=5,
                splitter_params={"u": 0.1},
                propagator_params={"u": 0.1},
                evaluator_params={"u": 0.1},
            ).fit(data.X, data.y)
            proba = model.predict_proba(data.X)
            np.testing.assert_allclose(proba.sum(axis=1), 1.0)
            assert model.score(data.X, data.y) > 0.7
            assert not np.allclose(
                model.tree_.weight[1:], np.round(model.tree_.weight[1:])
            )  # fractional


def test_model_with_soft_components_round_trips_through_json():
    data = load_dataset("bupa")
    model = TreeClassifier(
        splitter="soft_search",
        propagator="soft",
        evaluator="soft",
        max_depth=4,
        splitter_params={"u": 0.05},
        evaluator_params={"u": 0.1},
    ).fit(data.X, data.y)
    loaded = TreeClassifier.from_json(model.to_json())
    np.testing.assert_array_equal(loaded.predict_proba(data.X), model.predict_proba(data.X))


def test_spread_needs_a_positive_mean_or_absolute_sigma():
    X = np.array([[-1.0, 1.0], [-2.0, 2.0], [-3.0, 3.0], [-4.0, 5.0]])
    y = [0, 0, 1, 1]
    with pytest.raises(
        ValueError, match=r"splitter 'soft_search': feature 0 has mean -2.5.*sigma="
    ):
        TreeClassifier(splitter="soft_search").fit(X, y)
    TreeClassifier(splitter="soft_search", splitter_params={"sigma": [0.3, 0.3]}).fit(X, y)
    with pytest.raises(ValueError, match="sigma has 3 values but the data has 2 features"):
        TreeClassifier(splitter="soft_search", splitter_params={"sigma": [0.3, 0.3, 0.3]}).fit(X, y)
    with pytest.raises(ValueError, match="u must be a finite number >= 0"):
        TreeClassifier(propagator="soft", propagator_params={"u": -1}).fit(X, y)


@pytest.mark.parametrize(
    "params",
    [
        dict(splitter="soft_search"),
        dict(propagator="soft"),
        dict(evaluator="soft"),
        dict(evaluator="quinlan_ramp"),
        dict(splitter="soft_search", propagator="soft", evaluator="soft"),
    ],
)
def test_missing_values_the_c45_way(params):
    data = load_dataset("wisconsin")  # 16 missing values in V6
    model = TreeClassifier(criterion="entropy", min_samples_leaf=5, **params).fit(data.X, data.y)
    assert model.tree_.n_samples[0] == 699
    proba = model.predict_proba(data.X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert model.score(data.X, data.y) > 0.93
    missing = np.isnan(data.X).any(axis=1)
    assert np.isfinite(proba[missing]).all()


@pytest.mark.parametrize("name", ["haberman", "wisconsin"])
def test_soft_search_with_c45_rules_tends_to_c45_as_sigma_vanishes(name):
    # Integer-valued data: kernels of width +-0.03 never reach a neighbouring value, so
    # between the windows the smoothed masses are the hard ones; the soft gain is convex
    # along each window, so no grid point inside one beats its hard ends. C4.5's Tries,
    # penalty, MinSplit, average-gain filter and gain ratio must then give C4.5's tree
    # (wisconsin carries 16 missing values: the unknown-weight terms are exercised too).
    data = load_dataset(name)
    assert np.array_equal(data.X[~np.isnan(data.X)], np.round(data.X[~np.isnan(data.X)]))
    common = dict(criterion="entropy", pruner="pessimistic")
    c45 = TreeClassifier(splitter="c45", **common).fit(data.X, data.y)
    soft = TreeClassifier(
        splitter="soft_search",
        **common,
        splitter_params={
            "sigma": [0.01] * data.X.shape[1],
            "max_candidates": None,
            "c45_rules": True,
        },
    ).fit(data.X, data.y)
    assert c45.get_n_leaves() > 2
    np.testing.assert_array_equal(soft.tree_.feature, c45.tree_.feature)
    np.testing.assert_allclose(soft.tree_.weight, c45.tree_.weight, rtol=1e-9)
    np.testing.assert_allclose(
        soft.tree_.node_fields["improvement"], c45.tree_.node_fields["improvement"], rtol=1e-6
    )
    known = ~np.isnan(data.X).any(axis=1)
    assert leaf_partition(soft, data.X[known]) == leaf_partition(c45, data.X[known])
    np.testing.assert_allclose(soft.predict_proba(data.X), c45.predict_proba(data.X), atol=1e-9)


def test_c45_rules_penalise_many_weak_thresholds():
    # Pure noise: plain SS always finds some smoothed drop and splits; C4.5's penalty
    # log2(Tries)/|D| and MinSplit leave the noise mostly unsplit.
    rng = np.random.default_rng(3)
    X = rng.normal(10.0, 1.0, size=(300, 4))
    y = rng.integers(0, 2, size=300)
    plain = TreeClassifier(
        criterion="entropy", splitter="soft_search", splitter_params={"u": 0.02}
    ).fit(X, y)
    rules = TreeClassifier(
        criterion="entropy", splitter="soft_search", splitter_params={"u": 0.02, "c45_rules": True}
    ).fit(X, y)
    c45 = TreeClassifier(criterion="entropy", splitter="c45").fit(X, y)
    assert rules.get_n_leaves() < plain.get_n_leaves() / 2
    assert rules.get_n_leaves() <= 2 * c45.get_n_leaves()


def test_c45_rules_with_uncertain_and_exact_features_together():
    # sigma 0 on one feature sends it through C4.5's exact kernel; the other is soft
    data = load_dataset("haberman")
    model = TreeClassifier(
        criterion="entropy",
        splitter="soft_search",
        splitter_params={"sigma": [0.0, 2.0, 0.0], "c45_rules": True},
    ).fit(data.X, data.y)
    assert model.get_n_leaves() > 2
    used = set(model.tree_.feature[~model.tree_.is_leaf])
    assert used <= {0, 1, 2}
    soft_nodes = model.tree_.feature == 1
    # thresholds of the exact features are training values (C4.5 snaps), soft ones are grid points
    for node in np.flatnonzero((model.tree_.feature >= 0) & ~soft_nodes & ~model.tree_.is_leaf):
        assert model.tree_.threshold[node] in data.X[:, model.tree_.feature[node]]


def test_soft_evaluation_on_several_threads_equals_one_thread():
    """A soft traversal costs hundreds of walk rows per row: a few thousand rows run in row
    chunks on the threads the model may use, with the one-thread probabilities."""
    rng = np.random.default_rng(4)
    X = rng.uniform(1.0, 5.0, size=(3000, 3))
    y = (X[:, 0] + rng.normal(scale=0.5, size=3000) > 3).astype(int)
    X[rng.random(X.shape) < 0.05] = np.nan
    probabilities = [
        TreeClassifier(evaluator="soft", max_depth=6, n_threads=threads).fit(X, y).predict_proba(X)
        for threads in (1, 2)
    ]
    np.testing.assert_array_equal(probabilities[0], probabilities[1])
    assert 0.0 < probabilities[0][:, 1].mean() < 1.0


# -- regression (issue 39) ---------------------------------------------------------------


def regression_data(seed=4, n=120):
    """Values on a 0.1 grid with a noisy numeric response."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(5.0, 1.0, size=(n, 3)), 1)
    y = X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(0, 0.5, size=n)
    return X, y


def test_regression_soft_search_tends_to_the_exhaustive_partition_as_u_vanishes():
    from treekit_core import TreeRegressor

    X, y = regression_data()
    exact = TreeRegressor(min_samples_leaf=5).fit(X, y)
    soft = TreeRegressor(
        min_samples_leaf=5,
        splitter="soft_search",
        splitter_params={"u": 1e-4, "max_candidates": None},
    ).fit(X, y)
    np.testing.assert_array_equal(soft.tree_.feature, exact.tree_.feature)
    assert leaf_partition(soft, X) == leaf_partition(exact, X)
    np.testing.assert_allclose(soft.predict(X), exact.predict(X), rtol=1e-12)


def test_regression_soft_propagation_and_evaluation_tend_to_hard_as_u_vanishes():
    from treekit_core import TreeRegressor

    data = load_dataset("airquality", dropna=True)
    hard = TreeRegressor(min_samples_leaf=5).fit(data.X, data.y)
    soft = TreeRegressor(min_samples_leaf=5, propagator="soft", propagator_params={"u": 1e-9}).fit(
        data.X, data.y
    )
    for field in ("feature", "threshold", "n_samples"):
        np.testing.assert_array_equal(getattr(soft.tree_, field), getattr(hard.tree_, field))
    np.testing.assert_allclose(soft.tree_.statistics, hard.tree_.statistics, rtol=1e-9)
    evaluated = TreeRegressor(
        min_samples_leaf=5, evaluator="soft", evaluator_params={"u": 1e-9}
    ).fit(data.X, data.y)
    np.testing.assert_allclose(evaluated.predict(data.X), hard.predict(data.X), rtol=1e-9)
    wide = TreeRegressor(min_samples_leaf=5, evaluator="soft", evaluator_params={"u": 0.2})
    assert np.abs(wide.fit(data.X, data.y).predict(data.X) - hard.predict(data.X)).max() > 1.0


@pytest.mark.parametrize(
    "params, component",
    [
        ({"splitter": "soft_search", "splitter_params": {"c45_rules": True}}, "soft_search"),
        ({"evaluator": "quinlan_ramp"}, "quinlan_ramp"),
    ],
)
def test_what_counts_classification_errors_refuses_a_regression_target(params, component):
    from treekit_core import CompositionError, TreeRegressor

    X, y = regression_data()
    with pytest.raises(CompositionError, match=f"'{component}' cannot be combined with target"):
        TreeRegressor(**params).fit(X, y)


def test_regression_quantiles_under_soft_evaluation_mix_the_leaves_rows():
    """Issue 39: with soft evaluation a sample's quantile is taken over both leaves' rows,
    each leaf's weighted by its share in the sample's mixture; on a one-split tree that
    share follows from the predicted mean (pi m_left + (1 - pi) m_right), so the quantile
    is checked by hand; u -> 0 gives the hard tree's quantiles."""
    from treekit_core import TreeRegressor

    X, y = regression_data(n=200)
    soft = TreeRegressor(max_depth=1, evaluator="soft", evaluator_params={"u": 0.2}).fit(X, y)
    tree = soft.tree_
    left, right = tree.children(0)
    going_left = X[:, tree.feature[0]] <= tree.threshold[0]
    m_left, m_right = tree.value[left, 0], tree.value[right, 0]
    q = np.array([0.1, 0.5, 0.9])
    predicted = soft.predict(X[:30], quantiles=q)
    for i in range(30):
        share = (soft.predict(X[i : i + 1])[0] - m_right) / (m_left - m_right)
        weights = np.where(going_left, share / going_left.sum(), (1 - share) / (~going_left).sum())
        order = np.argsort(y, kind="stable")
        cumulative = np.cumsum(weights[order]) / weights.sum()
        expected = [y[order][np.flatnonzero(cumulative >= p - 1e-9)[0]] for p in q]
        np.testing.assert_allclose(predicted[i], expected)
    hard = TreeRegressor(max_depth=3).fit(X, y)
    vanishing = TreeRegressor(max_depth=3, evaluator="soft", evaluator_params={"u": 1e-9})
    np.testing.assert_array_equal(
        vanishing.fit(X, y).predict(X, quantiles=q), hard.predict(X, quantiles=q)
    )
