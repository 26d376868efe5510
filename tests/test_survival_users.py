"""Issue 55: what a survival analyst hit. Importances from the log-rank statistic,
follow-up read from a frame's column names, all-censored follow-up refused, predictions
past the follow-up flagged, survival quantiles as ``survival::quantile.survfit`` gives them
(fixtures made by tests/fixtures/survfit_quantiles/make_fixtures.R with survival 3.5.3)."""

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from treekit_core import FollowUpWarning, ForestSurvival, SurvivalTree
from treekit_core.builtins.survival_curves import (
    curves_on_grid,
    leaf_jumps,
    survival_quantiles,
    unique_times,
)
from treekit_core.datasets import survival_array

FIXTURE = Path(__file__).parent / "fixtures" / "survfit_quantiles" / "survfit_quantiles.json"


def _survfit():
    reference = json.loads(FIXTURE.read_text())
    assert reference["survival_version"] == "3.5.3"
    return reference["cases"]


def _expected(values):
    return np.array([np.inf if v is None else v for v in values], dtype=np.float64)


@pytest.mark.parametrize("case", ["veteran_celltype", "lung_ecog", "crafted"])
def test_leaf_quantiles_are_survfits(case):
    """Each group as one leaf: its Kaplan-Meier jumps (leaf_jumps, the survival target's
    state) and survival_quantiles give survfit's quantiles, flats at a level included."""
    data = _survfit()[case]
    time = np.asarray(data["time"], dtype=np.float64)
    event = np.asarray(data["status"]) == 1
    group = np.asarray(data["group"])
    codes = np.searchsorted(data["groups"], group)
    grid, has_event = unique_times(event, time)
    rows = np.arange(time.size)
    state = {
        "grid": grid,
        "is_event_time": has_event.astype(float),
        **leaf_jumps(event, time, grid, rows, codes, np.ones(time.size), len(data["groups"])),
    }
    curves = curves_on_grid(state, np.arange(len(data["groups"])), grid.size, "survival")
    last = grid[state["last_index"]]
    for k, q in enumerate(data["q"]):
        got = survival_quantiles(grid, curves, q, last)
        want = _expected([per_group[k] for per_group in data["quantile"]])
        np.testing.assert_array_equal(got, want, err_msg=f"{case} q={q}")


def test_survival_time_of_a_tree_is_its_leafs_survfit_quantile():
    """A log-rank tree grown out on the cell type alone has a leaf per cell type; every
    row's predicted median (and quartiles) is survfit's for its cell type."""
    data = _survfit()["veteran_celltype"]
    time = np.asarray(data["time"], dtype=np.float64)
    y = survival_array(np.asarray(data["status"]) == 1, time)
    codes = np.searchsorted(data["groups"], data["group"]).astype(np.float64)
    model = SurvivalTree(min_samples_split=2, min_samples_leaf=1).fit(codes[:, None], y)
    assert model.get_n_leaves() == len(data["groups"])
    for k, q in enumerate(data["q"]):
        want = _expected([data["quantile"][int(c)][k] for c in codes])
        np.testing.assert_array_equal(model.predict_survival_time(codes[:, None], q=q), want)


def test_survival_time_refuses_a_level_outside_0_1():
    X, y = _noise_and_signal(60)
    model = SurvivalTree(max_depth=2).fit(X, y)
    for q in (0.0, 1.5, -1, float("nan"), "half", True):
        with pytest.raises(ValueError, match="q must be a number in"):
            model.predict_survival_time(X, q=q)
    np.testing.assert_array_equal(model.predict_survival_time(X, q=1.0), 0.0)


def _noise_and_signal(n, seed=0):
    rng = np.random.default_rng(seed)
    signal, noise = rng.normal(size=n), rng.normal(size=n)
    time = rng.exponential(np.exp(-signal))
    censor = rng.exponential(2.0, size=n)
    y = survival_array(time <= censor, np.minimum(time, censor))
    return np.column_stack([signal, noise]), y


@pytest.mark.parametrize("criterion", ["logrank", "exponential"])
def test_survival_importances_credit_the_informative_feature(criterion):
    """Non-negative, summing to 1, the informative column first: a log-rank tree's node
    share of events is additive over its children, so the impurity decrease gave zeros
    (a tree) and rounding noise (a forest); the log-rank statistic is credited instead."""
    X, y = _noise_and_signal(400)
    for model in (
        SurvivalTree(criterion=criterion, max_depth=4),
        SurvivalTree(criterion=criterion),
        ForestSurvival(criterion=criterion, n_estimators=20, random_state=0),
    ):
        importances = model.fit(X, y).feature_importances_
        assert (importances >= 0).all(), importances
        assert importances.sum() == pytest.approx(1.0)
        assert importances[0] > importances[1], (model, importances)


def test_logrank_importances_are_weighted_logrank_statistics():
    """By hand: a node's credit is its weight times the log-rank statistic of its cut."""
    X, y = _noise_and_signal(300, seed=3)
    tree = SurvivalTree(max_depth=2).fit(X, y).tree_
    credit = np.zeros(2)
    for node in np.flatnonzero(~tree.is_leaf):
        credit[tree.feature[node]] += tree.weight[node] * tree.node_fields["improvement"][node]
    model = SurvivalTree(max_depth=2).fit(X, y)
    np.testing.assert_allclose(model.feature_importances_, credit / credit.sum(), rtol=1e-12)


def test_a_stump_of_one_leaf_has_zero_importances():
    X, y = _noise_and_signal(40)
    model = SurvivalTree(min_samples_split=1000).fit(X, y)
    assert model.get_n_leaves() == 1
    np.testing.assert_array_equal(model.feature_importances_, [0.0, 0.0])


pd = pytest.importorskip("pandas")


@pytest.mark.parametrize("order", [("event", "time"), ("time", "event"), ("status", "futime")])
def test_a_frame_of_follow_up_is_read_by_its_column_names(order):
    """Columns named event/status and time/futime are read by name in either order; a
    time column of 0/1 values is no longer taken for the event."""
    rng = np.random.default_rng(1)
    n = 80
    time = rng.integers(0, 2, size=n).astype(float) + 0.0  # times of 0 and 1 only
    time[:5] = [0.0, 1.0, 1.0, 0.0, 1.0]
    event = rng.random(n) < 0.6
    X = rng.normal(size=(n, 2))
    columns = {
        "event": event.astype(int),
        "time": time,
        "status": event.astype(int),
        "futime": time,
    }
    frame = pd.DataFrame({name: columns[name] for name in order})
    by_name = SurvivalTree(max_depth=2).fit(X, frame)
    by_array = SurvivalTree(max_depth=2).fit(X, survival_array(event, time))
    np.testing.assert_array_equal(by_name.unique_times_, by_array.unique_times_)
    np.testing.assert_array_equal(by_name.predict(X), by_array.predict(X))


def test_a_frame_of_two_unnamed_0_1_columns_is_refused_naming_them():
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"a": rng.integers(0, 2, 30), "b": rng.integers(0, 2, 30)})
    with pytest.raises(ValueError, match=r"\['a', 'b'\], both of them 0/1"):
        SurvivalTree().fit(rng.normal(size=(30, 2)), frame)


def test_a_frame_of_other_names_is_read_as_time_then_event():
    rng = np.random.default_rng(4)
    time = rng.exponential(size=50) + 0.1
    event = rng.random(50) < 0.7
    X = rng.normal(size=(50, 2))
    frame = pd.DataFrame({"days": time, "died": event.astype(int)})
    np.testing.assert_array_equal(
        SurvivalTree(max_depth=2).fit(X, frame).predict(X),
        SurvivalTree(max_depth=2).fit(X, survival_array(event, time)).predict(X),
    )


@pytest.mark.parametrize("estimator", [SurvivalTree, ForestSurvival])
def test_all_censored_follow_up_is_refused(estimator):
    rng = np.random.default_rng(5)
    y = survival_array(np.zeros(30, dtype=bool), rng.exponential(size=30))
    with pytest.raises(ValueError, match="every one of its times is censored"):
        estimator().fit(rng.normal(size=(30, 2)), y)


def test_survival_past_the_last_follow_up_warns_once():
    X, y = _noise_and_signal(80)
    model = SurvivalTree(max_depth=2).fit(X, y)
    last = model.unique_times_[-1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        inside = model.predict_survival_at(X[:3], [0.0, last])  # no warning
    with pytest.warns(FollowUpWarning, match=r"2 of the times asked .* past the last") as caught:
        outside = model.predict_survival_at(X[:3], [last, last + 1, last * 10])
    assert len(caught) == 1
    np.testing.assert_array_equal(outside[:, 1], inside[:, 1])
    with pytest.raises(ValueError, match="times must be finite"):
        model.predict_survival_at(X[:3], [np.nan])
