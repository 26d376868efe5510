"""UDT and Quinlan's probabilistic thresholds."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_core import TreeClassifier
from treekit_core.datasets import load_dataset
from treekit_soft_search.quinlan_ramp import error_curve, soft_bounds


def test_udt_evaluates_s_times_n_candidates_at_the_root():
    rng = np.random.default_rng(0)
    X = rng.normal(10.0, 2.0, size=(40, 2))
    y = (X[:, 0] > 10).astype(int)
    model = TreeClassifier(
        criterion="entropy",
        splitter="udt",
        propagator="udt",
        evaluator="udt",
        splitter_params={"samples": 25},
        propagator_params={"samples": 25},
        evaluator_params={"samples": 25},
        max_depth=1,
    ).fit(X, y)
    state = model.composition_.splitter.prepare(
        __import__("treekit_core").TrainingData(np.asfortranarray(X), np.eye(2)[y], np.ones(40)),
        model.composition_.criterion,
        model.composition_.stopping.resolve(40, 40.0),
    )
    from treekit_core import Node

    root = Node(
        np.arange(40),
        np.ones(40),
        np.bincount(y, minlength=2).astype(float),
        40.0,
        1.0,
        0,
        np.array([0]),
        (np.full(2, -np.inf), np.full(2, np.inf)),
    )
    model.composition_.splitter.find_split(
        state, root, model.composition_.stopping.resolve(40, 40.0)
    )
    assert state["evaluations"] == [25 * 40]
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert 0.0 < proba[:, 1].min() or proba[:, 1].max() < 1.0  # straddling tuples mix leaves


def test_udt_grows_a_usable_tree_on_real_data():
    data = load_dataset("haberman")
    model = TreeClassifier(
        criterion="entropy",
        splitter="udt",
        propagator="udt",
        evaluator="udt",
        pruner="pessimistic",
        splitter_params={"samples": 20},
        propagator_params={"samples": 20},
        evaluator_params={"samples": 20},
    ).fit(data.X, data.y)
    assert model.get_n_leaves() >= 2 and model.score(data.X, data.y) > 0.7


def test_plt_bounds_on_a_hand_computed_node():
    # x = 0..8, classes A A A A B A B B B; the stump x <= 3.5 sends A left, B right.
    # E(v) = B's left of v + A's right of v: 4 3 2 1 2 1 2 3 4 for v = 0..8; E0 = 1, N = 9,
    # Limit = 1 + sqrt(1.5 * 8.5 / 10) = 2.1291594; E falls to it between 1 (3) and 2 (2):
    # Z- = 1 + (3 - Limit) / 1 = 1.8708406; it rises past it between 6 (2) and 7 (3):
    # Z+ = 6 + (Limit - 2) / 1 = 6.1291594.
    X = np.arange(9.0)[:, None]
    y = np.array(list("AAAABABBB"))
    model = TreeClassifier(max_depth=1, evaluator="quinlan_ramp").fit(X, y)
    assert model.tree_.threshold[0] == 3.5
    state = model.tree_.component_state["evaluator"]
    limit = 1 + np.sqrt(1.5 * 8.5 / 10)
    assert state["z_minus"][0] == pytest.approx(1 + (3 - limit))
    assert state["z_plus"][0] == pytest.approx(6 + (limit - 2))
    values, errors = error_curve(X[:, 0], (y == "B").astype(float), (y == "A").astype(float))
    np.testing.assert_allclose(errors, [4, 3, 2, 1, 2, 1, 2, 3, 4])
    # the gate: 1 left of Z-, 1/2 at Z, 0 right of Z+
    proba = model.predict_proba(np.array([[0.0], [3.5], [8.0], [1.8708406 / 2 + 3.5 / 2]]))
    a = list(model.classes_).index("A")
    assert proba[0, a] == pytest.approx(model.tree_.value[1, a])
    assert proba[1, a] == pytest.approx(
        0.5 * model.tree_.value[1, a] + 0.5 * model.tree_.value[2, a], abs=1e-3
    )
    assert proba[2, a] == pytest.approx(model.tree_.value[2, a])


def test_plt_defaults_to_the_value_range():
    values = np.array([1.0, 2.0, 3.0])
    z_minus, z_plus, _ = soft_bounds(values, np.array([0.0, 0.0, 0.0]), 2.0, 10.0)
    assert (z_minus, z_plus) == (1.0, 3.0)


def test_udt_with_missing_values():
    data = load_dataset("wisconsin")
    model = TreeClassifier(
        criterion="entropy",
        splitter="udt",
        propagator="udt",
        evaluator="udt",
        splitter_params={"samples": 10},
        propagator_params={"samples": 10},
        evaluator_params={"samples": 10},
        max_depth=3,
    ).fit(data.X, data.y)
    assert model.tree_.n_samples[0] == 699
    proba = model.predict_proba(data.X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert model.score(data.X, data.y) > 0.9


def quinlan_bounds_walking_the_tree(tree, X, y_evidence, weight, labeler):
    """The PLT bounds computed node by node in plain Python (the first implementation):
    an oracle for the compiled one-pass fit."""
    from treekit_core.testing import reference_leaf, reference_reaching
    from treekit_soft_search.quinlan_ramp import error_curve, soft_bounds

    z_minus, z_plus = tree.threshold.copy(), tree.threshold.copy()
    rows = {}
    for i in range(X.shape[0]):
        for node in reference_reaching(tree, X[i]):
            rows.setdefault(node, []).append(i)
    for node, r in rows.items():
        if tree.is_leaf[node]:
            continue
        r = np.array(r)
        x = X[r, tree.feature[node]]
        known = ~np.isnan(x)
        if known.sum() < 2:
            continue
        errors = [
            weight[r]
            * labeler.sample_errors(
                y_evidence[r], tree.decision[[reference_leaf(tree, X[i], int(child)) for i in r]]
            )
            for child in tree.children(node)
        ]
        values, curve = error_curve(x[known], errors[0][known], errors[1][known])
        z_minus[node], z_plus[node], _ = soft_bounds(
            values, curve, tree.threshold[node], weight[r].sum()
        )
    return z_minus, z_plus


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_plt_bounds_equal_a_node_by_node_walk_with_missing_values_and_weights(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(250, 3))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(0, 0.5, 250) > 0).astype(int)
    X[rng.random(X.shape) < 0.1] = np.nan
    weight = rng.uniform(0.5, 2.0, 250)
    model = TreeClassifier(evaluator="quinlan_ramp", max_depth=5, random_state=seed).fit(
        X, y, sample_weight=weight
    )
    tree = model.tree_
    assert tree.n_leaves >= 8
    evidence = np.eye(2)[np.searchsorted(model.classes_, y)]  # one-hot rows
    z_minus, z_plus = quinlan_bounds_walking_the_tree(
        tree, X, evidence, weight, model.composition_.labeler
    )
    state = tree.component_state["evaluator"]
    # equal up to the order in which a node's total weight is summed
    np.testing.assert_allclose(state["z_minus"], z_minus, rtol=1e-13, atol=0)
    np.testing.assert_allclose(state["z_plus"], z_plus, rtol=1e-13, atol=0)


def test_values_near_the_float_limit_give_clear_errors_in_soft_search_and_udt():
    X = np.array([[1e307], [1.5e307], [1.7e307]] * 10)
    y = [0, 1, 1] * 10
    model = TreeClassifier(splitter="soft_search").fit(X, y)  # the grid still fits in float64
    np.testing.assert_allclose(model.predict_proba(X).sum(axis=1), 1.0)
    X = np.array([[-1.7e308], [1.5e307], [1.7e308]] * 10)
    with pytest.raises(ValueError, match="overflows float64; rescale the feature"):
        TreeClassifier(splitter="soft_search", splitter_params={"sigma": 1.0}).fit(X, y)
    with pytest.raises(ValueError, match="overflows float64; rescale the feature"):
        TreeClassifier(splitter="udt", propagator="udt", evaluator="udt").fit(X, y)
    with pytest.raises(ValueError, match="set max_candidates"):
        TreeClassifier(
            splitter="soft_search", splitter_params={"sigma": 1e-9, "max_candidates": None}
        ).fit(np.arange(30.0)[:, None], y)


@pytest.mark.parametrize("sigma", ["abc", {"a": 1}, [[1.0, 2.0]], [-1.0]])
def test_a_sigma_of_the_wrong_type_names_the_parameter(sigma):
    with pytest.raises(Exception, match="sigma must be None or finite values >= 0"):
        TreeClassifier(splitter="soft_search", splitter_params={"sigma": sigma})._make_composition()


def test_plt_ramps_spanning_the_float_range_still_give_distributions():
    # found by the fuzz suite: Z- = -1.7e308 and Z+ = 1.7e308 made x - Z- overflow to inf,
    # the gate inf / inf = NaN, and every probability 0
    X = np.array([[-1.7e308], [-1e-300], [0.0], [1e-300], [1.7e308]] * 4)
    y = np.array([0, 1, 1, 0, 1] * 4)
    model = TreeClassifier(evaluator="quinlan_ramp", criterion="entropy").fit(X, y)
    state = model.tree_.component_state["evaluator"]
    assert state["z_minus"][0] == -1.7e308 or state["z_plus"][0] == 1.7e308
    proba = model.predict_proba(X)
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@pytest.mark.parametrize("u", [0.0, 0.1])
def test_soft_evaluation_of_a_feature_whose_sum_overflows(u):
    # found by the fuzz suite: the mean of +-1.7e308 overflowed to NaN, u * NaN made every
    # gate NaN and every probability 0
    X = np.column_stack([[1.7e308, 1e-300, 0.0, -1e-300, 1.7e308, 1.7e308], np.arange(6.0) + 1])
    y = np.array([0, 1, 1, 0, 0, 1])
    model = TreeClassifier(evaluator="soft", evaluator_params={"u": u}, random_state=0)
    proba = model.fit(X, y).predict_proba(X)
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(20, 120))
def test_ramps_bracket_their_threshold_with_soft_search_and_soft_propagation(seed, n):
    """Issue 33: with soft search and soft propagation a node's known rows may all lie on
    one side of its threshold; the ramp then sat wholly on that side, and a training row
    the hard tree classifies right got probability 0 for its class. Every ramp brackets its
    threshold, so along a row's hard path every gate gives it at least 1/2: the soft
    probability of a class is at least 2^-depth times the hard tree's."""
    rng = np.random.default_rng(seed)
    X = rng.normal(loc=5.0, size=(n, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 5.0).astype(int)
    composition = dict(splitter="soft_search", propagator="soft", max_depth=4)
    model = TreeClassifier(evaluator="quinlan_ramp", **composition).fit(X, y)
    hard = TreeClassifier(evaluator="hard", **composition).fit(X, y)
    tree, state = model.tree_, model.tree_.component_state["evaluator"]
    np.testing.assert_array_equal(tree.threshold, hard.tree_.threshold)
    internal = ~tree.is_leaf
    assert (state["z_minus"][internal] <= tree.threshold[internal]).all()
    assert (state["z_plus"][internal] >= tree.threshold[internal]).all()
    rows = np.arange(n)
    soft_p = model.predict_proba(X)[rows, y]
    hard_p = hard.predict_proba(X)[rows, y]
    assert (soft_p >= hard_p * 0.5**tree.max_depth - 1e-12).all()


def test_a_model_file_whose_ramp_misses_its_threshold_is_refused():
    import json

    from treekit_core import ModelFileError

    rng = np.random.default_rng(0)
    X = rng.normal(loc=5.0, size=(200, 2))
    y = (X[:, 0] > 5.0).astype(int)
    payload = json.loads(TreeClassifier(evaluator="quinlan_ramp", max_depth=2).fit(X, y).to_json())
    threshold = payload["tree"]["threshold"][0]
    payload["tree"]["component_state"]["evaluator"]["z_minus"][0] = threshold + 1.0
    with pytest.raises(ModelFileError, match="evaluator.z_minus of node 0 .* wrong side"):
        TreeClassifier.from_json(json.dumps(payload))
