"""Competing-risk trees (issue 62): the ``competing_risks`` target and the ``logrank_cause``
criterion against cmprsk 2.2-11 and survival 3.5.3 (the fixture of
tests/fixtures/competing_risks/make_fixtures.R, 17 digits) on the bundled mgus2
(progression, or death before it): a leaf's Aalen-Johansen incidence is ``cuminc``'s, a
cause-specific split's statistic is ``survdiff``'s; with one cause the tree is the survival
target's; the metrics for a cause by hand."""

import json
import pickle

import numpy as np
import pytest
from cmprsk_reference import REFERENCE, numbers
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_core import ForestSurvival, SurvivalTree
from treekit_core.datasets import load_dataset
from treekit_core.tools.metrics import (
    brier_score,
    brier_score_cause,
    concordance_index_cause,
    gray_test,
    logrank_test,
)


@pytest.fixture(scope="module")
def mgus2():
    data = load_dataset("mgus2")
    sex = data.X[:, [data.feature_names.index("sex")]]
    return data, sex


def test_a_leaf_s_incidence_of_each_cause_is_cmprsk_s(mgus2):
    """A tree split on sex alone: each leaf holds its rows' cuminc curve of each cause
    at every event time (1e-10), and its cause-specific hazard is the Nelson-Aalen sum."""
    data, sex = mgus2
    tree = SurvivalTree(target="competing_risks", max_depth=1, min_samples_leaf=1)
    tree.fit(sex, data.y)
    assert tree.tree_.feature[0] == 0 and tree.tree_.n_leaves == 2
    sexes = data.categories["sex"]
    for curve in REFERENCE["curves"]:
        name, cause = curve["name"].split()
        code = sexes.index(name)
        times = numbers(curve["time"])[2:-1:2]  # the steps' corners, as in test_competing_risks
        expected = numbers(curve["est"])[2:-1:2]
        found = tree.predict_cumulative_incidence([[code]], cause=int(cause), times=times)
        np.testing.assert_allclose(found[0], expected, rtol=1e-10)
        # cause-specific Nelson-Aalen of the leaf's rows, by hand
        rows = sex[:, 0] == code
        time, event = data.y["time"][rows], data.y["event"][rows]
        grid = np.unique(time)
        at_risk = np.array([(time >= t).sum() for t in grid])
        died = np.array([((time == t) & (event == int(cause))).sum() for t in grid])
        hazard = tree.predict_cause_specific_hazard([[code]], cause=int(cause), times=grid)
        np.testing.assert_allclose(hazard[0], np.cumsum(died / at_risk), rtol=1e-12)


def test_a_cause_specific_split_scores_survdiff_s_statistic(mgus2):
    data, sex = mgus2
    for case in REFERENCE["survdiff"]:
        if case["grouping"] != "sex":
            continue
        criterion = "logrank" if case["cause"] == 0 else "logrank_cause"
        params = {} if case["cause"] == 0 else {"cause": case["cause"]}
        tree = SurvivalTree(
            target="competing_risks",
            criterion=criterion,
            criterion_params=params,
            max_depth=1,
            min_samples_leaf=1,
        ).fit(sex, data.y)
        statistic = tree.tree_.node_fields["improvement"][0]
        assert statistic == pytest.approx(np.sqrt(float(case["chisq"])), rel=1e-8), case


def test_a_cause_specific_tree_splits_where_that_cause_s_log_rank_is_largest(mgus2):
    data, _ = mgus2
    age = data.X[:, [data.feature_names.index("age")]]  # no missing value
    for cause in (1, 2):
        tree = SurvivalTree(
            target="competing_risks",
            criterion="logrank_cause",
            criterion_params={"cause": cause},
            max_depth=1,
        ).fit(age, data.y)
        cut = tree.tree_.threshold[0]
        found = logrank_test(data.y, (age[:, 0] > cut).astype(int), cause=cause)
        assert tree.tree_.node_fields["improvement"][0] == pytest.approx(
            np.sqrt(found.statistic), rel=1e-9
        )
        # no other cut between distinct ages scores more (every cut the tree could take)
        values = np.unique(age)
        best = max(
            logrank_test(data.y, (age[:, 0] > v).astype(int), cause=cause).statistic
            for v in values[2:-3]  # min_samples_leaf=3 leaves these out either way
        )
        assert found.statistic == pytest.approx(best, rel=1e-9)


def _one_cause_data(seed=0, n=300):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    time = np.round(rng.exponential(np.exp(-X[:, 0])) * 50) + 1
    event = (rng.random(n) < 0.7).astype(int)
    return X, time, event


def test_with_one_cause_the_tree_is_the_survival_target_s():
    X, time, event = _one_cause_data()
    plain = SurvivalTree(max_depth=4).fit(X, np.column_stack([time, event]))
    competing = SurvivalTree(target="competing_risks", max_depth=4).fit(
        X, np.column_stack([time, event])
    )
    for name in ("child_start", "child_ids", "feature", "threshold", "weight", "n_samples"):
        np.testing.assert_array_equal(getattr(competing.tree_, name), getattr(plain.tree_, name))
    np.testing.assert_array_equal(competing.tree_.statistics[:, :3], plain.tree_.statistics)
    for which in ("predict_survival_function", "predict_cumulative_hazard_function"):
        np.testing.assert_array_equal(
            getattr(competing, which)(X, return_array=True),
            getattr(plain, which)(X, return_array=True),
        )
    survival = plain.predict_survival_function(X, return_array=True)
    incidence = competing.predict_cumulative_incidence(X, cause=1, return_array=True)
    np.testing.assert_allclose(incidence, 1.0 - survival, rtol=0, atol=1e-12)
    forests = [
        ForestSurvival(n_estimators=4, random_state=1, **extra).fit(
            X, np.column_stack([time, event])
        )
        for extra in ({}, {"target": "competing_risks"})
    ]
    for a, b in zip(forests[0].estimators_, forests[1].estimators_, strict=True):
        np.testing.assert_array_equal(a.threshold, b.threshold)
    np.testing.assert_array_equal(
        forests[0].predict_survival_function(X, return_array=True),
        forests[1].predict_survival_function(X, return_array=True),
    )


def test_incidences_and_survival_add_up_and_predict_integrates_the_incidence(mgus2):
    data, _ = mgus2
    tree = SurvivalTree(target="competing_risks", max_depth=3).fit(data.X, data.y)
    survival = tree.predict_survival_function(data.X, return_array=True)
    incidences = [
        tree.predict_cumulative_incidence(data.X, cause=k, return_array=True) for k in (1, 2)
    ]
    np.testing.assert_allclose(survival + incidences[0] + incidences[1], 1.0, atol=1e-12)
    # predict: per cause, the incidence integrated from 0 to the last training time
    grid = tree.unique_times_
    widths = np.diff(np.append(grid, grid[-1]))
    risk = tree.predict(data.X)
    assert risk.shape == (data.y.size, 2)
    for k in (0, 1):
        np.testing.assert_allclose(risk[:, k], incidences[k] @ widths, rtol=1e-10)
    # a forest's curves on the grid (mixed from steps) equal its curves at those times
    forest = ForestSurvival(target="competing_risks", n_estimators=5, random_state=0)
    forest.fit(data.X, data.y)
    stepped = forest.predict_cumulative_incidence(data.X[:50], cause=2, return_array=True)
    at_times = forest.predict_cumulative_incidence(data.X[:50], cause=2, times=grid)
    np.testing.assert_allclose(stepped, at_times, atol=1e-12)
    assert 0.5 < forest.score(data.X, data.y) <= 1.0


def test_models_keep_the_causes_through_pickles_and_model_files(mgus2):
    data, _ = mgus2
    tree = SurvivalTree(target="competing_risks", max_depth=3).fit(data.X, data.y)
    expected = tree.predict_cumulative_incidence(data.X, cause=2, return_array=True)
    for again in (pickle.loads(pickle.dumps(tree)), SurvivalTree.from_json(tree.to_json())):
        np.testing.assert_array_equal(
            again.predict_cumulative_incidence(data.X, cause=2, return_array=True), expected
        )
        np.testing.assert_array_equal(again.predict(data.X), tree.predict(data.X))
    payload = json.loads(tree.to_json())
    state = payload["tree"]["component_state"]["target"]
    broken = json.loads(json.dumps(payload))
    broken["tree"]["component_state"]["target"]["incidence_1"] = state["incidence_1"][::-1]
    with pytest.raises(ValueError, match="incidence_1"):
        SurvivalTree.from_json(json.dumps(broken))
    broken = json.loads(json.dumps(payload))
    broken["tree"]["component_state"]["target"]["n_causes"] = 3
    with pytest.raises(ValueError, match="n_causes"):
        SurvivalTree.from_json(json.dumps(broken))


def test_refusals_name_the_parameter(mgus2):
    data, _ = mgus2
    tree = SurvivalTree(target="competing_risks", max_depth=2).fit(data.X, data.y)
    with pytest.raises(ValueError, match="cause is 3; the model was fitted on event codes 1..2"):
        tree.predict_cumulative_incidence(data.X, cause=3)
    with pytest.raises(ValueError, match="cause must be an event code"):
        tree.predict_cumulative_incidence(data.X, cause="1")
    plain = SurvivalTree(max_depth=2).fit(
        data.X, np.column_stack([data.y["time"], data.y["event"] > 0])
    )
    with pytest.raises(ValueError, match="target 'survival'.*target='competing_risks'"):
        plain.predict_cumulative_incidence(data.X)
    with pytest.raises(ValueError, match="cause=3, but y's event codes are 1..2"):
        SurvivalTree(
            target="competing_risks", criterion="logrank_cause", criterion_params={"cause": 3}
        ).fit(data.X, data.y)
    with pytest.raises(Exception, match="cause must be an event code >= 1"):
        SurvivalTree(criterion="logrank_cause", criterion_params={"cause": 0}).fit(data.X, data.y)
    with pytest.raises(ValueError, match="y holds no event"):
        SurvivalTree(target="competing_risks").fit(data.X[:3], np.array([[1, 0], [2, 0], [3, 0]]))


def test_the_concordance_of_a_cause_by_hand():
    # rows: (time, code); cause 1. Comparable pairs (i had cause 1 at T_i; j event-free
    # after T_i or ended by cause 2 at any time): row 0 (t=1) with rows 1, 2, 3, 4;
    # row 3 (t=4) with rows 2 (cause 2 at t=3) and 4 (t=5)
    y = np.array([[1, 1], [2, 0], [3, 2], [4, 1], [5, 0]], dtype=float)
    risk = np.array([0.9, 0.1, 0.5, 0.4, 0.4])
    # row 0 beats all four; row 3: beats none of row 2 (0.5), ties row 4 (0.4): 0.5
    assert concordance_index_cause(y, risk, 1) == pytest.approx((4 + 0 + 0.5) / 6)


def test_the_brier_score_of_a_cause():
    X, time, event = _one_cause_data(1)
    y = np.column_stack([time, event])
    tree = SurvivalTree(target="competing_risks", max_depth=3).fit(X, y)
    times = np.quantile(time, [0.2, 0.5, 0.8])
    incidence = tree.predict_cumulative_incidence(X, cause=1, times=times)
    survival = SurvivalTree(max_depth=3).fit(X, y).predict_survival_at(X, times)
    sksurv_style = np.array(
        list(zip(event.astype(bool), time, strict=True)), dtype=[("event", bool), ("time", float)]
    )
    _, expected = brier_score(sksurv_style, sksurv_style, survival, times)
    _, found = brier_score_cause(y, y, incidence, times, cause=1)
    np.testing.assert_allclose(found, expected, rtol=1e-12)
    # without censoring: the mean squared error of the incidence against the outcome
    rng = np.random.default_rng(2)
    t = rng.integers(1, 20, 50).astype(float)
    code = rng.integers(1, 3, 50)
    estimate = rng.random((50, 1))
    _, score = brier_score_cause(
        np.column_stack([t, code]), np.column_stack([t, code]), estimate, [10.0], 2
    )
    outcome = ((t <= 10) & (code == 2)).astype(float)
    assert score[0] == pytest.approx(np.mean((outcome - estimate[:, 0]) ** 2), rel=1e-12)


def test_gray_s_split_scores_cmprsk_s_test(mgus2):
    data, sex = mgus2
    expected = REFERENCE["gray"]
    for cause in (1, 2):
        tree = SurvivalTree(
            target="competing_risks",
            criterion="gray",
            criterion_params={"cause": cause},
            max_depth=1,
            min_samples_leaf=1,
        ).fit(sex, data.y)
        statistic = tree.tree_.node_fields["improvement"][0] ** 2
        assert statistic == pytest.approx(float(expected["stat"][cause - 1]), rel=1e-8)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(15, 70))
def test_gray_s_search_finds_the_best_cut_of_every_cut(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 10, n).astype(float)
    time = rng.integers(1, 12, n).astype(float)
    code = rng.integers(0, 3, n)
    if not (code == 1).any():
        code[0] = 1
    y = np.column_stack([time, code])
    tree = SurvivalTree(
        target="competing_risks",
        criterion="gray",
        criterion_params={"cause": 1, "n_cuts": 0},
        max_depth=1,
        min_samples_leaf=2,
    ).fit(x[:, None], y)
    best = 0.0
    for cut in np.unique(x)[:-1]:
        left = x <= cut
        if min(left.sum(), (~left).sum()) >= 2:
            found = gray_test(y, left.astype(int), 1).statistic
            best = max(best, found)
    if tree.tree_.n_leaves == 1:
        assert best == pytest.approx(0.0, abs=1e-9)
        return
    assert tree.tree_.node_fields["improvement"][0] ** 2 == pytest.approx(best, rel=1e-9)
    # fewer candidates: a cut among them, scoring at most the best of every cut
    few = SurvivalTree(
        target="competing_risks",
        criterion="gray",
        criterion_params={"cause": 1, "n_cuts": 2},
        max_depth=1,
        min_samples_leaf=2,
    ).fit(x[:, None], y)
    if few.tree_.n_leaves > 1:
        assert few.tree_.node_fields["improvement"][0] ** 2 <= best * (1 + 1e-9)


def test_gray_refuses_delayed_entry_and_prunes_by_split_complexity(mgus2):
    data, _ = mgus2
    entry = data.y["time"] * (np.arange(data.y.size) % 4) / 8
    with pytest.raises(ValueError, match="criterion 'gray' cannot score rows that entered late"):
        SurvivalTree(target="competing_risks", criterion="gray").fit(data.X, data.y, entry=entry)
    pruned = SurvivalTree(
        target="competing_risks", criterion="gray", pruner="split_complexity"
    ).fit(data.X, data.y)
    assert "corrected_complexity" in pruned.pruning_path_


def test_the_held_out_statistics_of_the_cause_criteria_are_the_peers_tests(mgus2):
    """What split-complexity pruning scores held-out rows with: Gray's test for 'gray',
    the cause's log-rank test for 'logrank_cause' (cmprsk's and survdiff's, through the
    metrics checked against them in test_competing_risks)."""
    data, sex = mgus2
    groups = sex[:, 0].astype(int)
    for criterion, test in (("gray", gray_test), ("logrank_cause", None)):
        tree = SurvivalTree(
            target="competing_risks", criterion=criterion, criterion_params={"cause": 2}
        ).fit(sex, data.y)
        rows = tree.composition_.target.encode(data.y, data.y.size).rows
        found = tree.composition_.criterion.two_sample_statistic(rows, groups)
        expected = (
            gray_test(data.y, groups, 2).statistic
            if test is not None
            else logrank_test(data.y, groups, cause=2).statistic
        )
        assert found == pytest.approx(expected, rel=1e-10)


def test_the_incidence_picture_stacks_the_leaves_curves_over_the_numbers_at_risk(mgus2):
    pytest.importorskip("matplotlib")
    from treekit_core.tools.incidence_plots import plot_cumulative_incidence

    data, _ = mgus2
    tree = SurvivalTree(target="competing_risks", max_depth=2).fit(data.X, data.y)
    times = [0.0, 100.0, 200.0]
    figure = plot_cumulative_incidence(tree, data.X, data.y, times=times)
    assert len(figure.panels) == 4
    panels = len(figure.panels)  # the panels' axes first, then their numbers at risk
    for (label, rows, shares, incidences), ax in zip(
        figure.panels, figure.axes[:panels], strict=True
    ):
        leaf = int(label.split()[1])
        expected = [
            tree.predict_cumulative_incidence(data.X[rows[:1]], cause=k, return_array=True)[0]
            for k in (1, 2)
        ]
        if np.allclose(shares, 1.0):  # rows reaching this leaf alone
            np.testing.assert_array_equal(incidences, expected)
        # the stacked bands' top is 1 - the leaf's all-cause survival
        survival = tree.composition_.target.survival_curves(
            tree.tree_.component_state["target"], tree.tree_, np.array([leaf]), tree.unique_times_
        )[0]
        np.testing.assert_allclose(incidences[0] + incidences[1], 1.0 - survival, atol=1e-12)
        assert ax.get_title().startswith(f"leaf {leaf} ")
    below = figure.axes[panels]
    shown = [text.get_text() for text in below.texts]
    rows, shares = figure.panels[0][1], figure.panels[0][2]
    assert shown == [f"{shares[data.y['time'][rows] >= t].sum():.4g}" for t in times]
    forest = ForestSurvival(target="competing_risks", n_estimators=3, random_state=0)
    assert len(plot_cumulative_incidence(forest.fit(data.X, data.y), data.X, data.y).panels) == 3
    with pytest.raises(ValueError, match="target 'survival'"):
        plot_cumulative_incidence(
            SurvivalTree().fit(data.X, np.column_stack([data.y["time"], data.y["event"] > 0])),
            data.X,
            data.y,
        )


def test_a_competing_risk_forest_scores_out_of_bag_per_cause(mgus2):
    data, _ = mgus2
    forest = ForestSurvival(
        target="competing_risks", n_estimators=6, oob_score=True, random_state=0
    ).fit(data.X, data.y)
    assert forest.oob_prediction_.shape == (data.y.size, 2)
    y = np.column_stack([data.y["time"], data.y["event"]])
    scored = ~np.isnan(forest.oob_prediction_[:, 0])
    expected = np.mean(
        [
            concordance_index_cause(y[scored], forest.oob_prediction_[scored, k - 1], k)
            for k in (1, 2)
        ]
    )
    assert forest.oob_score_ == pytest.approx(expected, rel=1e-12)


def test_the_report_of_a_competing_risk_tree_shows_each_cause(mgus2):
    pytest.importorskip("matplotlib")
    from treekit_core.tools.metrics import event_time_quartiles
    from treekit_core.tools.report import model_report

    data, _ = mgus2
    tree = SurvivalTree(target="competing_risks", max_depth=2).fit(data.X, data.y)
    page = model_report(tree, data.X, data.y)
    y = np.column_stack([data.y["time"], data.y["event"]])
    concordance = concordance_index_cause(y, tree.predict(data.X)[:, 0], 1)
    assert f"<td>cause 1 concordance (Wolbers)</td><td>{concordance:.6g}</td>" in page
    times = event_time_quartiles(data.y["time"][data.y["event"] > 0])
    incidence = tree.predict_cumulative_incidence(data.X, cause=2, times=times)
    _, brier = brier_score_cause(y, y, incidence, times, 2)
    assert f"<td>cause 2 Brier score at {times[0]:g}</td><td>{brier[0]:.6g}</td>" in page


def test_shap_explains_each_cause_s_risk(mgus2):
    shap = pytest.importorskip("shap")
    from treekit_core.export import to_shap

    data, _ = mgus2
    complete = ~np.isnan(data.X).any(axis=1)
    X, y = data.X[complete], data.y[complete]
    forest = ForestSurvival(target="competing_risks", n_estimators=3, random_state=0).fit(X, y)
    explainer = shap.TreeExplainer(to_shap(forest))
    values = explainer.shap_values(X[:20])
    values = np.stack(values, axis=-1) if isinstance(values, list) else values
    predicted = forest.predict(X[:20])
    expected = np.atleast_1d(explainer.expected_value)
    scale = np.abs(predicted).max()
    np.testing.assert_allclose(values.sum(axis=1) + expected, predicted, rtol=0, atol=1e-9 * scale)


def _composite(time, code, left):
    """Ishwaran et al.'s composite log-rank chi-square of a split, by hand from each
    cause's survdiff terms (the metrics' log-rank scores): (sum_c U_c)^2 / sum_c V_c."""
    from treekit_core.builtins.competing_risks import logrank_scores

    observed = variance = 0.0
    for cause in np.unique(code[code > 0]):
        difference, covariance, _ = logrank_scores(time, code == cause, left.astype(int))
        observed += difference[1]
        variance += covariance[1, 1]
    return observed**2 / variance if variance > 0 else 0.0


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(15, 70))
def test_every_cause_combined_splits_by_the_composite_log_rank(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 10, n).astype(float)
    time = rng.integers(1, 6, n).astype(float)  # ties of different causes at a time
    code = rng.integers(0, 4, n)
    if not (code > 1).any():
        code[0] = 2
    y = np.column_stack([time, code])
    params = {"cause": None}
    tree = SurvivalTree(
        target="competing_risks",
        criterion="logrank_cause",
        criterion_params=params,
        max_depth=1,
        min_samples_leaf=2,
    ).fit(x[:, None], y)
    best = 0.0
    for cut in np.unique(x)[:-1]:
        left = x <= cut
        if min(left.sum(), (~left).sum()) >= 2:
            best = max(best, _composite(time, code, left))
    if tree.tree_.n_leaves == 1:
        assert best == pytest.approx(0.0, abs=1e-9)
        return
    assert tree.tree_.node_fields["improvement"][0] ** 2 == pytest.approx(best, rel=1e-9)
    rows = tree.composition_.target.encode(y, n).rows
    left = (x <= tree.tree_.threshold[0]).astype(int)
    held_out = tree.composition_.criterion.two_sample_statistic(rows, left)
    assert held_out == pytest.approx(best, rel=1e-9)


def test_every_cause_combined_with_one_cause_is_the_log_rank_tree():
    X, time, event = _one_cause_data(3)
    y = np.column_stack([time, event])
    plain = SurvivalTree(max_depth=4).fit(X, y)
    combined = SurvivalTree(
        target="competing_risks", criterion="logrank_cause", criterion_params={"cause": None}
    ).set_params(max_depth=4)
    combined.fit(X, y)
    for name in ("child_start", "feature", "threshold"):
        np.testing.assert_array_equal(getattr(combined.tree_, name), getattr(plain.tree_, name))
    np.testing.assert_array_equal(
        combined.tree_.node_fields["improvement"], plain.tree_.node_fields["improvement"]
    )
    with pytest.raises(Exception, match="'gray' tests one cause"):
        SurvivalTree(
            target="competing_risks", criterion="gray", criterion_params={"cause": None}
        ).fit(X, y)
