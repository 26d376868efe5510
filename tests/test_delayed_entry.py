"""Delayed entry (left truncation) in survival trees (issue 62): a row is at risk at the
times in (entry, time] only. A leaf's Kaplan-Meier curve is survival's
``survfit(Surv(entry, time, status) ~ 1)`` (the fixture of
tests/fixtures/competing_risks/make_fixtures.R), a split's log-rank statistic is the
exact-ties Cox score test with left truncation (the same fixture), the compiled search's
best cut is the best of every cut scored by ``logrank_test(entry=)``, and entries at 0
give exactly the trees without them."""

import numpy as np
import pytest
from cmprsk_reference import REFERENCE, numbers
from hypothesis import example, given, settings
from hypothesis import strategies as st

from treekit_core import ForestSurvival, SurvivalTree
from treekit_core.datasets import load_dataset
from treekit_core.tools.metrics import logrank_test


@pytest.fixture(scope="module")
def mgus2():
    data = load_dataset("mgus2")
    row = np.arange(data.y.size)
    entry = data.y["time"] * (row % 4) / 8  # the fixture's entries
    follow_up = np.column_stack([data.y["time"], data.y["event"] > 0])
    return data, entry, follow_up


def test_a_leaf_s_curve_is_survfit_s_with_entry_times(mgus2):
    data, entry, y = mgus2
    root = SurvivalTree(min_samples_split=10**6).fit(data.X, y, entry=entry)
    assert root.tree_.n_leaves == 1
    expected = REFERENCE["kaplan_meier"]
    times = numbers(expected["time"])
    found = root.predict_survival_function(data.X[:1], return_array=True)[0]
    np.testing.assert_array_equal(root.unique_times_, times)
    np.testing.assert_allclose(found, numbers(expected["surv"]), rtol=1e-10)
    # an entry field of a structured y is the same as entry=
    structured = np.array(
        list(zip(data.y["event"] > 0, data.y["time"], entry, strict=True)),
        dtype=[("event", bool), ("time", float), ("entry", float)],
    )
    again = SurvivalTree(min_samples_split=10**6).fit(data.X, structured)
    np.testing.assert_array_equal(
        again.predict_survival_function(data.X[:1], return_array=True)[0], found
    )


def test_a_split_s_statistic_is_the_cox_score_test_with_left_truncation(mgus2):
    data, entry, y = mgus2
    sex = data.X[:100, [data.feature_names.index("sex")]]
    tree = SurvivalTree(max_depth=1, min_samples_leaf=1).fit(sex, y[:100], entry=entry[:100])
    case = next(c for c in REFERENCE["truncated"] if c["grouping"] == "sex")
    statistic = tree.tree_.node_fields["improvement"][0] ** 2
    assert statistic == pytest.approx(float(case["score"]), rel=1e-8)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(12, 80))
@example(seed=6106, n=12)  # every event time's risk set all fails for one cut: no variance
def test_the_compiled_search_finds_the_best_cut_with_entry_times(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 12, n).astype(float)
    time = rng.integers(1, 15, n).astype(float)
    entry = np.where(rng.random(n) < 0.5, np.floor(rng.random(n) * time), 0.0)
    event = rng.random(n) < 0.6
    if not event.any():
        event[0] = True
    y = np.column_stack([time, event])
    tree = SurvivalTree(max_depth=1, min_samples_leaf=2).fit(x[:, None], y, entry=entry)
    statistics = []
    for cut in np.unique(x)[:-1]:
        left = x <= cut
        if min(left.sum(), (~left).sum()) < 2:
            continue
        statistics.append(logrank_test(y, left.astype(int), entry=entry).statistic)
    best = max(statistics, default=0.0)
    if tree.tree_.n_leaves == 1:
        assert best == pytest.approx(0.0, abs=1e-9)
        return
    found = tree.tree_.node_fields["improvement"][0] ** 2
    assert found == pytest.approx(best, rel=1e-9)
    cut = tree.tree_.threshold[0]
    chosen = logrank_test(y, (x <= cut).astype(int), entry=entry).statistic
    assert chosen == pytest.approx(best, rel=1e-9)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_entries_at_zero_give_exactly_the_trees_without_them(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(150, 3)).round(1)
    y = np.column_stack([rng.integers(1, 40, 150), rng.random(150) < 0.7])
    plain = SurvivalTree(max_depth=4).fit(X, y)
    zero = SurvivalTree(max_depth=4).fit(X, y, entry=np.zeros(150))
    for name in ("child_start", "child_ids", "feature", "threshold", "statistics"):
        np.testing.assert_array_equal(getattr(zero.tree_, name), getattr(plain.tree_, name))
    np.testing.assert_array_equal(
        zero.tree_.node_fields["improvement"], plain.tree_.node_fields["improvement"]
    )
    np.testing.assert_array_equal(
        zero.predict_survival_function(X, return_array=True),
        plain.predict_survival_function(X, return_array=True),
    )


def test_competing_risks_and_forests_take_entry_times(mgus2):
    data, entry, _ = mgus2
    tree = SurvivalTree(target="competing_risks", max_depth=2).fit(data.X, data.y, entry=entry)
    survival = tree.predict_survival_function(data.X, return_array=True)
    incidence = sum(
        tree.predict_cumulative_incidence(data.X, cause=k, return_array=True) for k in (1, 2)
    )
    np.testing.assert_allclose(survival + incidence, 1.0, atol=1e-12)
    forest = ForestSurvival(n_estimators=3, random_state=0).fit(
        data.X, np.column_stack([data.y["time"], data.y["event"] > 0]), entry=entry
    )
    assert np.isfinite(forest.predict(data.X)).all()


def test_entry_refusals_name_the_row(mgus2):
    data, entry, y = mgus2
    bad = entry.copy()
    bad[3] = y[3, 0] + 1.0
    with pytest.raises(ValueError, match=r"entry\[3\] is .* before its follow-up ends"):
        SurvivalTree().fit(data.X, y, entry=bad)
    with pytest.raises(ValueError, match="entry has shape"):
        SurvivalTree().fit(data.X, y, entry=entry[:5])
    structured = np.array(
        list(zip(data.y["event"] > 0, data.y["time"], entry, strict=True)),
        dtype=[("event", bool), ("time", float), ("entry", float)],
    )
    with pytest.raises(ValueError, match="entry is given twice"):
        SurvivalTree().fit(data.X, structured, entry=entry)


def test_a_structured_y_with_entry_scores_and_keeps_out_of_bag(mgus2):
    data, entry, _ = mgus2
    structured = np.array(
        list(zip(data.y["event"] > 0, data.y["time"], entry, strict=True)),
        dtype=[("event", bool), ("time", float), ("entry", float)],
    )
    forest = ForestSurvival(n_estimators=3, random_state=0, oob_score=True).fit(data.X, structured)
    plain = np.array(
        list(zip(data.y["event"] > 0, data.y["time"], strict=True)),
        dtype=[("event", bool), ("time", float)],
    )
    # the concordance counts the pairs of the risk sets: entry times from y's field
    from treekit_core import concordance_index

    predicted = forest.predict(data.X)
    expected = concordance_index(data.y["event"] > 0, data.y["time"], predicted, entry=entry)
    assert forest.score(data.X, structured) == expected
    assert forest.score(data.X, plain) == concordance_index(
        data.y["event"] > 0, data.y["time"], predicted
    )
    scored = ~np.isnan(forest.oob_prediction_)
    assert forest.oob_score_ == concordance_index(
        data.y["event"][scored] > 0,
        data.y["time"][scored],
        forest.oob_prediction_[scored],
        entry=entry[scored],
    )


def _harrell_by_pairs(event, time, estimate, entry):
    """Harrell's concordance by its definition, pair by pair: i's event opens a pair with
    every j still followed after T_i (or censored at T_i) that had entered before T_i."""
    numerator = denominator = 0.0
    for i in np.flatnonzero(event):
        for j in range(time.size):
            if j == i or not (entry[j] < time[i] or entry[j] == 0):
                continue
            if time[j] > time[i] or (time[j] == time[i] and not event[j]):
                denominator += 1
                if abs(estimate[i] - estimate[j]) <= 1e-8:
                    numerator += 0.5
                elif estimate[i] > estimate[j]:
                    numerator += 1
    return numerator / denominator


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(4, 40))
def test_the_concordance_with_entry_times_counts_the_risk_sets_pairs(seed, n):
    from treekit_core import concordance_index

    rng = np.random.default_rng(seed)
    time = rng.integers(1, 10, n).astype(float)
    entry = np.where(rng.random(n) < 0.5, np.floor(rng.random(n) * time), 0.0)
    event = rng.random(n) < 0.6
    event[0] = True
    estimate = rng.integers(0, 5, n).astype(float)
    try:
        expected = _harrell_by_pairs(event, time, estimate, entry)
    except ZeroDivisionError:
        with pytest.raises(ValueError, match="no comparable pairs"):
            concordance_index(event, time, estimate, entry=entry)
        return
    assert concordance_index(event, time, estimate, entry=entry) == pytest.approx(expected)
    # entries at 0: Harrell's index as before
    assert concordance_index(event, time, estimate, entry=np.zeros(n)) == concordance_index(
        event, time, estimate
    )


def test_the_brier_score_with_entry_times_averages_the_rows_entered_by_then():
    from treekit_core.tools.metrics import brier_score, brier_score_cause

    rng = np.random.default_rng(4)
    n = 60
    time = rng.integers(1, 30, n).astype(float)
    event = rng.random(n) < 0.7
    entry = np.where(rng.random(n) < 0.4, np.floor(rng.random(n) * time), 0.0)
    with_entry = np.array(
        list(zip(event, time, entry, strict=True)),
        dtype=[("event", bool), ("time", float), ("entry", float)],
    )
    plain = np.array(list(zip(event, time, strict=True)), dtype=[("event", bool), ("time", float)])
    times = np.array([5.0, 10.0, 20.0])
    estimate = rng.random((n, times.size))
    _, without = brier_score(plain, plain, estimate, times)
    _, found = brier_score(plain, with_entry, estimate, times)
    # by hand: the same terms, each time's mean over the rows entered by then
    for i, t in enumerate(times):
        entered = (entry == 0) | (entry < t)
        _, one = brier_score(plain, plain[entered], estimate[entered, i : i + 1], [t])
        assert found[i] == pytest.approx(one[0], rel=1e-12)
    zero = plain.copy()
    zeros = np.array(
        list(zip(event, time, np.zeros(n), strict=True)),
        dtype=[("event", bool), ("time", float), ("entry", float)],
    )
    np.testing.assert_array_equal(brier_score(zero, zeros, estimate, times)[1], without)
    assert not np.allclose(found, without)  # some row enters after a time asked
    # the cause's score restricts likewise
    codes = np.array(
        list(zip(event.astype(int), time, entry, strict=True)),
        dtype=[("event", int), ("time", float), ("entry", float)],
    )
    y = np.column_stack([time, event.astype(int)])
    _, by_cause = brier_score_cause(y, codes, 1.0 - estimate, times, 1)
    np.testing.assert_allclose(by_cause, found, rtol=1e-12)
