import math
from typing import ClassVar

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_boundary_distance import BoundaryDistance
from treekit_core import (
    CompositionError,
    Evaluator,
    ForestClassifier,
    Splitter,
    TrainingData,
    Tree,
    TreeClassifier,
    hookimpl,
    registered,
)
from treekit_core.datasets import load_dataset


def make_tree(spec, n_features, n_classes=2):
    """Tree arrays from ("split", feature, threshold, left, right) / ("leaf", class)."""
    rows = []

    def add(node):
        node_id = len(rows)
        rows.append(None)
        if node[0] == "leaf":
            rows[node_id] = (-1, -1, -1, -2.0, node[1])
        else:
            _, f, t, left, right = node
            rows[node_id] = [None, None, f, t, -1]
            rows[node_id][0] = add(left)
            rows[node_id][1] = add(right)
        return node_id

    add(spec)
    n = len(rows)
    left, right, feature, threshold, decision = (np.array([r[i] for r in rows]) for i in range(5))
    value = np.zeros((n, n_classes))
    value[decision >= 0, decision[decision >= 0]] = 1.0
    return Tree.from_binary(
        left.astype(np.int64),
        right.astype(np.int64),
        feature.astype(np.int64),
        threshold.astype(float),
        value.copy(),
        np.ones(n),
        np.ones(n, dtype=np.int64),
        np.zeros(n),
        np.zeros(n, dtype=np.int64),
        value,
        decision.astype(np.int64),
        n_features,
    )


def scores(tree, X, **params):
    confidence = BoundaryDistance(**params)
    data = TrainingData(
        np.asfortranarray(np.asarray(X, float)),
        np.eye(tree.n_statistics)[[0] * len(X)],
        np.ones(len(X)),
    )
    tree.component_state = {"confidence": confidence.fit(tree, data, None)}
    from treekit_core import apply_tree

    decision = tree.decision[apply_tree(tree, np.asarray(X, float))]
    return confidence.score(tree, np.asarray(X, float), None, decision)


# x0 <= 1: (x1 <= 1: A | x1 > 1: B) ; x0 > 1: (x0 <= 2: A | (x0 <= 3: A | B))
TREE_2D = (
    "split",
    0,
    1.0,
    ("split", 1, 1.0, ("leaf", 0), ("leaf", 1)),
    ("split", 0, 2.0, ("leaf", 0), ("split", 0, 3.0, ("leaf", 0), ("leaf", 1))),
)


def test_2d_hand_computed_distances():
    tree = make_tree(TREE_2D, 2)
    X = [
        [0.0, 0.0],  # in A; B above at x1 = 1: distance 1
        [
            2.5,
            0.0,
        ],  # in A; B region x0 <= 1, x1 > 1: corner (1, 1) -> sqrt(2.25 + 1);
        #     B right at x0 = 3: 0.5
        [1.5, 5.0],  # in A (1 < x0 <= 2); nearest B: left-top region at x0 = 1 -> 0.5
        [1.0, 1.0],  # on the corner of A/B: 0
        [4.0, 0.0],  # in B (x0 > 3); nearest A is x0 = 3 -> 1 (not the neighbouring leaf's only)
        [-1.0, 3.0],
    ]  # in B; nearest A below at x1 = 1 -> 2
    np.testing.assert_allclose(scores(tree, X), [1.0, 0.5, 0.5, 0.0, 1.0, 2.0])


def test_nearest_other_region_need_not_be_a_neighbouring_leaf():
    # x0 <= 1: A | x0 <= 2: A | x0 <= 3: A | B -- from x0 = 0 the nearest B is 3 away,
    # past two leaves of the same class.
    tree = make_tree(
        (
            "split",
            0,
            1.0,
            ("leaf", 0),
            ("split", 0, 2.0, ("leaf", 0), ("split", 0, 3.0, ("leaf", 0), ("leaf", 1))),
        ),
        1,
    )
    np.testing.assert_allclose(scores(tree, [[0.0], [2.5], [3.0], [7.0]]), [3.0, 0.5, 0.0, 4.0])


def test_regions_touching_only_at_a_corner():
    # checkerboard: A B / B A; the two A squares touch at (1, 1) only
    tree = make_tree(
        (
            "split",
            0,
            1.0,
            ("split", 1, 1.0, ("leaf", 0), ("leaf", 1)),
            ("split", 1, 1.0, ("leaf", 1), ("leaf", 0)),
        ),
        2,
    )
    s = scores(tree, [[0.0, 0.0], [2.0, 2.0], [0.5, 0.9], [1.0, 1.0]])
    np.testing.assert_allclose(s, [1.0, 1.0, 0.1, 0.0])


def test_3d_hand_computed():
    tree = make_tree(("split", 2, 0.0, ("split", 0, 0.0, ("leaf", 0), ("leaf", 1)), ("leaf", 1)), 3)
    # (-1, 5, -2): in A; B at x0 > 0 (distance 1) and x2 > 0 (distance 2) -> 1
    # (-3, 0, -4): nearest B: x0 -> 0 is 3, x2 -> 0 is 4 -> 3 ; metrics on the same point
    X = [[-1.0, 5.0, -2.0], [-3.0, 0.0, -4.0]]
    np.testing.assert_allclose(scores(tree, X), [1.0, 3.0])
    tree2 = make_tree(
        (
            "split",
            2,
            0.0,
            ("split", 0, 0.0, ("leaf", 0), ("leaf", 1)),
            ("split", 0, 0.0, ("leaf", 1), ("leaf", 0)),
        ),
        3,
    )
    # (-3, 0, -4): B regions: x0 > 0 & x2 <= 0 (3) and x0 <= 0 & x2 > 0 (4)
    np.testing.assert_allclose(scores(tree2, [[-3.0, 0.0, -4.0], [2.0, 0.0, 1.0]]), [3.0, 1.0])
    np.testing.assert_allclose(scores(tree2, [[2.0, 0.0, 1.0]], metric="chebyshev"), [1.0])
    # from (2, 0, 1) in A (x0 > 0, x2 > 0): B at x0 <= 0 costs 2, at x2 <= 0 costs 1
    np.testing.assert_allclose(scores(tree2, [[2.0, 0.0, 1.0]], metric="manhattan"), [1.0])


def test_scales():
    tree = make_tree(("split", 0, 1.0, ("leaf", 0), ("leaf", 1)), 2)
    X = np.array([[0.0, 0.0], [4.0, 10.0]])
    np.testing.assert_allclose(scores(tree, X, scale=[2.0, 1.0]), [0.5, 1.5])
    np.testing.assert_allclose(scores(tree, X, scale="range"), [1 / 4, 3 / 4])
    np.testing.assert_allclose(scores(tree, X, scale="std"), [1 / 2, 3 / 2])


def random_tree(seed, depth=3):
    """A random tree on [0, 1]^2 with thresholds on a 0.1 grid and random labels."""
    rng = np.random.default_rng(seed)

    def grow(level, lower, upper):
        choices = [
            (f, t)
            for f in range(2)
            for t in np.round(np.arange(0.1, 1.0, 0.1), 1)
            if lower[f] + 1e-9 < t < upper[f] - 1e-9
        ]
        if level == depth or not choices or rng.random() < 0.2:
            return ("leaf", int(rng.integers(0, 2)))
        f, t = choices[rng.integers(len(choices))]
        left_upper, right_lower = list(upper), list(lower)
        left_upper[f], right_lower[f] = t, t
        return (
            "split",
            f,
            t,
            grow(level + 1, lower, left_upper),
            grow(level + 1, right_lower, upper),
        )

    return make_tree(grow(0, [0.0, 0.0], [1.0, 1.0]), 2)


@settings(max_examples=30, deadline=None)
@given(
    st.integers(0, 10_000),
    st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=5),
)
def test_equals_brute_force_minimum_within_grid_resolution(seed, points):
    tree = random_tree(seed)
    step = 0.01
    axis = np.arange(step / 2, 1.0, step)
    grid = np.array(np.meshgrid(axis, axis)).reshape(2, -1).T
    from treekit_core import apply_tree

    grid_decision = tree.decision[apply_tree(tree, grid)]
    X = np.array(points)
    got = scores(tree, X)
    own = tree.decision[apply_tree(tree, X)]
    for x, decided, value in zip(X, own, got, strict=True):
        other = grid[grid_decision != decided]
        if other.size == 0:
            assert math.isinf(value)
            continue
        brute = np.sqrt(((other - x) ** 2).sum(axis=1)).min()
        assert value <= brute + 1e-12
        assert brute - value <= step * math.sqrt(2)


def test_on_boundary_is_zero_and_invariant_to_renaming_classes():
    data = load_dataset("wisconsin", dropna=True)
    y_renamed = np.where(data.y == "benign", "zzz", "aaa")
    a = TreeClassifier(confidence="boundary_distance", max_depth=4).fit(data.X, data.y)
    b = TreeClassifier(confidence="boundary_distance", max_depth=4).fit(data.X, y_renamed)
    np.testing.assert_array_equal(a.decide(data.X).confidence, b.decide(data.X).confidence)
    on_boundary = data.X[:5].copy()
    on_boundary[:, a.tree_.feature[0]] = a.tree_.threshold[0]
    decision = a.decide(on_boundary)
    # the root threshold separates regions; points on it whose other side differs score 0
    assert (decision.confidence >= 0).all() and (decision.confidence == 0).any()


def test_missing_coordinates_are_free():
    tree = make_tree(("split", 0, 1.0, ("leaf", 0), ("split", 1, 5.0, ("leaf", 0), ("leaf", 1))), 2)
    # (0, nan) is in A (x0 <= 1); the B region x0 > 1, x1 > 5 is 1 away along x0 with x1 free
    data = TrainingData(np.asfortranarray([[0.0, 0.0]]), np.eye(2)[[0]], np.ones(1))
    confidence = BoundaryDistance()
    tree.component_state = {"confidence": confidence.fit(tree, data, None)}
    assert confidence.score(tree, np.array([[0.0, np.nan]]), None, np.array([0]))[0] == 1.0


@attrs.define(slots=False)
class MixingEvaluator(Evaluator):
    name: ClassVar[str] = "mixing"
    provides: ClassVar[frozenset] = frozenset()

    def predict_distribution(self, tree, X):
        return np.tile(tree.value[0], (X.shape[0], 1))


@attrs.define(slots=False)
class ObliqueLike(Splitter):
    name: ClassVar[str] = "oblique_like"
    provides: ClassVar[frozenset] = frozenset({"fractional_weights"})

    def find_split(self, state, node, rules):
        return None


class Plugin:
    @hookimpl
    def treekit_evaluators(self):
        return [MixingEvaluator]

    @hookimpl
    def treekit_splitters(self):
        return [ObliqueLike]


def test_refuses_compositions_whose_regions_are_not_crisp_boxes():
    data = load_dataset("haberman")
    with registered(Plugin(), name="test"):
        with pytest.raises(
            CompositionError,
            match="confidence 'boundary_distance' cannot be combined with "
            "evaluator 'mixing'.*hard_routing",
        ):
            TreeClassifier(confidence="boundary_distance", evaluator="mixing").fit(data.X, data.y)
        with pytest.raises(CompositionError, match="splitter 'oblique_like'.*axis_aligned"):
            TreeClassifier(confidence="boundary_distance", splitter="oblique_like").fit(
                data.X, data.y
            )
    with pytest.raises(ValueError, match="'boundary_distance' cannot score a forest"):
        ForestClassifier(n_estimators=2, confidence="boundary_distance").fit(data.X, data.y)


def test_keep_correct_rejection_on_real_data():
    data = load_dataset("wisconsin", dropna=True)
    model = TreeClassifier(
        confidence="boundary_distance",
        min_samples_leaf=3,
        reject={"keep_correct": 0.9},
        abstain_value="reject",
    ).fit(data.X, data.y)
    decision = model.decide(data.X)
    base = TreeClassifier(min_samples_leaf=3).fit(data.X, data.y).predict(data.X)
    correct = base == data.y
    kept_correct = (~decision.abstained & correct).sum() / correct.sum()
    assert kept_correct >= 0.9
    error_all = 1 - correct.mean()
    error_kept = (decision.labels[~decision.abstained] != data.y[~decision.abstained]).mean()
    assert error_kept < error_all  # rejection removes errors first
    assert set(model.predict(data.X)) <= {"benign", "malignant", "reject"}
    loaded = TreeClassifier.from_json(model.to_json())
    np.testing.assert_array_equal(loaded.decide(data.X).abstained, decision.abstained)


@pytest.mark.parametrize("jit", [True, False])
def test_corrupted_confidence_state_is_refused_naming_the_field(jit):
    """Every field of the boundary boxes state, broken every way, in a separate process."""
    import json

    from treekit_core import TreeClassifier
    from treekit_core.datasets import load_dataset
    from treekit_core.testing import check_corrupted_model_files

    data = load_dataset("haberman")
    model = TreeClassifier(max_depth=3, confidence="boundary_distance").fit(data.X, data.y)
    payload = json.loads(model.to_json())
    cases = []
    for key in ("lower", "upper", "decision", "scale"):
        for corrupt in ("truncate", "nan", "text", "missing", "out of range"):
            copy = json.loads(json.dumps(payload))
            state = copy["tree"]["component_state"]["confidence"]
            first = state[key][0]
            if corrupt == "truncate":
                state[key] = state[key][:-1]
            elif corrupt == "nan":
                state[key][0] = ["nan"] * len(first) if isinstance(first, list) else "nan"
            elif corrupt == "text":
                state[key] = "x"
            elif corrupt == "missing":
                del state[key]
            elif key in ("decision", "scale"):
                state[key][0] = 10**6 if key == "decision" else -1.0
            else:
                continue  # boxes may hold any number or +-inf
            cases.append((f"{key} {corrupt}", f"confidence.{key}", copy))
    check_corrupted_model_files(cases, data.X, jit=jit)


def test_a_forest_with_boundary_distance_is_refused_with_a_reason():
    from treekit_core import ForestClassifier

    data = load_dataset("haberman")
    for reject in (None, {"keep_correct": 0.9}):
        with pytest.raises(ValueError, match="'boundary_distance' cannot score a forest"):
            ForestClassifier(n_estimators=3, confidence="boundary_distance", reject=reject).fit(
                data.X, data.y
            )


def test_distances_on_several_threads_equal_one_thread():
    """Scoring compares a sample with every leaf box, so a few thousand samples already
    run in row chunks on the threads the model may use: the same distances as one."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(6000, 4))
    y = (X[:, 0] * X[:, 1] + X[:, 2] > 0).astype(int)
    X[rng.random(X.shape) < 0.05] = np.nan
    scores = []
    for threads in (1, 2):
        model = TreeClassifier(confidence="boundary_distance", n_threads=threads).fit(X, y)
        assert model.tree_.n_leaves > 60  # 6000 rows x leaves: a pass worth threads
        scores.append(model.decide(X).confidence)
    np.testing.assert_array_equal(scores[0], scores[1])
    assert np.isfinite(scores[0]).mean() > 0.9


def test_scales_from_rows_are_refused_for_a_tree_grown_elsewhere():
    """A tree grown elsewhere is finished without its rows: the scales "std" and "range"
    would be learned from them (refused, naming the confidence); given scales need none,
    and score as ``fit`` scores."""
    import copy

    from treekit_core import CompositionError, TrainingData

    bundle = load_dataset("haberman")
    X, y = bundle.X, bundle.y
    d = X.shape[1]
    grown = TreeClassifier(max_depth=3).fit(X, y)
    empty = TrainingData(
        np.zeros((0, d)),
        np.zeros((0, 2)),
        np.zeros(0),
        None,
        classes=grown.classes_,
        n_categories=np.zeros(d, dtype=np.int64),
        target=grown.composition_.target,
    )
    for scale in ("std", "range"):
        params = {"confidence": "boundary_distance", "confidence_params": {"scale": scale}}
        with pytest.raises(CompositionError, match="confidence 'boundary_distance' learns"):
            TreeClassifier(max_depth=3, **params).fit_grown_tree(copy.deepcopy(grown.tree_), empty)
    given_scales = {"confidence": "boundary_distance", "confidence_params": {"scale": [2.0] * d}}
    finished = TreeClassifier(max_depth=3, **given_scales).fit_grown_tree(
        copy.deepcopy(grown.tree_), empty
    )
    expected = TreeClassifier(max_depth=3, **given_scales).fit(X, y)
    np.testing.assert_array_equal(finished.decide(X).confidence, expected.decide(X).confidence)
