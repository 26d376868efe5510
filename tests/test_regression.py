"""Regression trees (issue 38): rpart 4.1.19's anova and poisson trees reproduced exactly
(fixtures made by tests/fixtures/rpart_regression/make_fixtures.R), scikit-learn's
DecisionTreeRegressor reproduced where its tree does not depend on its random feature
order, and the regressor composed with every component that applies."""

import json
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_core import CompositionError, ModelFileError, TreeRegressor, export_text
from treekit_core.datasets import load_dataset
from treekit_core.testing import check_target

FIXTURES = Path(__file__).parent / "fixtures" / "rpart_regression"
RPART = {
    "airquality": "squared_error",  # missing values (Solar.R)
    "quakes": "squared_error",  # 1000 rows, numeric
    "cu_summary": "squared_error",  # nominal Country and Type, missing values
    "car_test_frame": "squared_error",  # nominal, missing values
    "solder": "rpart_poisson",  # counts, four nominal predictors
    "warpbreaks": "rpart_poisson",  # counts, nominal
}


def as_frame(data):
    """The data set as a DataFrame: nominal columns as pandas categories, NaN missing."""
    columns = {}
    for j, name in enumerate(data.feature_names):
        if data.categorical[j]:
            levels = data.categories[name]
            codes = data.X[:, j]
            values = [levels[int(c)] if c == c else None for c in codes]
            columns[name] = pd.Categorical(values, categories=levels)
        else:
            columns[name] = data.X[:, j]
    return pd.DataFrame(columns)


def rpart_like(criterion):
    """rpart.control(minsplit = 20, minbucket = 7, cp = 0, xval = 0) with surrogates."""
    return TreeRegressor(
        criterion=criterion,
        min_samples_split=20,
        min_samples_leaf=7,
        propagator="surrogate",
        evaluator="surrogate",
        pruner="cost_complexity",
        pruner_params={"alpha": 0.0, "sequence": "rpart"},
    )


@pytest.fixture(scope="module", params=sorted(RPART))
def rpart_case(request):
    name = request.param
    reference = json.loads((FIXTURES / f"{name}.json").read_text())
    assert reference["rpart_version"] == "4.1.19"
    assert reference["method"] == ("anova" if RPART[name] == "squared_error" else "poisson")
    data = load_dataset(name)
    X = as_frame(data)
    model = rpart_like(RPART[name]).fit(X, data.y)
    return name, reference, data, X, model


def test_rparts_tree_is_reproduced_exactly(rpart_case):
    name, reference, data, X, model = rpart_case
    assert data.y.size == reference["n_rows"]
    np.testing.assert_allclose(model.predict(X), reference["predict"], rtol=1e-9, atol=1e-12)
    # the same partition: every leaf of rpart's holds the rows of one leaf of ours
    ours, theirs = model.apply(X), np.asarray(reference["where"])
    pairs = set(zip(ours.tolist(), theirs.tolist(), strict=True))
    assert len(pairs) == len(set(ours.tolist())) == len(set(theirs.tolist()))
    assert model.get_n_leaves() == reference["frame"]["var"].count("<leaf>")


def test_pruning_at_any_cp_between_rows_of_rparts_cp_table_gives_its_size(rpart_case):
    name, reference, data, X, model = rpart_case
    table = reference["cptable"]
    for row in range(len(table)):
        above = table[row - 1]["CP"] if row > 0 else 2.0 * table[0]["CP"]
        for cp in (table[row]["CP"] + (above - table[row]["CP"]) * f for f in (0.01, 0.5, 0.99)):
            if table[row]["CP"] < cp < above:
                assert model.prune(cp=cp).get_n_leaves() == table[row]["nsplit"] + 1, (row, cp)


def test_rparts_risks_are_the_cp_tables_relative_errors(rpart_case):
    name, reference, data, X, model = rpart_case
    path = model.pruning_path_
    ours = dict(zip(path["n_splits"].tolist(), path["rel_error"].tolist(), strict=True))
    for row in reference["cptable"]:
        assert ours[row["nsplit"]] == pytest.approx(row["rel error"], rel=1e-9)


# -- scikit-learn ---------------------------------------------------------------------


def sklearn_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    counts = rng.poisson(np.exp(0.5 * X[:, 0] - 0.3 * X[:, 1] + 0.2))
    quakes = load_dataset("quakes")
    air = load_dataset("airquality", dropna=True)
    cars = load_dataset("car_test_frame")
    numeric = [j for j, name in enumerate(cars.feature_names) if name in ("Price", "Weight", "HP")]
    plane = rng.uniform(0, 10, size=(300, 2))
    return {
        "synthetic": (X, X[:, 0] ** 2 + X[:, 1] + rng.normal(scale=0.3, size=400), counts),
        "synthetic_2d": (
            plane,
            np.sin(plane[:, 0]) + plane[:, 1] + rng.normal(scale=0.2, size=300),
            rng.poisson(plane[:, 0] + 1.0),
        ),
        "quakes": (quakes.X, quakes.y, quakes.X[:, 3]),  # magnitude; the stations count
        "airquality": (air.X, air.y, air.y),
        "car_test_frame": (cars.X[:, numeric], cars.y, cars.y),
    }


@pytest.mark.parametrize("criterion", ["squared_error", "poisson"])
@pytest.mark.parametrize(
    "name", ["synthetic", "synthetic_2d", "quakes", "airquality", "car_test_frame"]
)
def test_the_tree_scikit_learn_grows(name, criterion):
    from sklearn.tree import DecisionTreeRegressor

    X, y, counts = sklearn_data()[name]
    target = y if criterion == "squared_error" else counts
    if criterion == "poisson":  # the stations column would be a perfect predictor of itself
        X = X[:, :3] if name == "quakes" else X
    theirs = [
        DecisionTreeRegressor(criterion=criterion, min_samples_leaf=5, random_state=seed)
        .fit(X, target)
        .predict(X)
        for seed in range(5)
    ]
    # (to rounding: the order in which a leaf's rows are summed follows the feature order)
    if any(not np.allclose(theirs[0], other, rtol=1e-12, atol=0) for other in theirs[1:]):
        pytest.skip("scikit-learn's tree depends on its random feature order here")
    ours = TreeRegressor(criterion=criterion, min_samples_leaf=5).fit(X, target)
    np.testing.assert_allclose(ours.predict(X), theirs[0], rtol=1e-9, atol=1e-9)


def test_most_of_the_scikit_learn_comparisons_ran():
    """The guard above skips where scikit-learn's feature order matters: most must run."""
    from sklearn.tree import DecisionTreeRegressor

    ran = 0
    for X, y, counts in sklearn_data().values():
        for criterion, target in (("squared_error", y), ("poisson", counts)):
            fits = [
                DecisionTreeRegressor(criterion=criterion, min_samples_leaf=5, random_state=s)
                .fit(X, target)
                .predict(X)
                for s in range(5)
            ]
            ran += all(np.allclose(fits[0], fit, rtol=1e-12, atol=0) for fit in fits[1:])
    assert ran >= 6


def test_score_is_r2_and_the_tree_api_matches_scikit_learns():
    from sklearn.metrics import r2_score
    from sklearn.tree import DecisionTreeRegressor

    X, y, _ = sklearn_data()["synthetic_2d"]  # no two features split a node alike
    weight = np.random.default_rng(1).uniform(0.5, 2.0, y.size)
    ours = TreeRegressor(max_depth=4).fit(X, y, sample_weight=weight)
    theirs = DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y, sample_weight=weight)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-12)
    assert ours.score(X, y, sample_weight=weight) == pytest.approx(
        r2_score(y, ours.predict(X), sample_weight=weight), rel=1e-12
    )
    assert ours.get_n_leaves() == theirs.get_n_leaves() and ours.get_depth() == theirs.get_depth()
    np.testing.assert_allclose(ours.feature_importances_, theirs.feature_importances_, atol=1e-12)
    assert (ours.decision_path(X) != ours.decision_path(X)).nnz == 0
    ours_path = TreeRegressor().cost_complexity_pruning_path(X, y)
    theirs_path = DecisionTreeRegressor(random_state=0).cost_complexity_pruning_path(X, y)
    np.testing.assert_allclose(ours_path.ccp_alphas, theirs_path.ccp_alphas, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours_path.impurities, theirs_path.impurities, rtol=1e-9, atol=1e-12)
    assert not hasattr(ours, "predict_proba") and not hasattr(ours, "classes_")
    constant = np.full(y.size, 3.0)
    assert TreeRegressor().fit(X, constant).score(X, constant) == 1.0


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 80),
    d=st.integers(1, 4),
    missing=st.sampled_from([0.0, 0.2]),
    max_depth=st.one_of(st.none(), st.integers(1, 5)),
    criterion=st.sampled_from(["squared_error", "poisson"]),
)
def test_a_leaf_predicts_the_weighted_mean_of_its_training_rows(
    seed, n, d, missing, max_depth, criterion
):
    """On random weighted data (with missing values sent down both branches by their
    shares): predictions of rows without a missing value are their leaf's weighted mean,
    and the tree's risk never grows from a node to its children."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(n, d)).astype(float)
    y = rng.poisson(3.0, n).astype(float)
    if y.sum() == 0:
        y[0] = 1.0
    X[rng.random(X.shape) < missing] = np.nan
    weight = rng.uniform(0.5, 2.0, n)
    model = TreeRegressor(criterion=criterion, max_depth=max_depth).fit(X, y, sample_weight=weight)
    complete = ~np.isnan(X).any(axis=1)
    if complete.any():
        leaves = model.apply(X[complete])
        tree = model.tree_
        expected = tree.statistics[leaves, 0] / tree.weight[leaves]
        np.testing.assert_allclose(model.predict(X[complete]), expected, rtol=1e-12)
    risk = model.composition_.target.node_risk(
        tree_stats := model.tree_.statistics, model.tree_.weight, None
    )
    for node in range(model.tree_.n_nodes):
        children = model.tree_.children(node)
        if children.size:
            assert risk[children].sum() <= risk[node] + 1e-9 * max(1.0, risk[node])
    assert tree_stats.shape[1] == 2


# -- composition ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"propagator": "surrogate", "evaluator": "surrogate"},
        {"pruner": "cost_complexity"},
        {"pruner": "cost_complexity", "pruner_params": {"rule": "one_se", "cv": 5}},
        {"pruner": "mdl", "pruner_params": {"alpha": 0.01}},
        {"splitter_params": {"nominal_split": "multiway"}},
        {"criterion": "rpart_poisson", "target_params": {"shrink": 0.5}},
        {"criterion": "poisson"},
    ],
    ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()) or "default",
)
def test_the_regressor_composes_and_round_trips_exactly(params):
    data = load_dataset("car_test_frame")
    X = as_frame(data)
    model = TreeRegressor(min_samples_leaf=5, **params).fit(X, data.y)
    predicted = model.predict(X)
    assert np.isfinite(predicted).all() and model.score(X, data.y) > 0.3
    again = TreeRegressor.from_json(model.to_json())
    np.testing.assert_array_equal(again.predict(X), predicted)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).predict(X), predicted)
    assert "value: [" in export_text(model)


@pytest.mark.parametrize(
    "params, message",
    [
        ({"splitter": "c45"}, "splitter 'c45' cannot be combined with target 'mean'"),
        ({"pruner": "pessimistic"}, "pruner 'pessimistic' cannot be combined with target 'mean'"),
        ({"criterion": "gini"}, "reads class labels"),
    ],
)
def test_what_needs_classes_is_refused_naming_both_components(params, message):
    data = load_dataset("quakes")
    with pytest.raises((CompositionError, ValueError), match=message):
        TreeRegressor(**params).fit(data.X, data.y)


def test_bad_responses_are_refused_naming_y():
    X = np.arange(10.0).reshape(5, 2)
    with pytest.raises(ValueError, match="y contains NaN|Input y contains NaN"):
        TreeRegressor().fit(X, [1.0, np.nan, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="must hold numbers"):
        TreeRegressor().fit(X, ["a", "b", "c", "d", "e"])
    with pytest.raises(ValueError, match="Poisson regression needs y >= 0"):
        TreeRegressor(criterion="poisson").fit(X, [1.0, -1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="Sum of y is not positive"):
        TreeRegressor(criterion="poisson").fit(X, np.zeros(5))
    with pytest.raises(ValueError, match="times must be > 0"):
        TreeRegressor(criterion="rpart_poisson").fit(X, np.column_stack([np.zeros(5), np.ones(5)]))
    with pytest.raises(ValueError, match="shrink must be a finite number >= 0"):
        TreeRegressor(criterion="rpart_poisson", target_params={"shrink": -1}).fit(X, np.ones(5))


def test_rpart_poisson_takes_time_and_events_and_shrinks_rates():
    """rpart's cbind(time, events): with every time 2 the rates halve; the leaf rate is
    (events + a) / (time + b), a = 1 / shrink^2, b = a / the root's rate."""
    data = load_dataset("warpbreaks")
    X = as_frame(data)
    counts = TreeRegressor(criterion="rpart_poisson", max_depth=1).fit(X, data.y)
    exposure = np.column_stack([np.full(data.y.size, 2.0), data.y])
    timed = TreeRegressor(criterion="rpart_poisson", max_depth=1).fit(X, exposure)
    tree = counts.tree_
    a = 1.0
    root = tree.statistics[0, 0] / tree.statistics[0, 1]
    leaf = int(np.flatnonzero(tree.is_leaf)[0])
    events, time = tree.statistics[leaf, :2]
    assert tree.value[leaf, 0] == pytest.approx((events + a) / (time + a / root), rel=1e-12)
    np.testing.assert_allclose(timed.predict(X), counts.predict(X) / 2, rtol=0.02)
    unshrunk = TreeRegressor(criterion="rpart_poisson", max_depth=1, target_params={"shrink": 0})
    unshrunk.fit(X, data.y)
    assert unshrunk.tree_.value[leaf, 0] == pytest.approx(events / time, rel=1e-12)


def test_a_model_file_with_impossible_regression_statistics_is_refused():
    data = load_dataset("quakes")
    payload = json.loads(TreeRegressor(max_depth=3).fit(data.X, data.y).to_json())
    payload["tree"]["statistics"][1][1] = -4.0  # a negative sum of squares
    with pytest.raises(ModelFileError, match="sum of y\\^2 is negative"):
        TreeRegressor.from_json(json.dumps(payload))


@pytest.mark.parametrize(
    "target, params, y",
    [
        ("mean", None, None),
        ("poisson_mean", None, None),
        ("rpart_poisson", {"shrink": 0.0}, None),
    ],
)
def test_the_regression_targets_pass_the_conformance_kit(target, params, y):
    from treekit_core.registry import get_registry
    from treekit_core.testing import small_data

    counts = np.random.default_rng(0).poisson(3.0, small_data(2)[0].shape[0]).astype(float)
    check_target(get_registry().create("target", target, params), y=counts if y is None else y)


def _python_squared_error(sums, total_weight, params):
    """A third party's squared error, written here as plain Python."""
    if total_weight <= 0.0:
        return 0.0
    mean = sums[0] / total_weight
    return sums[1] / total_weight - mean * mean


def test_a_regression_criterion_written_in_python_runs_in_the_compiled_growers():
    """A criterion reading the mean target's rows, written as plain Python in this file,
    grows the built-in squared error's tree, through kernels specialised to it."""
    from typing import ClassVar

    import attrs

    from treekit_core import Criterion, registered
    from treekit_core.kernels.specialised import criterion_kernels

    @attrs.define(slots=False)
    class ThirdPartySquaredError(Criterion):
        name: ClassVar[str] = "third_party_squared_error"
        evidence: ClassVar[str] = "moments"
        default_target: ClassVar[str] = "mean"
        impurity = staticmethod(_python_squared_error)

    data = load_dataset("quakes")
    with registered(ThirdPartySquaredError):
        ours = TreeRegressor(criterion=ThirdPartySquaredError(), min_samples_leaf=5)
        ours.fit(data.X, data.y)
        assert criterion_kernels(ThirdPartySquaredError()).specialised
    builtin = TreeRegressor(min_samples_leaf=5).fit(data.X, data.y)
    np.testing.assert_array_equal(ours.tree_.threshold, builtin.tree_.threshold)
    np.testing.assert_array_equal(ours.predict(data.X), builtin.predict(data.X))


def test_keeping_the_training_rows_leaves_copies_no_x():
    """Quantiles keep every training row's leaf, found by routing the training rows at fit;
    where every row is complete the rows are routed from X as it is (a copy of X was the
    fit's largest allocation after the growth), and each row reaches the leaf apply says,
    whole."""
    import tracemalloc

    rng = np.random.default_rng(3)
    X = rng.normal(size=(20_000, 20))
    y = X[:, 0] + rng.normal(size=20_000)
    model = TreeRegressor(max_depth=8).fit(X, y)
    tracemalloc.start()
    try:
        rows, nodes, shares = model._mixtures(model.tree_, X, training=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < X.nbytes / 4
    np.testing.assert_array_equal(rows, np.arange(X.shape[0]))
    np.testing.assert_array_equal(nodes, model.apply(X))
    np.testing.assert_array_equal(shares, 1.0)
    X[::50, 3] = np.nan  # incomplete rows: routed with C4.5's shares, the others as before
    rows, nodes, shares = model._mixtures(model.tree_, X, training=True)
    complete = ~np.isnan(X).any(axis=1)
    whole = np.isin(rows, np.flatnonzero(complete))
    np.testing.assert_array_equal(nodes[whole], model.apply(X[complete]))
    np.testing.assert_allclose(np.bincount(rows, shares), 1.0)


XPRED_FIXTURES = Path(__file__).parent / "fixtures" / "rpart_xpred_regression"


@pytest.mark.parametrize("name", ["airquality", "quakes", "car_test_frame", "solder", "warpbreaks"])
def test_xpred_equals_rparts_with_its_scaling_of_cp(name):
    """Issue 57: xpred.rpart prunes each fold's tree at cp x the full data's root risk per
    unit of weight (rpart's tests/xpred1.R), not at cp relative to the fold tree's own root
    risk (fixture made by tests/fixtures/rpart_xpred_regression/make_fixtures.R with the
    folds as a vector): every cross-validated prediction at every cp equal."""
    reference = json.loads((XPRED_FIXTURES / f"{name}.json").read_text())
    assert reference["rpart_version"] == "4.1.19"
    criterion = "squared_error" if reference["method"] == "anova" else "rpart_poisson"
    data = load_dataset(name)
    X = as_frame(data)
    root_model = rpart_like(criterion).fit(X, data.y)
    model = rpart_like(criterion).set_params(
        pruner_params={"alpha": 0.005 * root_model.pruning_path_["risk"][-1], "sequence": "rpart"}
    )
    model.fit(X, data.y)
    folds = np.asarray(reference["folds"])
    theirs = np.asarray(reference["xpred"], dtype=float)
    ours = model.xpred(X, data.y, xval=folds, cp=reference["cp"])
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


QUANTILE_FOREST = Path(__file__).parent / "fixtures" / "quantile_forest"


@pytest.mark.parametrize("name", ["continuous", "integer", "small_leaves"])
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantiles_equal_quantile_forests_for_every_interpolation(name, interpolation):
    """Issue 57: ``predict(X, quantiles=q, interpolation=...)`` equals quantile-forest
    1.4.2's ``RandomForestQuantileRegressor(bootstrap=False, max_features=1.0,
    max_samples_leaf=None)`` predicted with ``weighted_leaves=True`` (fixture made by
    tests/fixtures/quantile_forest/make_fixtures.py): a forest of three equal tie-free
    trees (each row weighing 3: quantile-forest's interpolation reads weights as repeated
    rows), in every cell but quantile-forest's values of quantile 0 that lie below the
    sample's leaf."""
    from treekit_core import ForestRegressor

    reference = json.loads((QUANTILE_FOREST / f"{name}.json").read_text())
    assert reference["quantile_forest_version"] == "1.4.2"
    X, y = np.asarray(reference["X"]), np.asarray(reference["y"])
    X_test, q = np.asarray(reference["X_test"]), reference["quantiles"]
    theirs = np.asarray(reference["predictions"][interpolation])
    leaf = reference["min_samples_leaf"]
    forest = ForestRegressor(
        n_estimators=3, bootstrap=False, max_features=None, min_samples_leaf=leaf, random_state=0
    ).fit(X, y)
    # the same tree: every leaf of quantile-forest's holds the rows of one leaf of ours
    ours, leaves = forest.apply(X)[:, 0], np.asarray(reference["leaves"])
    assert len(set(zip(ours, leaves, strict=True))) == len(set(ours)) == len(set(leaves))
    ours = forest.predict(X_test, quantiles=q, interpolation=interpolation)
    # quantile 0 is the smallest response of the sample's leaf; quantile-forest returns
    # for some rows a value below it (a response of a row outside the leaf: its search
    # starts at the first training row, which has weight 0, and rounding keeps it as the
    # floor). Every other cell equal.
    reached, trained = forest.apply(X_test)[:, 0], forest.apply(X)[:, 0]
    smallest = np.array([y[trained == k].min() for k in reached])
    np.testing.assert_array_equal(ours[:, 0], smallest)
    leaked = theirs[:, 0] < smallest
    assert leaked.sum() <= 12  # the fixture's count, at most
    theirs = theirs.copy()
    theirs[leaked, 0] = smallest[leaked]
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    # one tree: unit weights, where quantile-forest's rule is numpy's method of the same
    # name (but for "nearest", whose ties it breaks by the parity of the cumulative weight)
    if interpolation != "nearest":
        tree = TreeRegressor(min_samples_leaf=leaf).fit(X, y)
        leaves, reached = tree.apply(X), tree.apply(X_test)
        expected = [np.quantile(y[leaves == k], q, method=interpolation) for k in reached]
        np.testing.assert_allclose(
            tree.predict(X_test, quantiles=q, interpolation=interpolation), expected, rtol=1e-12
        )


def test_interpolation_is_checked_and_defaults_to_the_inverted_cdf():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 2)), rng.normal(size=50)
    model = TreeRegressor(min_samples_leaf=10).fit(X, y)
    leaves = model.apply(X)
    for q in (0.1, 0.5, 0.9):
        expected = [np.quantile(y[leaves == leaf], q, method="inverted_cdf") for leaf in leaves]
        np.testing.assert_array_equal(model.predict(X, quantiles=[q])[:, 0], expected)
    with pytest.raises(ValueError, match="interpolation must be one of 'inverted_cdf'"):
        model.predict(X, quantiles=[0.5], interpolation="cubic")


def test_quantiles_survive_a_json_round_trip_when_the_leaf_responses_are_written():
    """Issue 57: ``to_json(leaf_responses=True)`` writes every leaf's training responses,
    so the loaded model predicts the same quantiles (tree and forest; sample weights and
    missing values make weights that are not 1); without it the loaded model says why it
    has none. The file's leaf responses are checked at load."""
    from treekit_core import ForestRegressor

    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 3))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0]) + rng.normal(size=300)
    weight = rng.integers(1, 3, size=300).astype(float)
    q = [0.1, 0.5, 0.9]
    for model in (
        TreeRegressor(min_samples_leaf=10).fit(X, y, sample_weight=weight),
        ForestRegressor(n_estimators=4, min_samples_leaf=5, random_state=0).fit(X, y),
    ):
        text = model.to_json(leaf_responses=True)
        loaded = type(model).from_json(text)
        for interpolation in ("inverted_cdf", "linear"):
            np.testing.assert_array_equal(
                loaded.predict(X, quantiles=q, interpolation=interpolation),
                model.predict(X, quantiles=q, interpolation=interpolation),
            )
        plain = type(model).from_json(model.to_json())
        with pytest.raises(ValueError, match="to_json\\(leaf_responses=True\\)"):
            plain.predict(X, quantiles=q)
        payload = json.loads(text)
        size = len(payload["leaf_responses"]["trees"][0]["rows"])
        for broken, message in (
            ({"starts": [1]}, "starts must be"),
            ({"rows": [10**6] * size}, "rows must be"),
            ({"rows": None, "values": [0.0] * size}, "not both"),
            ({"weights": [-1.0] * size}, "weights"),
        ):
            bad = json.loads(text)
            bad["leaf_responses"]["trees"][0].update(broken)
            with pytest.raises(ModelFileError, match=message):
                type(model).from_json(json.dumps(bad))
        bad = json.loads(text)
        bad["leaf_responses"]["responses"][0] = "nan"
        with pytest.raises(ModelFileError, match="finite"):
            type(model).from_json(json.dumps(bad))
    with pytest.raises(ValueError, match="holds no leaf responses"):
        plain.to_json(leaf_responses=True)


def test_poisson_trees_predict_the_quantiles_of_their_leaves_counts():
    """Issue 57: quantiles for rpart_poisson trees: a leaf's rows' observed rates (the
    counts, with unit exposures), as numpy's inverted CDF and linear quantiles of them."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(400, 2))
    counts = rng.poisson(np.exp(0.8 * X[:, 0] + 1.0)).astype(float)
    model = TreeRegressor(criterion="rpart_poisson", min_samples_leaf=20).fit(X, counts)
    leaves = model.apply(X)
    for method in ("inverted_cdf", "linear"):
        expected = [np.quantile(counts[leaves == k], [0.25, 0.75], method=method) for k in leaves]
        # (linear: quantile-forest's arithmetic, within rounding of numpy's)
        np.testing.assert_allclose(
            model.predict(X, quantiles=[0.25, 0.75], interpolation=method), expected, rtol=1e-12
        )
    exposure = rng.uniform(0.5, 2.0, size=400)
    rated = TreeRegressor(criterion="rpart_poisson", min_samples_leaf=20)
    rated.fit(X, np.column_stack([exposure, counts]))
    leaves = rated.apply(X)
    rates = counts / exposure
    expected = [np.quantile(rates[leaves == k], 0.5, method="inverted_cdf") for k in leaves]
    np.testing.assert_array_equal(rated.predict(X, quantiles=[0.5])[:, 0], expected)
