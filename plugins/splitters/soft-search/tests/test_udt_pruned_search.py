"""UDT's pruned search (end points, end-point sampling, corner bounds, global pruning) grows
the plain search's tree with fewer candidate evaluations."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_core import TreeClassifier
from treekit_core.datasets import load_dataset
from treekit_core.testing import assert_same_tree
from treekit_soft_search import udt


def udt_model(pruned, samples=100, width=0.1, **params):
    pdf = {"samples": samples, "width": width}
    return TreeClassifier(
        splitter="udt",
        propagator="udt",
        evaluator="udt",
        splitter_params={**pdf, "pruned_search": pruned},
        propagator_params=pdf,
        evaluator_params=pdf,
        **params,
    )


def fit_counting(pruned, X, y, **params):
    """The fitted model and the candidates its search evaluated."""
    seen = {}
    prepare = udt.UDTSplitter.prepare

    def counting(self, *args):
        state = prepare(self, *args)
        seen["evaluations"] = state["evaluations"]
        return state

    udt.UDTSplitter.prepare = counting
    try:
        model = udt_model(pruned, **params).fit(X, y)
    finally:
        udt.UDTSplitter.prepare = prepare
    return model, int(np.sum(seen["evaluations"]))


@pytest.mark.parametrize("name", ["pima", "bupa", "haberman", "wdbc"])
def test_the_uncertain_benchmarks_data_sets_give_the_plain_tree(name):
    data = load_dataset(name, dropna=True)
    rows = np.random.default_rng(0).permutation(data.X.shape[0])[:220]
    X, y = data.X[rows], data.y[rows]
    params = dict(criterion="entropy", max_depth=4)
    plain, plain_evaluations = fit_counting(False, X, y, **params)
    pruned, pruned_evaluations = fit_counting(True, X, y, **params)
    assert_same_tree(plain.tree_, pruned.tree_, rtol=1e-9)
    assert plain.tree_.n_leaves >= 3
    assert pruned_evaluations < 0.7 * plain_evaluations
    np.testing.assert_allclose(pruned.predict_proba(X), plain.predict_proba(X), atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(4, 60),
    d=st.integers(1, 3),
    k=st.integers(2, 3),
    levels=st.integers(2, 12),
    samples=st.integers(2, 25),
    width=st.floats(0.02, 0.5),
    criterion=st.sampled_from(["entropy", "gini", "misclassification"]),
    weighted=st.booleans(),
)
def test_small_random_data_give_the_plain_tree(
    seed, n, d, k, levels, samples, width, criterion, weighted
):
    rng = np.random.default_rng(seed)
    # Values rounded to 0.1: many exact ties, whose drops differ only by rounding (the two
    # searches add the same masses in different orders); both choose the leftmost
    # candidate and the first feature within TIE of the best, so ties cannot part them.
    X = rng.integers(0, levels, size=(n, d)) + rng.normal(scale=0.3, size=(n, d)).round(1)
    y = (X[:, 0] + rng.normal(size=n) > levels / 2).astype(int)
    if k == 3:
        y = y + (X[:, -1] > levels / 2)
    y[:2] = [0, 1]
    w = rng.integers(1, 4, size=n).astype(float) if weighted else None
    params = dict(criterion=criterion, max_depth=4, samples=samples, width=width)
    plain = udt_model(False, **params).fit(X, y, sample_weight=w)
    pruned = udt_model(True, **params).fit(X, y, sample_weight=w)
    assert_same_tree(plain.tree_, pruned.tree_, rtol=1e-9)


def test_pruned_search_needs_a_concave_criterion():
    data = load_dataset("haberman")
    with pytest.raises(ValueError, match="pruned_search=True needs a criterion declaring"):
        udt_model(True, criterion="variance").fit(data.X, data.y)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 40),
    samples=st.integers(2, 30),
    sigma=st.sampled_from([0.0, 0.05, 0.4, 3.0]),
    boxed=st.booleans(),
)
def test_fractional_split_matches_placing_every_pdf_point(seed, n, samples, sigma, boxed):
    """The propagation kernel (binary searches) against every point placed and counted."""
    from treekit_soft_search.kernels import udt_split_rows

    rng = np.random.default_rng(seed)
    X = np.asfortranarray(rng.integers(0, 6, size=(n, 2)) + rng.normal(size=(n, 2)).round(1))
    X[rng.random(n) < 0.2, 1] = np.nan
    rows = np.sort(rng.choice(n, size=max(1, n // 2), replace=False)).astype(np.int64)
    weights = rng.uniform(0.1, 2.0, size=rows.size)
    points = udt.standard_points(samples)
    lower, upper = (1.0, 4.5) if boxed else (-np.inf, np.inf)
    threshold, missing = 2.5, 0.3
    left, left_w, right, right_w = udt_split_rows(
        X, 1, rows, weights, sigma, points, lower, upper, threshold, missing
    )
    x = X[rows, 1]
    positions = x[:, None] + sigma * points[None, :]
    inside = (positions > lower) & (positions <= upper)
    counts = inside.sum(axis=1)
    share = np.where(
        counts > 0,
        (inside & (positions <= threshold)).sum(axis=1) / np.maximum(counts, 1),
        (x <= threshold).astype(float),
    )
    share = np.where(np.isnan(x), missing, share)
    expected_left, expected_right = weights * share, weights * (1 - share)
    np.testing.assert_array_equal(left, rows[expected_left > 0])
    np.testing.assert_array_equal(left_w, expected_left[expected_left > 0])
    np.testing.assert_array_equal(right, rows[expected_right > 0])
    np.testing.assert_array_equal(right_w, expected_right[expected_right > 0])


def test_tuples_with_one_value_merge_into_one():
    from treekit_soft_search.kernels import tuples_by_value

    x = np.array([2.0, np.nan, 1.0, 2.0, 1.0, 3.0])
    weights = np.array([1.0, 5.0, 2.0, 3.0, 1.0, 0.5])
    evidence = np.eye(2)[[0, 1, 1, 1, 0, 0]]
    values, group_weights, group_evidence = np.empty(6), np.empty(6), np.empty((6, 2))
    count = tuples_by_value(x, weights, evidence, values, group_weights, group_evidence)
    assert count == 3
    np.testing.assert_array_equal(values[:3], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(group_weights[:3], [3.0, 4.0, 0.5])
    np.testing.assert_allclose(group_evidence[:3], [[1 / 3, 2 / 3], [1 / 4, 3 / 4], [1, 0]])
