"""Criteria that score a split from its children (Criterion.split_score): CART's twoing rule
and Hellinger distance (HDDT), against hand computations (issue 35)."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_core import CompositionError, TreeClassifier
from treekit_core.datasets import load_dataset
from treekit_split_scores import Hellinger, Twoing


def stump(criterion, y, **params):
    X = np.arange(1, len(y) + 1, dtype=float)[:, None]
    return TreeClassifier(criterion=criterion, max_depth=1, **params).fit(X, np.asarray(y)).tree_


def test_twoing_chooses_the_split_a_hand_computation_predicts_where_gini_does_not():
    # y on x = 1..7. Twoing at 3.5: L = {0,0,2}, p = (2/3, 0, 1/3); R = {1,1,1,0},
    # p = (1/4, 3/4, 0); sum |p(j|L) - p(j|R)| = 5/12 + 9/12 + 4/12 = 3/2, and
    # p_L p_R / 4 = (3/7)(4/7)/4 = 3/49, so 3/49 * 9/4 = 27/196. At 2.5: (2/7)(5/7)/4 *
    # (4/5 + 3/5 + 1/5)^2 = 32/245 < 27/196; every other cut scores less.
    # Gini prefers 2.5: drop 30/49 - (5/7)(14/25) = 52/245 against 61/294 at 3.5.
    y = [0, 0, 2, 1, 1, 1, 0]
    twoing = stump("twoing", y)
    assert twoing.threshold[0] == 3.5
    assert twoing.node_fields["improvement"][0] == pytest.approx(float(Fraction(27, 196)), 1e-15)
    gini = stump("gini", y)
    assert gini.threshold[0] == 2.5
    assert gini.node_fields["improvement"][0] == pytest.approx(float(Fraction(52, 245)), 1e-15)


def test_twoing_of_two_classes_is_half_the_gini_drop_and_grows_gini_s_tree():
    """For two classes twoing = p_L p_R (p(0|L) - p(0|R))^2, half Gini's drop. On values
    without exact ties in the drops (haberman's integer ages tie exactly, and then the
    last bit of two different expressions picks the winner) the trees are the same."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(400, 4))
    y = (X[:, 0] + X[:, 1] ** 2 + rng.normal(scale=0.8, size=400) > 1).astype(int)
    gini = TreeClassifier(criterion="gini", max_depth=6).fit(X, y).tree_
    twoing = TreeClassifier(criterion="twoing", max_depth=6).fit(X, y).tree_
    np.testing.assert_array_equal(twoing.feature, gini.feature)
    np.testing.assert_array_equal(twoing.threshold, gini.threshold)
    internal = ~gini.is_leaf
    np.testing.assert_allclose(
        twoing.node_fields["improvement"][internal],
        gini.node_fields["improvement"][internal] / 2,
        rtol=1e-9,
        atol=1e-15,
    )
    np.testing.assert_allclose(twoing.impurity, gini.impurity)  # nodes report Gini


def test_hellinger_chooses_the_split_a_hand_computation_predicts_where_gini_does_not():
    # y on x = 1..8, six of class 0 and two of class 1. At 4.5 the left child holds 4/6 of
    # class 0 and none of class 1, the right 2/6 and 2/2: d = sqrt((sqrt(2/3) - 0)^2 +
    # (sqrt(1/3) - 1)^2) = 0.9194; at 7.5, d = sqrt((1 - sqrt(1/2))^2 + (0 - sqrt(1/2))^2)
    # = 0.7654. Gini prefers 7.5 (drop 0.1607 against 0.125 at 4.5).
    y = [0, 0, 0, 0, 1, 0, 0, 1]
    hellinger = stump("hellinger", y)
    assert hellinger.threshold[0] == 4.5
    expected = math.sqrt(2 / 3 + (math.sqrt(1 / 3) - 1) ** 2)
    assert hellinger.node_fields["improvement"][0] == pytest.approx(expected, rel=1e-14)
    assert stump("gini", y).threshold[0] == 7.5


def hellinger_of_cut(x, y, threshold):
    """The Hellinger distance of the cut x <= threshold, from unweighted counts."""
    left = x <= threshold
    total = [np.sum(y == c) for c in (0, 1)]
    parts = [[np.sum(side & (y == c)) / total[c] for c in (0, 1)] for side in (left, ~left)]
    return math.sqrt(sum((math.sqrt(p0) - math.sqrt(p1)) ** 2 for p0, p1 in parts))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.floats(0.05, 20.0))
def test_hellinger_splits_do_not_depend_on_the_class_priors(seed, factor):
    """The score compares each class's distribution over the children, so reweighting a
    whole class changes no score (Cieslak & Chawla's skew insensitivity): the best cut
    under any class weight scores, on the unweighted rows, the unweighted optimum (cuts
    that tie may trade places by the last bit)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, 3))
    y = (X[:, 0] + 0.7 * rng.normal(size=120) > 0.8).astype(int)
    if y.min() == y.max():
        y[0] = 1 - y[0]
    plain = TreeClassifier(criterion="hellinger", max_depth=1).fit(X, y).tree_
    weight = np.where(y == 1, factor, 1.0)
    skewed = TreeClassifier(criterion="hellinger", max_depth=1).fit(X, y, weight).tree_
    best = plain.node_fields["improvement"][0]
    assert skewed.node_fields["improvement"][0] == pytest.approx(best, rel=1e-9)
    cut = hellinger_of_cut(X[:, skewed.feature[0]], y, skewed.threshold[0])
    assert cut == pytest.approx(best, rel=1e-9)


@pytest.mark.parametrize("criterion", ["twoing", "hellinger"])
def test_the_presorted_grower_and_the_node_search_score_alike(criterion):
    """The fused builder and the node-by-node search (taken with missing values: here an
    all-missing extra column, which never splits) grow the same tree."""
    data = load_dataset("wisconsin")
    X = data.X
    with_missing = np.column_stack([X, np.full(X.shape[0], np.nan)])
    fused = TreeClassifier(criterion=criterion, max_depth=6).fit(X, data.y).tree_
    by_node = TreeClassifier(criterion=criterion, max_depth=6).fit(with_missing, data.y).tree_
    np.testing.assert_array_equal(by_node.feature, fused.feature)
    np.testing.assert_array_equal(by_node.threshold, fused.threshold)
    np.testing.assert_allclose(
        by_node.node_fields["improvement"], fused.node_fields["improvement"], rtol=1e-12
    )


def test_a_split_score_is_specialised_even_when_specialising_is_off(monkeypatch):
    """A split score reaches the kernels only in kernels specialised to the criterion, so
    TREEKIT_SPECIALISE=0 (function-value kernels for every other criterion) changes
    nothing: the twoing tree of three classes is the same, not Gini's."""
    data = load_dataset("balance_scale")
    on = TreeClassifier(criterion="twoing", max_depth=4).fit(data.X, data.y).tree_
    monkeypatch.setenv("TREEKIT_SPECIALISE", "0")
    off = TreeClassifier(criterion="twoing", max_depth=4).fit(data.X, data.y).tree_
    np.testing.assert_array_equal(off.threshold, on.threshold)
    np.testing.assert_array_equal(off.node_fields["improvement"], on.node_fields["improvement"])
    gini = TreeClassifier(criterion="gini", max_depth=4).fit(data.X, data.y).tree_
    assert not np.array_equal(gini.threshold, on.threshold)


def test_refusals_name_both_components():
    data = load_dataset("haberman")
    with pytest.raises(CompositionError, match="'twoing'.*'c45'|'c45'.*'twoing'"):
        TreeClassifier(criterion="twoing", splitter="c45").fit(data.X, data.y)
    X = np.column_stack([data.X, np.arange(data.X.shape[0]) % 3])
    with pytest.raises(CompositionError, match="splitter 'exhaustive' cannot search nominal"):
        TreeClassifier(criterion="twoing", categorical_features=[3]).fit(X, data.y)
    three = np.arange(data.X.shape[0]) % 3
    with pytest.raises(ValueError, match="'hellinger' is defined for two classes only"):
        TreeClassifier(criterion="hellinger").fit(data.X, three)


def test_a_split_score_typed_at_a_prompt_is_refused_with_the_reason():
    namespace = {}
    exec(
        "def score(a, wa, b, wb, p, wp, ip, params):\n    return 0.0\n",
        namespace,
    )

    class Typed(Twoing):
        name = "typed"
        split_score = staticmethod(namespace["score"])

    data = load_dataset("haberman")
    with pytest.raises(ValueError, match="must be defined in a source file"):
        TreeClassifier(criterion=Typed()).fit(data.X, data.y)


@pytest.mark.parametrize("criterion", [Twoing, Hellinger])
def test_the_conformance_kit_passes_both(criterion):
    from treekit_core.testing import check_component

    check_component(criterion)


def test_the_conformance_kit_catches_a_split_score_that_depends_on_the_side():
    from treekit_core.testing import ConformanceError, check_criterion

    class Lopsided(Twoing):
        name = "lopsided"
        split_score = staticmethod(lopsided_score)

    with pytest.raises(ConformanceError, match="changes when the two children swap sides"):
        check_criterion(Lopsided)


def lopsided_score(left, left_weight, right, right_weight, parent, parent_weight, base, params):
    return left_weight / parent_weight


@pytest.mark.parametrize("criterion", ["twoing", "hellinger"])
def test_the_histogram_splitter_scores_with_them_and_equals_the_exhaustive_search(criterion):
    """The histogram kernels score cuts through split_drop too: on values that each have a
    bin (wisconsin's 1..10) they split as the exhaustive search; nominal features are
    refused, naming both."""
    histogram = pytest.importorskip("treekit_histogram")
    from treekit_core import registered

    data = load_dataset("wisconsin", dropna=True)
    exact = TreeClassifier(criterion=criterion, max_depth=5).fit(data.X, data.y).tree_
    with registered(histogram, name="treekit-histogram"):
        binned = TreeClassifier(criterion=criterion, splitter="histogram", max_depth=5)
        binned = binned.fit(data.X, data.y).tree_
        X = np.column_stack([data.X, np.arange(data.y.size) % 3])
        with pytest.raises(CompositionError, match="splitter 'histogram' cannot search nominal"):
            TreeClassifier(
                criterion=criterion, splitter="histogram", categorical_features=[X.shape[1] - 1]
            ).fit(X, data.y)
    # the same partitions (a threshold in a value gap may differ: the histogram cuts at its
    # global bin edge, the exhaustive search at the node's midpoint)
    np.testing.assert_array_equal(binned.feature, exact.feature)
    np.testing.assert_array_equal(binned.n_samples, exact.n_samples)
    np.testing.assert_allclose(binned.statistics, exact.statistics)
    np.testing.assert_allclose(
        binned.node_fields["improvement"], exact.node_fields["improvement"], rtol=1e-12
    )


@pytest.mark.parametrize("criterion", ["twoing", "hellinger"])
@pytest.mark.parametrize("pruner", ["none", "cost_complexity", "pessimistic", "mdl"])
def test_every_pruner_and_both_splitters_with_missing_values(criterion, pruner):
    """Split scores with missing values (C4.5's fractional rule) under every built-in
    pruner, on the exhaustive and the histogram splitter: the models predict
    distributions, pruning never adds leaves, and a JSON round trip predicts the same."""
    histogram = pytest.importorskip("treekit_histogram")
    from treekit_core import registered

    data = load_dataset("wisconsin")  # 16 missing values in V6
    with registered(histogram, name="treekit-histogram"):
        for splitter in ("exhaustive", "histogram"):
            grown = TreeClassifier(criterion=criterion, splitter=splitter, max_depth=5)
            grown = grown.fit(data.X, data.y)
            model = TreeClassifier(
                criterion=criterion, splitter=splitter, pruner=pruner, max_depth=5
            ).fit(data.X, data.y)
            proba = model.predict_proba(data.X)
            np.testing.assert_allclose(proba.sum(axis=1), 1.0)
            assert model.get_n_leaves() <= grown.get_n_leaves()
            loaded = TreeClassifier.from_json(model.to_json())
            np.testing.assert_array_equal(loaded.predict_proba(data.X), proba)
