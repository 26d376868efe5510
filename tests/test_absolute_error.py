"""Issue 38: absolute error, scikit-learn's ``criterion="absolute_error"`` (median leaves).

The median is no function of summed statistics: the ``median`` target summarises a node's
rows itself and the exhaustive splitter scores cuts from the rows (a node-by-node kernel
for missing values and soft propagation, a whole-tree builder otherwise)."""

import json
import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_fused_builder import Plugin as NodeByNodePlugin

from treekit_core import (
    CompositionError,
    ForestRegressor,
    ModelFileError,
    TreeRegressor,
    registered,
)
from treekit_core.datasets import load_dataset
from treekit_core.registry import get_registry
from treekit_core.testing import assert_same_tree, check_criterion, check_target


def weighted_median(y, w):
    """scikit-learn's weighted median, by hand: the smallest response whose cumulative
    weight reaches half the total, the midpoint with the next when exactly half."""
    order = np.argsort(y, kind="stable")
    y, w = y[order], w[order]
    cumulative = np.cumsum(w)
    half = cumulative[-1] / 2
    k = int(np.argmax(cumulative >= half))
    if cumulative[k] == half and k + 1 < y.size:
        return (y[k] + y[k + 1]) / 2
    return y[k]


def weighted_medians_up_to_rounding(y, w):
    """The weighted medians scikit-learn's rule gives when the weights are rounded: the
    rule's median, and where a cumulative weight lies within rounding of exactly half (a
    row's missing-value shares sum to half in exact arithmetic, but not always in floating
    point) also the midpoint and the two responses beside it."""
    order = np.argsort(y, kind="stable")
    y, w = y[order], w[order]
    cumulative = np.cumsum(w)
    half = cumulative[-1] / 2
    medians = {weighted_median(y, w)}
    for k in np.flatnonzero(np.abs(cumulative - half) <= 1e-9 * cumulative[-1]):
        if k + 1 < y.size:
            medians |= {y[k], (y[k] + y[k + 1]) / 2, y[k + 1]}
    return medians


def regression_sets():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    plane = rng.uniform(0, 10, size=(300, 2))
    quakes = load_dataset("quakes")
    air = load_dataset("airquality", dropna=True)
    cars = load_dataset("car_test_frame")
    numeric = [j for j, name in enumerate(cars.feature_names) if name in ("Price", "Weight", "HP")]
    return {
        "synthetic": (X, X[:, 0] ** 2 + X[:, 1] + rng.standard_t(2, size=400)),
        "synthetic_2d": (plane, np.sin(plane[:, 0]) + plane[:, 1] + rng.laplace(size=300)),
        "quakes": (quakes.X, quakes.y),
        "airquality": (air.X, air.y),
        "car_test_frame": (cars.X[:, numeric], cars.y),
    }


def sklearn_fits(X, y, **params):
    from sklearn.tree import DecisionTreeRegressor

    return [
        DecisionTreeRegressor(criterion="absolute_error", random_state=seed, **params).fit(X, y)
        for seed in range(5)
    ]


def order_free(fits, X):
    """Whether scikit-learn's five feature orders grew one tree."""
    first = fits[0].predict(X)
    return all(np.array_equal(first, fit.predict(X)) for fit in fits[1:])


@pytest.mark.parametrize("name", list(regression_sets()))
def test_the_tree_scikit_learn_grows(name):
    X, y = regression_sets()[name]
    theirs = sklearn_fits(X, y, min_samples_leaf=5)
    if not order_free(theirs, X):
        pytest.skip("scikit-learn's tree depends on its random feature order here")
    ours = TreeRegressor(criterion="absolute_error", min_samples_leaf=5).fit(X, y)
    np.testing.assert_allclose(ours.predict(X), theirs[0].predict(X), rtol=1e-9, atol=1e-9)
    assert ours.get_n_leaves() == theirs[0].get_n_leaves()
    # the pruning path: risks are the absolute deviations, as scikit-learn's impurities
    ours_path = TreeRegressor(criterion="absolute_error", min_samples_leaf=5)
    ours_path = ours_path.cost_complexity_pruning_path(X, y)
    theirs_path = theirs[0].cost_complexity_pruning_path(X, y)
    np.testing.assert_allclose(ours_path.ccp_alphas, theirs_path.ccp_alphas, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(ours_path.impurities, theirs_path.impurities, rtol=1e-9, atol=1e-9)


def test_most_of_the_scikit_learn_comparisons_ran():
    sets = regression_sets().values()
    ran = sum(order_free(sklearn_fits(X, y, min_samples_leaf=5), X) for X, y in sets)
    assert ran >= 3


def test_weighted_trees_are_scikit_learns():
    X, y = regression_sets()["synthetic_2d"]
    weight = np.random.default_rng(1).integers(1, 4, y.size).astype(float)
    from sklearn.tree import DecisionTreeRegressor

    theirs = DecisionTreeRegressor(criterion="absolute_error", max_depth=4, random_state=0)
    theirs.fit(X, y, sample_weight=weight)
    ours = TreeRegressor(criterion="absolute_error", max_depth=4).fit(X, y, sample_weight=weight)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-12)
    np.testing.assert_allclose(ours.feature_importances_, theirs.feature_importances_, atol=1e-9)


def weights_at_nodes(model, X, weight):
    """Each training row's weight at every node (rows x nodes): its leaves' shares as the
    regressor routes training rows (quantiles read them), summed up the tree."""
    tree = model.tree_
    rows, leaves, shares = model._mixtures(tree, X, training=True)
    reached = np.zeros((X.shape[0], tree.n_nodes))
    np.add.at(reached, (rows, leaves), shares * weight[rows])
    for node in range(tree.n_nodes - 1, -1, -1):  # a child's id is larger than its parent's
        for child in tree.children(node):
            reached[:, node] += reached[:, child]
    return reached


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 80),
    d=st.integers(1, 4),
    missing=st.sampled_from([0.0, 0.2]),
    max_depth=st.one_of(st.none(), st.integers(1, 5)),
)
@example(seed=34, n=34, d=1, missing=0.2, max_depth=None)  # shares that sum to half exactly
def test_a_leaf_predicts_the_weighted_median_of_its_training_rows(seed, n, d, missing, max_depth):
    """On random weighted data (missing values sent down both branches by their shares):
    every node's value is the weighted median of the training weight that reached it, its
    statistics the absolute deviations from it, and the risk never grows from a node to its
    children."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(n, d)).astype(float)
    y = rng.integers(0, 5, size=n).astype(float)  # ties: medians land between two values
    X[rng.random(X.shape) < missing] = np.nan
    weight = rng.integers(1, 4, n).astype(float)
    model = TreeRegressor(criterion="absolute_error", max_depth=max_depth)
    model.fit(X, y, sample_weight=weight)
    tree = model.tree_
    reached = weights_at_nodes(model, X, weight)
    for node in range(tree.n_nodes):
        share = reached[:, node]
        at_node = share > 0
        medians = weighted_medians_up_to_rounding(y[at_node], share[at_node])
        expected = tree.value[node, 0]
        assert any(expected == pytest.approx(median, abs=1e-12) for median in medians)
        deviations = (share[at_node] * np.abs(y[at_node] - expected)).sum()
        assert tree.statistics[node, 1] == pytest.approx(deviations, rel=1e-9, abs=1e-9)
        children = tree.children(node)
        if children.size:
            assert tree.statistics[children, 1].sum() <= tree.statistics[node, 1] + 1e-9


def brute_force_split(X, y, w, min_samples_leaf, cuts=None):
    """The best (feature, threshold, drop, share) by hand: every cut of every feature, the
    medians of both sides found by sorting, missing values as C4.5 (known rows only, the
    drop scaled by their weight share). ``cuts``: a list that receives every admissible
    (feature, threshold, drop, share)."""

    def deviations(values, weights):
        return (weights * np.abs(values - weighted_median(values, weights))).sum()

    total = w.sum()
    best = (-1, 0.0, -np.inf, 0.5)
    for f in range(X.shape[1]):
        known = ~np.isnan(X[:, f])
        x, yk, wk = X[known, f], y[known], w[known]
        if x.size < 2:
            continue
        known_weight = wk.sum()
        base = deviations(yk, wk) / known_weight
        feature_best = (-np.inf, 0.0, 0.0)
        values = np.unique(x)
        for low, high in zip(values[:-1], values[1:], strict=True):
            if high <= low + 1e-7:
                continue
            left = x <= low
            if left.sum() < min_samples_leaf or (~left).sum() < min_samples_leaf:
                continue
            drop = base - (deviations(yk[left], wk[left]) + deviations(yk[~left], wk[~left])) / (
                known_weight
            )
            if cuts is not None:
                share = wk[left].sum() / known_weight
                cuts.append((f, (low + high) / 2, drop * known_weight / total, share))
            if drop > feature_best[0] + 1e-12:
                feature_best = (drop, (low + high) / 2, wk[left].sum() / known_weight)
        drop = feature_best[0] * known_weight / total
        if drop > best[2] + 1e-12:
            best = (f, feature_best[1], drop, feature_best[2])
    return best


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 40),
    d=st.integers(1, 3),
    missing=st.sampled_from([0.0, 0.25]),
    min_samples_leaf=st.integers(1, 4),
)
def test_the_row_search_finds_the_best_cut_by_hand(seed, n, d, missing, min_samples_leaf):
    from treekit_core.kernels.absolute_deviation import best_absolute_split_of_node

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).round(1)
    X[rng.random(X.shape) < missing] = np.nan
    y = rng.normal(size=n).round(1)
    w = rng.uniform(0.5, 2.0, n)
    feature, threshold, drop, share = best_absolute_split_of_node(
        y, X, np.arange(n), w, np.arange(d), min_samples_leaf, 0.0
    )
    cuts = []
    expected = brute_force_split(X, y, w, min_samples_leaf, cuts)
    if expected[0] < 0:
        assert feature < 0
        return
    assert drop == pytest.approx(expected[2], rel=1e-9, abs=1e-12)
    # the kernel's cut is one whose drop is the best within rounding (two cuts whose drops
    # differ in the last bits may come out in either order from the two computations)
    tied = [c for c in cuts if c[0] == feature and abs(c[2] - expected[2]) < 1e-12]
    assert any(threshold == pytest.approx(c[1]) and share == pytest.approx(c[3]) for c in tied), (
        feature,
        threshold,
        share,
        tied,
    )


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 200),
    d=st.integers(1, 5),
    min_samples_leaf=st.integers(1, 8),
    max_depth=st.one_of(st.none(), st.integers(1, 6)),
    weighted=st.booleans(),
)
def test_the_builder_grows_the_node_by_node_tree(seed, n, d, min_samples_leaf, max_depth, weighted):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 8, size=(n, d)).astype(float)
    y = rng.integers(0, 6, size=n).astype(float)
    w = rng.integers(0, 4, size=n).astype(float) if weighted else None  # 0: removed rows
    if w is not None and not (w > 0).any():
        w[0] = 1.0
    params = dict(
        criterion="absolute_error",
        min_samples_leaf=min_samples_leaf,
        max_depth=max_depth,
    )
    built = TreeRegressor(**params).fit(X, y, sample_weight=w)
    with registered(NodeByNodePlugin(), name="node-by-node"):  # test_fused_builder's
        slow = TreeRegressor(splitter="node_by_node", **params).fit(X, y, sample_weight=w)
    assert_same_tree(built.tree_, slow.tree_)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"propagator": "surrogate", "evaluator": "surrogate"},
        {"pruner": "cost_complexity"},
        {"pruner": "cost_complexity", "pruner_params": {"rule": "one_se", "cv": 5}},
        {"pruner": "mdl", "pruner_params": {"alpha": 0.01}},
        {"splitter_params": {"gain_ratio": True}},
    ],
    ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()) or "default",
)
def test_the_criterion_composes_and_round_trips_exactly(params):
    air = load_dataset("airquality")  # with missing values
    model = TreeRegressor(criterion="absolute_error", min_samples_leaf=5, **params)
    model.fit(air.X, air.y)
    predicted = model.predict(air.X)
    assert np.isfinite(predicted).all() and model.score(air.X, air.y) > 0.3
    again = TreeRegressor.from_json(model.to_json())
    np.testing.assert_array_equal(again.predict(air.X), predicted)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).predict(air.X), predicted)
    quantiles = model.predict(air.X, quantiles=[0.5])
    assert quantiles.shape == (air.X.shape[0], 1)


def test_cross_validated_pruning_scores_absolute_errors():
    """The root's row of the cp table by hand: each fold predicts its training rows'
    median; xerror is the held-out absolute errors over the root's absolute deviations.
    rpart's xpred deals the pruner's folds (one stratum for a measurement)."""
    from treekit_core.engine.folds import stratified_folds

    data = load_dataset("quakes")
    model = TreeRegressor(criterion="absolute_error", pruner="cost_complexity", min_samples_leaf=5)
    model.fit(data.X, data.y)
    fold = stratified_folds(np.zeros(data.y.size, int), 10, np.random.default_rng(0))
    medians = np.empty(data.y.size)
    for k in range(10):
        medians[fold == k] = np.median(data.y[fold != k])
    root_error = np.abs(data.y - medians).sum() / np.abs(data.y - np.median(data.y)).sum()
    assert model.pruning_path_["xerror"][-1] == pytest.approx(root_error, rel=1e-12)
    held_out = model.xpred(data.X, data.y)
    np.testing.assert_array_equal(held_out[:, 0], medians)


def test_a_forest_of_absolute_error_trees():
    data = load_dataset("quakes")
    forest = ForestRegressor(
        criterion="absolute_error", n_estimators=25, oob_score=True, random_state=0
    ).fit(data.X, data.y)
    assert forest.oob_score_ > 0.5
    assert forest.predict(data.X).shape == data.y.shape
    for tree in forest.estimators_:
        assert np.all(tree.weight > 0)


def test_what_it_cannot_search_is_refused_naming_both_components():
    cars = load_dataset("car_test_frame")
    frame = pd.DataFrame(cars.X, columns=cars.feature_names)
    for j in np.flatnonzero(cars.categorical):
        name = cars.feature_names[j]
        frame[name] = frame[name].astype("category")
    with pytest.raises(CompositionError, match="nominal feature .* criterion 'absolute_error'"):
        TreeRegressor(criterion="absolute_error").fit(frame, cars.y)
    quakes = load_dataset("quakes")
    with pytest.raises((CompositionError, ValueError), match="splitter 'c45'"):
        TreeRegressor(criterion="absolute_error", splitter="c45").fit(quakes.X, quakes.y)
    if "histogram" in get_registry().components("splitter"):
        with pytest.raises(CompositionError, match="absolute_error.*histogram|histogram.*absol"):
            TreeRegressor(criterion="absolute_error", splitter="histogram").fit(quakes.X, quakes.y)
    with pytest.raises(CompositionError, match="reads median_summaries|writes moments"):
        TreeRegressor(criterion="absolute_error", target="mean").fit(quakes.X, quakes.y)


def test_a_model_file_with_negative_deviations_is_refused():
    data = load_dataset("quakes")
    payload = json.loads(
        TreeRegressor(criterion="absolute_error", max_depth=3).fit(data.X, data.y).to_json()
    )
    payload["tree"]["statistics"][1][1] = -4.0
    with pytest.raises(ModelFileError, match="absolute deviations .* negative"):
        TreeRegressor.from_json(json.dumps(payload))


def test_the_target_and_criterion_pass_the_conformance_kit():
    from treekit_core.testing import small_data

    y = np.random.default_rng(0).normal(size=small_data(2)[0].shape[0])
    check_target(get_registry().create("target", "median"), y=y)
    check_criterion(get_registry().create("criterion", "absolute_error"), y=y)
