"""The interval question kind, searched by the built-in exhaustive splitter through its
declared range candidates: against a brute-force search written here in numpy, by hand on
an interval concept, and through fit, JSON, text and the model-file checks."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from treekit_interval import MAX_GAPS, Interval, interval_candidate, interval_count, midpoint

from treekit_core import CompositionError, ModelFileError, TreeClassifier, export_text
from treekit_core.testing import check_component


def gini_drop(y, weight, side, n_classes):
    """i(t) - (w_0 i(0) + w_1 i(1)) / w_t with gini, on the rows given."""

    def gini(mask):
        w = weight[mask].sum()
        if w <= 0:
            return 0.0, 0.0
        p = np.bincount(y[mask], weights=weight[mask], minlength=n_classes) / w
        return w, 1.0 - (p**2).sum()

    total, parent = gini(np.ones(y.size, dtype=bool))
    w0, i0 = gini(side)
    w1, i1 = gini(~side)
    return parent - (w0 * i0 + w1 * i1) / total


def brute_force(X, y, weight, n_classes):
    """Every threshold and every two-sided interval of every feature at the root, with
    C4.5's scaling of a feature with missing values: [(drop, kind, feature, lo, hi)]."""
    out = []
    for f in range(X.shape[1]):
        known = ~np.isnan(X[:, f])
        x, yk, wk = X[known, f], y[known], weight[known]
        values = np.unique(x)
        m = values.size
        if m < 2 or wk.sum() <= 0:
            continue
        scale = wk.sum() / weight.sum()
        cuts = [midpoint(values[g - 1], values[g]) for g in range(1, m)]
        for hi in cuts:
            side = x <= hi
            if side.all() or not side.any():
                continue
            out.append((gini_drop(yk, wk, side, n_classes) * scale, "threshold", f, -np.inf, hi))
        for a in range(len(cuts)):
            for b in range(a + 1, len(cuts)):
                side = (x > cuts[a]) & (x <= cuts[b])
                out.append(
                    (gini_drop(yk, wk, side, n_classes) * scale, "interval", f, cuts[a], cuts[b])
                )
    return out


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(8, 40),
    d=st.integers(1, 3),
    levels=st.integers(2, 12),
    missing=st.sampled_from([0.0, 0.15]),
    weighted=st.booleans(),
)
def test_the_compiled_search_finds_the_brute_force_best_question(
    seed, n, d, levels, missing, weighted
):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, d)).astype(float)
    X[rng.random(X.shape) < missing] = np.nan
    y = rng.integers(0, 3, n)
    weight = rng.uniform(0.5, 2.0, n) if weighted else np.ones(n)
    n_classes = int(y.max()) + 1
    candidates = brute_force(X, y, weight, n_classes)
    if not candidates:
        return
    best = max(c[0] for c in candidates)
    if best <= 1e-12:
        return  # no split drops impurity: either tree is a stump
    leaders = [c for c in candidates if c[0] >= best - 1e-9]
    if len({(c[1], c[2], c[3], c[4]) for c in leaders}) > 1:
        return  # a tie (within rounding): either question is right
    drop, kind, feature, lo, hi = leaders[0]
    model = TreeClassifier(max_depth=1, splitter_params={"questions": ["interval"]})
    tree = model.fit(X, y, sample_weight=weight).tree_
    root_kind = tree.questions[tree.question[0]].name
    # the interval wins only where it is strictly better than every threshold
    assert root_kind == kind
    assert tree.feature[0] == feature
    assert tree.threshold[0] == pytest.approx(hi, abs=1e-12)
    if kind == "interval":
        assert tree.node_fields["interval_low"][0] == pytest.approx(lo, abs=1e-12)


def test_an_interval_concept_is_one_question_where_thresholds_need_two():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.integers(0, 21, 500), rng.uniform(0, 1, 500)]).astype(float)
    y = ((X[:, 0] > 6) & (X[:, 0] <= 13)).astype(int)
    with_intervals = TreeClassifier(splitter_params={"questions": ["interval"]}).fit(X, y)
    thresholds = TreeClassifier().fit(X, y)
    assert with_intervals.get_n_leaves() == 2 and thresholds.get_n_leaves() == 3
    tree = with_intervals.tree_
    assert (tree.node_fields["interval_low"][0], tree.threshold[0]) == (6.5, 13.5)
    assert with_intervals.score(X, y) == 1.0
    assert export_text(with_intervals).splitlines()[0] == "|--- 6.5000 < x[0] <= 13.5000"
    again = TreeClassifier.from_json(with_intervals.to_json())
    np.testing.assert_array_equal(again.predict(X), with_intervals.predict(X))
    # a missing value goes down both branches by their training shares
    row = np.array([[np.nan, 0.5]])
    np.testing.assert_allclose(
        with_intervals.predict_proba(row)[0], np.bincount(y, minlength=2) / y.size
    )


def test_the_candidates_are_every_two_sided_interval_or_a_rank_grid():
    for m in (2, 3, 4, 10, MAX_GAPS + 1):
        runs = {interval_candidate(np.zeros(m), m, i) for i in range(interval_count(m))}
        expected = {(a, b) for a in range(1, m) for b in range(a + 1, m)}
        assert runs == expected, m
    m = 1000
    runs = [interval_candidate(np.zeros(m), m, i) for i in range(interval_count(m))]
    assert len(runs) == len(set(runs)) == MAX_GAPS * (MAX_GAPS - 1) // 2
    assert all(1 <= a < b <= m - 1 for a, b in runs)
    assert min(a for a, _ in runs) == 1 and max(b for _, b in runs) == m - 1


def test_refusals_name_the_splitter_and_the_question_kind():
    X, y = np.arange(40.0).reshape(20, 2), np.arange(20) % 2
    with pytest.raises(
        CompositionError, match="'exhaustive' cannot search question kind 'threshold'"
    ):
        TreeClassifier(splitter_params={"questions": ["threshold"]}).fit(X, y)
    with pytest.raises(CompositionError, match="no registered question kind"):
        TreeClassifier(splitter_params={"questions": ["nope"]}).fit(X, y)
    with pytest.raises(CompositionError, match="gain_ratio=True cannot search"):
        TreeClassifier(splitter_params={"questions": ["interval"], "gain_ratio": True}).fit(X, y)
    with pytest.raises(ValueError, match="questions must be names"):
        TreeClassifier(splitter_params={"questions": [3]}).fit(X, y)


def test_a_model_file_with_an_empty_interval_is_refused():
    X = np.arange(30.0).reshape(30, 1)
    y = ((X[:, 0] > 9) & (X[:, 0] <= 19)).astype(int)
    model = TreeClassifier(splitter_params={"questions": ["interval"]}).fit(X, y)
    payload = json.loads(model.to_json())
    text = json.dumps(payload)
    assert "interval_low" in text
    fields = payload["tree"]["node_fields"]["interval_low"]
    fields[0] = 40.0  # above the upper bound
    with pytest.raises(ModelFileError, match="not a finite, non-empty interval"):
        TreeClassifier.from_json(json.dumps(payload))


def test_the_kind_passes_the_conformance_kit():
    check_component(Interval)
    assert math.isclose(midpoint(1.0, 2.0), 1.5)


def test_interval_questions_and_monotonic_constraints_are_refused():
    """A range of a feature's values sent one way breaks any order of them."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 2))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(CompositionError, match="question kind 'interval'"):
        TreeClassifier(splitter_params={"questions": ["interval"]}, monotonic_cst=[1, 0]).fit(X, y)
