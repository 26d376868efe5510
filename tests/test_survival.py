"""Issue 41: survival trees. rpart's exponential method (fixtures made by
tests/fixtures/rpart_exp/make_fixtures.R with rpart 4.1.19 and survival 3.5.3) and
scikit-survival 0.28's log-rank SurvivalTree; hand-computed statistics and curves."""

import json
import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_regression import as_frame

from treekit_core import CompositionError, ModelFileError, SurvivalTree, concordance_index
from treekit_core.datasets import load_dataset, survival_array

FIXTURES = Path(__file__).parent / "fixtures" / "rpart_exp"


def float32_exact(X):
    """scikit-survival fits on float32 features: compare on values it represents exactly."""
    return np.asarray(X, dtype=np.float64).astype(np.float32).astype(np.float64)


# -- rpart's exponential method ----------------------------------------------------------


@pytest.fixture(scope="module", params=["lung", "veteran", "pbc", "gbsg", "colon"])
def rpart_case(request):
    name = request.param
    reference = json.loads((FIXTURES / f"{name}.json").read_text())
    assert reference["rpart_version"] == "4.1.19"
    data = load_dataset(name)
    X = as_frame(data)
    model = SurvivalTree(
        criterion="exponential",
        min_samples_split=20,
        min_samples_leaf=7,
        propagator="surrogate",
        evaluator="surrogate",
        pruner="cost_complexity",
        pruner_params={"alpha": 0.0, "sequence": "rpart"},
    ).fit(X, data.y)
    return name, reference, data, X, model


def test_rparts_rescaled_time(rpart_case):
    from treekit_core.builtins.targets import rpart_exponential_time

    name, reference, data, X, model = rpart_case
    scaled = rpart_exponential_time(data.y["time"], data.y["event"])
    np.testing.assert_allclose(scaled, reference["scaled_time"], rtol=1e-12)


def test_rparts_exponential_tree_is_reproduced(rpart_case):
    name, reference, data, X, model = rpart_case
    assert len(data.y) == reference["n_rows"]
    np.testing.assert_allclose(model.predict(X), reference["predict"], rtol=1e-7)
    ours, theirs = model.apply(X), np.asarray(reference["where"])
    pairs = set(zip(ours.tolist(), theirs.tolist(), strict=True))
    assert len(pairs) == len(set(ours.tolist())) == len(set(theirs.tolist()))
    assert model.get_n_leaves() == reference["frame"]["var"].count("<leaf>")


def test_pruning_between_rows_of_rparts_cp_table(rpart_case):
    name, reference, data, X, model = rpart_case
    table = reference["cptable"]
    for row in range(len(table)):
        above = table[row - 1]["CP"] if row > 0 else 2.0 * table[0]["CP"]
        for cp in (table[row]["CP"] + (above - table[row]["CP"]) * f for f in (0.01, 0.5, 0.99)):
            if table[row]["CP"] < cp < above:
                assert model.prune(cp=cp).get_n_leaves() == table[row]["nsplit"] + 1, (row, cp)
    path = model.pruning_path_
    ours = dict(zip(path["n_splits"].tolist(), path["rel_error"].tolist(), strict=True))
    for row in table:
        assert ours[row["nsplit"]] == pytest.approx(row["rel error"], rel=1e-9)
    assert "rel error" in model.cp_table()


def test_the_exponential_curves_are_the_leaf_rate_times_rparts_rescaled_time(rpart_case):
    from treekit_core.builtins.targets import rpart_exponential_time

    name, reference, data, X, model = rpart_case
    hazard = model.predict_cumulative_hazard_function(X[:5], return_array=True)
    baseline = rpart_exponential_time(data.y["time"], data.y["event"])
    at = np.searchsorted(model.unique_times_, data.y["time"][:5])
    np.testing.assert_allclose(
        hazard[np.arange(5), at], model.predict(X[:5]) * baseline[:5], rtol=1e-12
    )
    survival = model.predict_survival_function(X[:5], return_array=True)
    np.testing.assert_allclose(survival, np.exp(-hazard), rtol=1e-12)


# -- scikit-survival's log-rank tree -------------------------------------------------------


def synthetic(n, seed):
    rng = np.random.default_rng(seed)
    X = float32_exact(rng.normal(size=(n, 6)))
    hazard = np.exp(0.8 * X[:, 0] - 0.5 * X[:, 1] + 0.3 * X[:, 2] * X[:, 3])
    event_time, censor = rng.exponential(1 / hazard), rng.exponential(1.5, n)
    return X, survival_array(event_time <= censor, np.minimum(event_time, censor).round(2))


def survival_sets():
    sets = {}
    for name in ("veteran", "lung", "pbc"):
        data = load_dataset(name, dropna=True)
        sets[name] = (float32_exact(data.X), data.y)
    for n, seed in ((300, 1), (1000, 2)):
        sets[f"synthetic_{n}"] = synthetic(n, seed)
    return sets


def sksurv_hazards(X, y, **params):
    """scikit-survival's cumulative hazards, or None where ten random_states (its random
    feature order) disagree."""
    sksurv_tree = pytest.importorskip("sksurv.tree")
    fits = [
        sksurv_tree.SurvivalTree(random_state=seed, **params)
        .fit(X, y)
        .predict_cumulative_hazard_function(X, return_array=True)
        for seed in range(10)
    ]
    return fits[0] if all(np.array_equal(fits[0], f) for f in fits[1:]) else None


@pytest.mark.parametrize("name", list(survival_sets()))
def test_the_log_rank_tree_scikit_survival_grows(name):
    X, y = survival_sets()[name]
    theirs = sksurv_hazards(X, y, min_samples_leaf=10)
    if theirs is None:
        pytest.skip("scikit-survival's tree depends on its random feature order here")
    ours = SurvivalTree(criterion="logrank", min_samples_leaf=10).fit(X, y)
    np.testing.assert_allclose(
        ours.predict_cumulative_hazard_function(X, return_array=True), theirs, rtol=1e-9, atol=1e-9
    )
    sksurv_tree = pytest.importorskip("sksurv.tree")
    reference = sksurv_tree.SurvivalTree(min_samples_leaf=10, random_state=0).fit(X, y)
    np.testing.assert_array_equal(ours.unique_times_, reference.unique_times_)
    np.testing.assert_array_equal(ours.is_event_time_, reference.is_event_time_)
    np.testing.assert_allclose(ours.predict(X), reference.predict(X), rtol=1e-9)
    np.testing.assert_allclose(
        ours.predict_survival_function(X, return_array=True),
        reference.predict_survival_function(X, return_array=True),
        rtol=1e-9,
        atol=1e-12,
    )


def test_most_of_the_scikit_survival_comparisons_ran():
    ran = sum(
        sksurv_hazards(X, y, min_samples_leaf=10) is not None for X, y in survival_sets().values()
    )
    assert ran >= 3


def sksurv_statistic(time, event, left):
    """scikit-survival's log-rank statistic of a cut, summed over the node's times."""
    numer = denom = 0.0
    for t in np.unique(time):
        at_risk, dead = (time >= t).sum(), ((time == t) & event).sum()
        ratio = (time[left] >= t).sum() / at_risk
        numer += ((time[left] == t) & event[left]).sum() - dead * ratio
        if at_risk > 1:
            denom += ratio * (1 - ratio) * (at_risk - dead) / (at_risk - 1) * dead
    return abs(numer / np.sqrt(denom)) if denom else -np.inf


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 40),
    d=st.integers(1, 3),
    censoring=st.sampled_from([0.0, 0.5, 0.95, 1.0]),
    min_samples_leaf=st.integers(1, 4),
)
def test_the_kernel_finds_the_largest_log_rank_statistic_by_hand(
    seed, n, d, censoring, min_samples_leaf
):
    """Small nodes with tied times, time 0, censoring-only and single-event nodes: the
    kernel's best cut has the largest statistic of every cut, summed by hand."""
    from treekit_core.kernels.logrank import best_logrank_split_of_node

    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(n, d)).astype(float)
    time = rng.integers(0, 5, size=n).astype(float)  # ties and time 0
    event = rng.random(n) >= censoring
    feature, threshold, score, _ = best_logrank_split_of_node(
        event.astype(float),
        time,
        np.zeros(n),  # no delayed entry
        X,
        np.arange(n),
        np.ones(n),
        np.arange(d),
        min_samples_leaf,
        0.0,
    )
    best = -np.inf
    for f in range(d):
        for cut in np.unique(X[:, f])[:-1]:
            left = X[:, f] <= cut
            if min(left.sum(), (~left).sum()) >= min_samples_leaf:
                best = max(best, sksurv_statistic(time, event, left))
    if best == -np.inf:
        assert feature < 0
        return
    assert score == pytest.approx(best, rel=1e-9)
    left = X[:, feature] <= threshold
    assert sksurv_statistic(time, event, left) == pytest.approx(best, rel=1e-9)


def test_leaf_curves_are_nelson_aalen_and_kaplan_meier_by_hand():
    # times 1, 2, 2 (one censored), 3 censored, 5, in one node
    X = np.zeros((5, 1))
    y = survival_array([True, True, False, False, True], [1.0, 2.0, 2.0, 3.0, 5.0])
    model = SurvivalTree(min_samples_split=100).fit(X, y)  # the root alone
    np.testing.assert_array_equal(model.unique_times_, [1.0, 2.0, 3.0, 5.0])
    np.testing.assert_array_equal(model.is_event_time_, [True, True, False, True])
    hazard = model.predict_cumulative_hazard_function(X[:1], return_array=True)[0]
    np.testing.assert_allclose(hazard, [1 / 5, 1 / 5 + 1 / 4, 1 / 5 + 1 / 4, 1 / 5 + 1 / 4 + 1])
    survival = model.predict_survival_function(X[:1], return_array=True)[0]
    np.testing.assert_allclose(survival, [4 / 5, 4 / 5 * 3 / 4, 4 / 5 * 3 / 4, 0.0])
    # the risk score sums the hazard over the event times
    assert model.predict(X[:1])[0] == pytest.approx(hazard[[0, 1, 3]].sum())
    step = model.predict_survival_function(X[:1])[0]
    assert step(0.5) == 1.0 and step(2.5) == pytest.approx(0.6) and step(9) == 0.0


def test_weights_count_as_repeated_rows():
    X, y = synthetic(200, 3)
    weight = np.random.default_rng(0).integers(1, 4, size=200)
    # row-counting minimums off: a row of weight 3 is one row, three copies are three
    params = dict(min_samples_split=2, min_samples_leaf=1, max_depth=5)
    weighted = SurvivalTree(**params).fit(X, y, sample_weight=weight.astype(float))
    repeated = SurvivalTree(**params).fit(np.repeat(X, weight, 0), np.repeat(y, weight))
    np.testing.assert_allclose(
        weighted.predict_cumulative_hazard_function(X, return_array=True),
        repeated.predict_cumulative_hazard_function(X, return_array=True),
        rtol=1e-12,
    )


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 60))
def test_concordance_is_scikit_survivals(seed, n):
    metrics = pytest.importorskip("sksurv.metrics")
    rng = np.random.default_rng(seed)
    time = rng.integers(1, 8, size=n).astype(float)
    event = rng.random(n) < 0.6
    estimate = rng.integers(0, 4, size=n) + rng.choice([0.0, 1e-9, 0.3], size=n)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            theirs = metrics.concordance_index_censored(event, time, estimate)[0]
        except Exception:  # no event that precedes another time
            theirs = np.nan
    if np.isnan(theirs):  # scikit-survival's NaN (or its exception): no comparable pair
        with pytest.raises(ValueError, match="no comparable pairs"):
            concordance_index(event, time, estimate)
        return
    assert concordance_index(event, time, estimate) == pytest.approx(theirs, rel=1e-12)


# -- inputs, compositions, model files ------------------------------------------------------


def test_y_as_surv_or_as_time_and_event_columns():
    data = load_dataset("veteran")
    structured = SurvivalTree(min_samples_leaf=10).fit(data.X, data.y)
    columns = np.column_stack([data.y["time"], data.y["event"].astype(float)])
    plain = SurvivalTree(min_samples_leaf=10).fit(data.X, columns)
    np.testing.assert_array_equal(structured.predict(data.X), plain.predict(data.X))
    renamed = data.y.astype([("dead", "?"), ("days", "<f8")])  # any field names
    again = SurvivalTree(min_samples_leaf=10).fit(data.X, renamed)
    np.testing.assert_array_equal(again.predict(data.X), plain.predict(data.X))
    assert structured.score(data.X, data.y) > 0.6


@pytest.mark.parametrize(
    "y, message",
    [
        (np.column_stack([[-1.0, 2, 3, 4], [1, 0, 1, 1]]), "times must be >= 0"),
        (np.column_stack([[1.0, 2, 3, 4], [1, 2, 1, 1]]), "y\\[:, 1\\] \\(event\\) holds 2"),
        (np.array([(1.0, 2.0)] * 4, dtype=[("a", "<f8"), ("b", "<f8")]), "must be boolean"),
        (np.ones(4), "structured array of \\(event, time\\)"),
    ],
)
def test_bad_follow_up_is_refused_naming_y(y, message):
    with pytest.raises(ValueError, match=message):
        SurvivalTree().fit(np.arange(8.0).reshape(4, 2), y)


def test_the_exponential_method_needs_positive_times_and_deaths():
    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(ValueError, match="needs times > 0"):
        SurvivalTree(criterion="exponential").fit(X, survival_array([1, 1, 0, 1], [0, 1, 2, 3]))
    with pytest.raises(ValueError, match="no event"):
        SurvivalTree(criterion="exponential").fit(X, survival_array([0, 0, 0, 0], [1, 1, 2, 3]))
    # time 0 is a time like any other for log-rank trees
    SurvivalTree().fit(X, survival_array([1, 1, 0, 1], [0, 1, 2, 3]))


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"propagator": "surrogate", "evaluator": "surrogate"},
        {"pruner": "mdl", "pruner_params": {"alpha": 0.01}},
        {"splitter_params": {"gain_ratio": True}},
        {"criterion": "exponential", "pruner": "cost_complexity"},
    ],
    ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()) or "default",
)
def test_compositions_with_missing_values_round_trip_exactly(params):
    data = load_dataset("lung")  # missing values
    model = SurvivalTree(min_samples_leaf=10, **params).fit(data.X, data.y)
    hazard = model.predict_cumulative_hazard_function(data.X, return_array=True)
    assert np.isfinite(hazard).all() and (np.diff(hazard, axis=1) >= -1e-12).all()
    for copy in (SurvivalTree.from_json(model.to_json()), pickle.loads(pickle.dumps(model))):
        np.testing.assert_array_equal(copy.predict(data.X), model.predict(data.X))
        np.testing.assert_array_equal(
            copy.predict_survival_function(data.X, return_array=True),
            model.predict_survival_function(data.X, return_array=True),
        )


def test_what_cannot_work_is_refused_naming_both_components():
    data = load_dataset("veteran")
    with pytest.raises(CompositionError, match="pruner 'cost_complexity'.*target 'survival'"):
        SurvivalTree(pruner="cost_complexity").fit(data.X, data.y)
    with pytest.raises(ValueError, match="a log-rank tree prunes by split complexity"):
        SurvivalTree().fit(data.X, data.y).prune(cp=0.01)
    # (nominal features with the log-rank criterion are searched since issue 55)
    assert SurvivalTree(max_depth=2).fit(as_frame(data), data.y).get_depth() == 2
    with pytest.raises(ValueError, match="censored follow-up"):
        SurvivalTree(criterion="gini").fit(data.X, data.y)


def test_a_model_file_with_impossible_curves_is_refused():
    data = load_dataset("veteran")
    payload = json.loads(SurvivalTree(min_samples_leaf=10).fit(data.X, data.y).to_json())
    payload["tree"]["component_state"]["target"]["hazard"][0] = -1.0
    with pytest.raises(ModelFileError, match="target.hazard holds values below 0"):
        SurvivalTree.from_json(json.dumps(payload))
    payload = json.loads(SurvivalTree(min_samples_leaf=10).fit(data.X, data.y).to_json())
    payload["tree"]["component_state"]["target"]["jump_index"][0] = 10**6
    with pytest.raises(ModelFileError, match="jump_index points past"):
        SurvivalTree.from_json(json.dumps(payload))


# -- the random survival forest (issue 42) --------------------------------------------------


def test_a_one_tree_forest_without_bootstrap_is_the_survival_tree():
    from treekit_core import ForestSurvival

    data = load_dataset("veteran")
    params = dict(min_samples_leaf=5, criterion="logrank")
    forest = ForestSurvival(n_estimators=1, bootstrap=False, max_features=None, **params)
    forest.fit(data.X, data.y)
    tree = SurvivalTree(**params).fit(data.X, data.y)
    for method in ("predict_cumulative_hazard_function", "predict_survival_function"):
        np.testing.assert_array_equal(
            getattr(forest, method)(data.X, return_array=True),
            getattr(tree, method)(data.X, return_array=True),
        )
    np.testing.assert_allclose(forest.predict(data.X), tree.predict(data.X), rtol=1e-12)


def test_the_forests_curves_are_the_average_of_its_trees():
    from treekit_core import ForestSurvival
    from treekit_core.builtins.evaluators import apply_tree

    data = load_dataset("veteran")
    forest = ForestSurvival(n_estimators=4, random_state=0, oob_score=True).fit(data.X, data.y)
    target, grid = forest.composition_.target, forest.unique_times_
    by_hand = np.mean(
        [
            target.survival_curves(
                tree.component_state["target"], tree, apply_tree(tree, data.X), grid
            )
            for tree in forest.estimators_
        ],
        axis=0,
    )
    # (summed from the leaves' steps: equal within a few units in the last place)
    np.testing.assert_allclose(
        forest.predict_survival_function(data.X, return_array=True), by_hand, atol=1e-14
    )
    scored = ~np.isnan(forest.oob_prediction_)
    assert scored.sum() > 100
    assert forest.oob_score_ == pytest.approx(
        concordance_index(
            data.y["event"][scored], data.y["time"][scored], forest.oob_prediction_[scored]
        )
    )
    for copy in (type(forest).from_json(forest.to_json()), pickle.loads(pickle.dumps(forest))):
        np.testing.assert_array_equal(copy.predict(data.X), forest.predict(data.X))


# -- metrics (issue 42) ------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(5, 60), censoring=st.floats(0.0, 0.9))
def test_brier_scores_are_scikit_survivals(seed, n, censoring):
    metrics = pytest.importorskip("sksurv.metrics")
    from treekit_core.tools.metrics import brier_score, integrated_brier_score

    rng = np.random.default_rng(seed)
    train = survival_array(rng.random(n) >= censoring, rng.integers(1, 10, n).astype(float))
    test = survival_array(rng.random(n) >= censoring, rng.integers(1, 10, n).astype(float))
    low, high = test["time"].min(), test["time"].max()
    times = np.unique(rng.uniform(low, high, 4).round(1))
    times = times[(times >= low) & (times < high)]
    if times.size == 0:
        return
    estimate = rng.uniform(0, 1, (n, times.size))
    try:
        theirs = metrics.brier_score(train, test, estimate, times)
    except ValueError as error:  # past the training follow-up, or all censored
        with pytest.raises(ValueError, match="censored" if "censored" in str(error) else "time"):
            brier_score(train, test, estimate, times)
        return
    ours = brier_score(train, test, estimate, times)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)
    if times.size >= 2:
        assert integrated_brier_score(train, test, estimate, times) == pytest.approx(
            metrics.integrated_brier_score(train, test, estimate, times), rel=1e-12
        )


def test_the_brier_score_of_a_forests_survival_on_held_out_rows():
    from treekit_core import ForestSurvival
    from treekit_core.tools.metrics import brier_score, integrated_brier_score

    data = load_dataset("pbc", dropna=True)
    fold = np.arange(len(data.y)) % 3 == 0
    forest = ForestSurvival(n_estimators=20, random_state=0, min_samples_leaf=10)
    forest.fit(data.X[~fold], data.y[~fold])
    test = data.y[fold]
    times = np.quantile(test["time"][test["event"]], [0.2, 0.4, 0.6, 0.8])
    survival = np.array(
        [[f(t) for t in times] for f in forest.predict_survival_function(data.X[fold])]
    )
    _, scores = brier_score(data.y[~fold], test, survival, times)
    # a useful model beats predicting 0.5 for everyone (Brier 0.25)
    assert (scores < 0.25).all()
    assert 0 < integrated_brier_score(data.y[~fold], test, survival, times) < 0.25


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(5, 80), tau=st.sampled_from([None, 6.0]))
def test_unos_concordance_is_scikit_survivals(seed, n, tau):
    metrics = pytest.importorskip("sksurv.metrics")
    from treekit_core.tools.metrics import concordance_index_ipcw

    rng = np.random.default_rng(seed)
    train = survival_array(rng.random(n) < 0.7, rng.integers(1, 12, n).astype(float))
    test = survival_array(rng.random(n) < 0.7, rng.integers(1, 11, n).astype(float))
    estimate = rng.integers(0, 5, n) + rng.choice([0.0, 0.25], n)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            theirs = metrics.concordance_index_ipcw(train, test, estimate, tau=tau)[0]
        except Exception:
            theirs = np.nan
    if np.isnan(theirs):
        with pytest.raises(ValueError):
            concordance_index_ipcw(train, test, estimate, tau=tau)
        return
    assert concordance_index_ipcw(train, test, estimate, tau=tau) == pytest.approx(
        theirs, rel=1e-12
    )


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(8, 80), ties=st.booleans())
def test_time_dependent_auc_is_scikit_survivals(seed, n, ties):
    metrics = pytest.importorskip("sksurv.metrics")
    from treekit_core.tools.metrics import cumulative_dynamic_auc

    rng = np.random.default_rng(seed)
    train = survival_array(rng.random(n) < 0.7, rng.integers(1, 12, n).astype(float))
    test = survival_array(rng.random(n) < 0.7, rng.integers(1, 11, n).astype(float))
    estimate = rng.integers(0, 4, n) + (0.0 if ties else rng.random(n))
    times = np.array([3.0, 5.0, 7.0])
    times = times[(times >= test["time"].min()) & (times < test["time"].max())]
    if times.size == 0:
        return
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            theirs = metrics.cumulative_dynamic_auc(train, test, estimate, times)
        except Exception:
            theirs = None
    if theirs is None or not np.isfinite(theirs[1]):
        return  # no case or no control at a time: both undefined
    scores, mean = cumulative_dynamic_auc(train, test, estimate, times)
    np.testing.assert_allclose(scores, theirs[0], rtol=1e-12)
    assert mean == pytest.approx(theirs[1], rel=1e-12)


@pytest.mark.parametrize("forest", [False, True])
def test_shap_values_of_the_risk_score_add_up_to_predict(forest):
    shap = pytest.importorskip("shap")
    from treekit_core import ForestSurvival
    from treekit_core.export import to_shap

    data = load_dataset("veteran")
    model = (
        ForestSurvival(n_estimators=5, random_state=0, min_samples_leaf=10)
        if forest
        else SurvivalTree(min_samples_leaf=10)
    ).fit(data.X, data.y)
    explainer = shap.TreeExplainer(to_shap(model, missing="larger_share"))
    values = explainer.shap_values(data.X)
    np.testing.assert_allclose(
        values.sum(axis=1) + explainer.expected_value, model.predict(data.X), rtol=1e-9
    )


def test_scikit_learns_model_selection_searches_survival_compositions():
    from sklearn.model_selection import GridSearchCV, KFold, cross_val_score

    data = load_dataset("veteran")
    folds = KFold(3, shuffle=True, random_state=0)
    scores = cross_val_score(SurvivalTree(min_samples_leaf=10), data.X, data.y, cv=folds)
    for k, (train, test) in enumerate(folds.split(data.X)):
        model = SurvivalTree(min_samples_leaf=10).fit(data.X[train], data.y[train])
        assert scores[k] == pytest.approx(model.score(data.X[test], data.y[test]))
    grid = {"min_samples_leaf": [5, 20], "criterion": ["logrank", "exponential"]}
    search = GridSearchCV(SurvivalTree(), grid, cv=folds).fit(data.X, data.y)
    assert search.best_estimator_.composition_.criterion.name == search.best_params_["criterion"]


def test_metrics_refuse_what_would_come_back_silently_wrong():
    from treekit_core.tools.metrics import brier_score, cumulative_dynamic_auc

    y = survival_array([True, False, True, True], [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="finite"):
        concordance_index(y["event"], y["time"], [0.1, np.nan, 0.3, 0.2])
    with pytest.raises(ValueError, match="one length"):
        concordance_index(y["event"], y["time"], [0.1, 0.2])
    with pytest.raises(ValueError, match="finite survival"):
        brier_score(y, y, [[0.5], [np.nan], [0.5], [0.5]], [2.0])
    with pytest.raises(ValueError, match="finite risk"):
        cumulative_dynamic_auc(y, y, [0.5, np.nan, 0.5, 0.5], [2.0])


def test_survival_at_times_reads_the_step_functions():
    data = load_dataset("lung")  # missing values: mixtures of leaves
    model = SurvivalTree(min_samples_leaf=10).fit(data.X, data.y)
    times = np.array([0.0, 5.0, 100.5, 365.0, data.y["time"].max() + 10])
    steps = model.predict_survival_function(data.X)
    expected = np.array([[f(t) for t in times] for f in steps])
    np.testing.assert_array_equal(model.predict_survival_at(data.X, times), expected)
