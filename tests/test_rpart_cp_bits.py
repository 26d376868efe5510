"""rpart's cp tables to the last bit (issue 57): every complexity and cp of rpart 4.1.19's
tables (fixtures made by tests/fixtures/rpart_cp_bits/make_fixtures.R, numbers written
with 17 digits) on anova, poisson, exponential and class trees. rpart merges two cp rows
only when their complexities are the same double, so its rows are kept apart or merged
only by arithmetic that is rpart's: node risks summed over each node's rows in rpart's
order (its quicksort of the first column, split stably), complexities in risk units, the
cp as complexity x (1 / root risk)."""

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_regression import as_frame

from treekit_core import SurvivalTree, TreeClassifier, TreeRegressor
from treekit_core.datasets import load_dataset

FIXTURES = Path(__file__).parent / "fixtures" / "rpart_cp_bits"
CASES = sorted(path.stem for path in FIXTURES.glob("*.json") if path.stem != "r_arithmetic")
RPART = {
    "min_samples_split": 20,
    "min_samples_leaf": 7,
    "propagator": "surrogate",
    "evaluator": "surrogate",
    "pruner": "cost_complexity",
    "pruner_params": {"alpha": 0.0, "sequence": "rpart"},
}


def rpart_tree(name, method):
    """The tree of the fixture's rpart call, and the table it should print."""
    data = load_dataset(name)
    if method == "class":
        X, y = data.X, data.y
        keep = ~np.isnan(X).all(axis=1)  # rpart's na.rpart drops rows missing every feature
        categorical = data.categorical if data.categorical.any() else None
        model = TreeClassifier(**RPART, categorical_features=categorical)
        return model.fit(X[keep], y[keep])
    if method == "exp":
        return SurvivalTree(criterion="exponential", **RPART).fit(as_frame(data), data.y)
    criterion = "squared_error" if method == "anova" else "rpart_poisson"
    return TreeRegressor(criterion=criterion, **RPART).fit(as_frame(data), data.y)


@pytest.mark.parametrize("name", CASES)
def test_every_cp_of_rparts_table_to_the_bit(name):
    reference = json.loads((FIXTURES / f"{name}.json").read_text())
    assert reference["rpart_version"] == "4.1.19"
    model = rpart_tree(name, reference["method"])
    path = model.pruning_path_
    # rpart's table runs from the root down; treekit's path from the full tree up
    ours = list(zip(path["n_splits"][::-1].tolist(), path["cp"][::-1].tolist(), strict=True))
    theirs = list(zip(reference["nsplit"], (float(c) for c in reference["cp"]), strict=True))
    assert ours == theirs


def test_rs_arithmetic_as_rparts_rescaling_of_time_uses_it():
    from treekit_core.builtins.r_numerics import r_approx, r_cumsum, r_quantile7

    reference = json.loads((FIXTURES / "r_arithmetic.json").read_text())
    x = np.array([float(v) for v in reference["x"]])
    expected = {
        key: [float(v) for v in reference[key]] for key in ("quantile7", "cumsum", "approx")
    }
    assert r_quantile7(x, np.arange(1001) / 1000).tolist() == expected["quantile7"]
    assert r_cumsum(x / 3).tolist() == expected["cumsum"]
    points = np.array([float(v) for v in reference["points"]])
    assert r_approx(x, r_cumsum(x / 3), points).tolist() == expected["approx"]
    # numpy's own functions differ in the last bits (why the port exists)
    assert np.quantile(x, np.arange(1001) / 1000).tolist() != expected["quantile7"]


def mysort(start, stop, x, cvec):
    """rpart 4.1.19's mysort.c, transliterated line for line (recursive)."""
    while start < stop:
        if stop - start < 11:
            for i in range(start + 1, stop + 1):
                temp, tempd = x[i], cvec[i]
                j = i - 1
                while j >= start and x[j] > temp:
                    x[j + 1], cvec[j + 1] = x[j], cvec[j]
                    j -= 1
                x[j + 1], cvec[j + 1] = temp, tempd
            return
        i, j, k = start, stop, (start + stop) // 2
        median = x[k]
        if x[i] >= x[k]:
            if x[j] > x[k]:
                median = x[j] if x[i] > x[j] else x[i]
        else:
            if x[j] < x[k]:
                median = x[i] if x[i] > x[j] else x[j]
        while i < j:
            while x[i] < median:
                i += 1
            while x[j] > median:
                j -= 1
            if i < j:
                if x[i] > x[j]:
                    x[i], x[j] = x[j], x[i]
                    cvec[i], cvec[j] = cvec[j], cvec[i]
                i += 1
                j -= 1
        while x[i] >= median and i > start:
            i -= 1
        while x[j] <= median and j < stop:
            j += 1
        if i - start < stop - j:
            if i - start > 0:
                mysort(start, i, x, cvec)
            start = j
        else:
            if stop - j > 0:
                mysort(j, stop, x, cvec)
            stop = i


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=0, max_size=120))
def test_the_compiled_sort_puts_tied_rows_where_rparts_quicksort_does(values):
    from treekit_core.kernels.rpart_order import rpart_sort

    x = np.array(values, dtype=np.float64)
    ours_x, ours = x.copy(), np.arange(x.size, dtype=np.int64)
    rpart_sort(ours_x, ours)
    theirs_x, theirs = x.tolist(), list(range(x.size))
    if x.size:
        mysort(0, x.size - 1, theirs_x, theirs)
    assert ours.tolist() == theirs  # tied rows included: the sort is not stable
    assert ours_x.tolist() == sorted(values)


def test_a_nominal_first_column_keeps_the_rows_in_file_order():
    from treekit_core.builtins.pruners.rpart_node_rows import rpart_first_column_order

    X = np.array([[2.0, 1.0], [0.0, 3.0], [np.nan, 2.0], [1.0, 0.0]])
    assert rpart_first_column_order(X, np.array([3, 0])).tolist() == [0, 1, 2, 3]
    # numeric: rpart sorts a missing value as 0 (ties in rpart's order)
    assert rpart_first_column_order(X, None).tolist() == [1, 2, 3, 0]


def test_a_tree_routed_without_surrogates_sums_in_rparts_order_too():
    # quakes misses no value: the plain hard evaluator sends every row to one leaf
    reference = json.loads((FIXTURES / "quakes.json").read_text())
    data = load_dataset("quakes")
    params = {k: v for k, v in RPART.items() if k not in ("propagator", "evaluator")}
    model = TreeRegressor(**params).fit(data.X, data.y)
    path = model.pruning_path_
    assert path["cp"][::-1].tolist() == [float(c) for c in reference["cp"]]


def test_a_poisson_side_left_with_events_but_no_time_by_rounding_counts_as_empty():
    # a soft split's smoothed side is the node's sums less the other side's: rounding may
    # leave time 0 with events over (veteran's exponential tree under soft search did,
    # once the times were rescaled with R's arithmetic)
    from treekit_core.builtins.criteria import rpart_poisson_impurity

    assert rpart_poisson_impurity([1e-17, 0.0, 0.0], 1.0, None) == 0.0
    assert rpart_poisson_impurity([2.0, 4.0, 0.0], 2.0, None) == pytest.approx(
        -2.0 * 2.0 * np.log(0.5) / 2.0
    )


def test_rows_of_weight_zero_add_nothing_to_rparts_poisson_risk():
    # a forest's out-of-bag rows weigh 0; with shrink 0 a node whose only events are in
    # such rows has rate 0, where log(rate t / d) is log 0 (math.log raised on it)
    from treekit_core.builtins.targets import RpartPoissonRate

    target = RpartPoissonRate(shrink=0.0)
    rows = target.encode(np.array([[1.0, 2.0], [1.0, 0.0], [2.0, 0.0]]), 3).rows
    risks = target.node_risks_in_order(
        rows, np.array([0.0, 1.0, 1.0]), [np.arange(3), np.array([0, 1])], None
    )
    assert risks.tolist() == [0.0, 0.0]
