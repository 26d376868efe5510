"""Competing risks and delayed entry (issue 62, first part) against cmprsk 2.2-11 and
survival 3.5.3 (fixture by tests/fixtures/competing_risks/make_fixtures.R, numbers with 17
digits) on the bundled mgus2 (progression or death before it): Aalen-Johansen incidence
and its variance, Gray's test, the log-rank test of any event and of each cause, and with
delayed entry the log-rank test (the exact-ties Cox score test) and Kaplan-Meier."""

import numpy as np
import pandas as pd
import pytest
from cmprsk_reference import REFERENCE, numbers

from treekit_core.datasets import load_dataset
from treekit_core.tools.metrics import (
    cumulative_incidence,
    gray_test,
    kaplan_meier,
    logrank_test,
)


@pytest.fixture(scope="module")
def mgus2():
    data = load_dataset("mgus2")
    age = data.X[:, data.feature_names.index("age")]
    groups = {
        "sex": data.X[:, data.feature_names.index("sex")],
        "age": np.digitize(age, [65, 75], right=True),  # R's cut(age, c(-Inf, 65, 75, Inf))
    }
    return data, groups


def test_the_aalen_johansen_incidence_is_cmprsk_s(mgus2):
    assert REFERENCE["cmprsk_version"] == "2.2.11"
    data, groups = mgus2
    sexes = data.categories["sex"]
    for curve in REFERENCE["curves"]:
        sex, cause = curve["name"].split()
        rows = groups["sex"] == sexes.index(sex)
        times, incidence, variance = cumulative_incidence(data.y[rows], int(cause))
        # cmprsk's curve lists each step's corners: 0, then (t, before), (t, after), ...,
        # and the last value held to the largest follow-up time
        theirs = slice(2, -1, 2)
        np.testing.assert_array_equal(times, numbers(curve["time"])[theirs])
        np.testing.assert_allclose(incidence, numbers(curve["est"])[theirs], rtol=1e-10)
        np.testing.assert_allclose(variance, numbers(curve["var"])[theirs], rtol=1e-10)


def test_gray_s_test_is_cmprsk_s(mgus2):
    data, groups = mgus2
    for cause in (1, 2):
        result = gray_test(data.y, groups["sex"], cause)
        expected = REFERENCE["gray"]
        assert result.statistic == pytest.approx(float(expected["stat"][cause - 1]), rel=1e-8)
        assert result.p_value == pytest.approx(float(expected["pv"][cause - 1]), rel=1e-8)
        assert result.df == expected["df"][cause - 1]


def test_the_log_rank_test_of_any_event_and_of_each_cause_is_survdiff_s(mgus2):
    data, groups = mgus2
    for case in REFERENCE["survdiff"]:
        cause = case["cause"] or None
        result = logrank_test(data.y, groups[case["grouping"]], cause=cause)
        assert result.statistic == pytest.approx(float(case["chisq"]), rel=1e-8), case
        assert result.df == (1 if case["grouping"] == "sex" else 2)


def test_with_delayed_entry_the_log_rank_test_and_kaplan_meier_are_survival_s(mgus2):
    data, groups = mgus2
    row = np.arange(data.y.size)
    entry = data.y["time"] * (row % 4) / 8
    first = row < 100
    for case in REFERENCE["truncated"]:
        result = logrank_test(data.y[first], groups[case["grouping"]][first], entry=entry[first])
        assert result.statistic == pytest.approx(float(case["score"]), rel=1e-8), case
    times, survival = kaplan_meier(data.y["event"] > 0, data.y["time"], entry=entry)
    expected = REFERENCE["kaplan_meier"]
    np.testing.assert_array_equal(times[1:], numbers(expected["time"]))
    np.testing.assert_allclose(survival[1:], numbers(expected["surv"]), rtol=1e-10)
    # entries at 0 change nothing
    plain = kaplan_meier(data.y["event"] > 0, data.y["time"])
    zero = kaplan_meier(data.y["event"] > 0, data.y["time"], entry=np.zeros(data.y.size))
    np.testing.assert_array_equal(plain[1], zero[1])


def test_y_as_a_frame_or_columns_and_refusals_naming_the_field(mgus2):
    data, groups = mgus2
    frame = pd.DataFrame({"time": data.y["time"], "event": data.y["event"]})
    columns = np.column_stack([data.y["time"], data.y["event"]])
    for y in (frame, columns):
        assert gray_test(y, groups["sex"], 1) == gray_test(data.y, groups["sex"], 1)
    with pytest.raises(ValueError, match=r"y\[:, 1\] \(event\) is 0.5 at row 0"):
        logrank_test(np.array([[1.0, 0.5], [2.0, 1.0]]), [0, 1])
    with pytest.raises(ValueError, match=r"entry\[1\] is 3.0 and the row's time 2.0"):
        logrank_test(np.array([[1.0, 1.0], [2.0, 1.0]]), [0, 1], entry=[0.0, 3.0])
    with pytest.raises(ValueError, match="groups holds 1 group"):
        gray_test(data.y, np.zeros(data.y.size), 1)
