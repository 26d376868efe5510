"""Monotonic and interaction constraints (issue 43): scikit-learn's monotonic trees
reproduced, the constraint kept by every splitter, pruner, forest and missing-value rule,
interaction groups kept on every path, refusals that say why, and model files checked."""

import pickle
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from sklearn_parity import float32_exact

from treekit_core import (
    ForestClassifier,
    ForestRegressor,
    ModelFileError,
    TreeClassifier,
    TreeRegressor,
)
from treekit_core.components.errors import CompositionError
from treekit_core.datasets import load_X_y
from treekit_core.testing import monotonic_violation, tree_paths

# -- scikit-learn's monotonic trees -----------------------------------------------


def _synthetic(seed, n=300):
    rng = np.random.default_rng(seed)
    X = float32_exact(rng.normal(size=(n, 4)))
    logit = X[:, 0] - 0.7 * X[:, 1] + 0.3 * X[:, 2] + rng.normal(size=n)
    return X, (logit > 0).astype(int), X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=n)


def _public(name, constraints):
    X, y = load_X_y(name, dropna=True)
    return float32_exact(np.asarray(X, dtype=np.float64)), np.asarray(y), constraints


# (X, y, monotonic_cst) for classification; every class set has two classes
CLASSIFICATION = [
    (*_synthetic(0)[:2], [1, -1, 0, 0]),
    (*_synthetic(1)[:2], [1, -1, 1, 0]),
    _public("pima", [0, 1, 0, 0, 0, 1, 0, 1]),
    _public("haberman", [0, 0, 1]),
    _public("bupa", [0, 0, 0, 0, 1, 0]),
]
REGRESSION = [
    (*_synthetic(2)[::2], [1, -1, 0, 0]),
    _public("quakes", [0, 0, -1, 1]),
    _public("airquality", [1, -1, 1, 0, 0]),
]
SETTINGS = [
    {"min_samples_leaf": 5, "max_depth": 4},
    {"min_samples_leaf": 10},
    {"min_samples_leaf": 3, "max_depth": 6},
    {"min_samples_leaf": 20, "max_depth": 3},
]


def _agreeing(predictions, tolerance):
    return all(np.abs(p - predictions[0]).max() <= tolerance for p in predictions[1:])


def _parity(cases, sklearn_tree, treekit_tree, predict, tolerance):
    """Compare where scikit-learn's five random_states give one tree; returns how many
    cases were compared (scikit-learn's random feature order decides its ties)."""
    compared = 0
    for X, y, cst in cases:
        rng = np.random.default_rng(7)
        X_test = float32_exact(
            X[rng.integers(0, X.shape[0], 400)] + rng.normal(scale=0.3, size=(400, X.shape[1]))
        )
        for params in SETTINGS:
            peers = [
                predict(sklearn_tree(monotonic_cst=cst, random_state=s, **params).fit(X, y), X_test)
                for s in range(5)
            ]
            if not _agreeing(peers, tolerance):
                continue
            ours = predict(treekit_tree(monotonic_cst=cst, **params).fit(X, y), X_test)
            assert np.abs(ours - peers[0]).max() <= tolerance, (cst, params)
            compared += 1
    return compared


def test_classifier_equals_scikit_learn_monotonic_tree():
    compared = _parity(
        CLASSIFICATION,
        DecisionTreeClassifier,
        TreeClassifier,
        lambda model, X: model.predict_proba(X),
        1e-12,
    )
    assert compared >= len(CLASSIFICATION) * len(SETTINGS) // 2


def test_regressor_equals_scikit_learn_monotonic_tree():
    compared = _parity(
        REGRESSION,
        DecisionTreeRegressor,
        TreeRegressor,
        lambda model, X: model.predict(X),
        1e-9,
    )
    assert compared >= len(REGRESSION) * len(SETTINGS) // 2


def test_the_constraint_changes_the_tree():
    """The parity above is no accident of unconstrained trees: on these data the
    constrained and unconstrained trees differ."""
    X, y, cst = CLASSIFICATION[2]
    free = TreeClassifier(min_samples_leaf=5, max_depth=4).fit(X, y)
    bound = TreeClassifier(monotonic_cst=cst, min_samples_leaf=5, max_depth=4).fit(X, y)
    assert not np.array_equal(free.predict_proba(X), bound.predict_proba(X))


# -- the constraint kept everywhere (a property) ------------------------------------


def _data(seed, n, d, with_missing):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    signal = X[:, 0] - X[:, 1] + rng.normal(scale=1.0, size=n)
    if with_missing:
        X[rng.random((n, d)) < 0.1] = np.nan
    return X, signal, rng


CLASSIFIERS = {
    "exhaustive": {},
    "cost_complexity": {"pruner": "cost_complexity"},
    "cost_complexity_cv": {"pruner": "cost_complexity", "pruner_params": {"cv": 5}},
    "one_se": {"pruner": "cost_complexity", "pruner_params": {"rule": "one_se"}},
    "c45_pessimistic": {"splitter": "c45", "pruner": "pessimistic", "criterion": "entropy"},
    "mdl": {"pruner": "mdl"},
    "gain_ratio": {"criterion": "entropy", "splitter_params": {"gain_ratio": True}},
}
REGRESSORS = {
    "exhaustive": {},
    "cost_complexity_cv": {"pruner": "cost_complexity", "pruner_params": {"cv": 5}},
    "poisson": {"criterion": "poisson"},
}


# (estimator, its forest, the named compositions, tolerance)
KINDS = {
    "classifier": (TreeClassifier, ForestClassifier, CLASSIFIERS, 1e-12),
    "regressor": (TreeRegressor, ForestRegressor, REGRESSORS, 1e-9),
}


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(40, 160),
    d=st.integers(2, 4),
    signs=st.lists(st.sampled_from([-1, 0, 1]), min_size=4, max_size=4),
    kind=st.sampled_from(sorted(KINDS)),
    pick=st.integers(0, 100),
    with_missing=st.booleans(),
    forest=st.booleans(),
)
def test_no_tree_or_forest_breaks_its_constraint(
    seed, n, d, signs, kind, pick, with_missing, forest
):
    tree, ensemble, compositions, tolerance = KINDS[kind]
    name = sorted(compositions)[pick % len(compositions)]
    cst = signs[:d]
    if not any(cst):
        cst[0] = 1
    X, signal, _ = _data(seed, n, d, with_missing)
    if kind == "classifier":
        y = (signal > 0).astype(int)
    else:
        y = np.exp(signal / 2) if name == "poisson" else signal
    params = {"monotonic_cst": cst, "random_state": 0, **compositions[name]}
    model = (ensemble(n_estimators=5, **params) if forest else tree(**params)).fit(X, y)

    def predict(Z):
        return model.predict(Z) if kind == "regressor" else model.predict_proba(Z)[:, 1]

    assert monotonic_violation(predict, cst, d, missing=with_missing, seed=seed) <= tolerance


def test_the_property_check_finds_a_broken_constraint():
    """The check above can fail: the same trees grown without constraints break them."""
    X, signal, rng = _data(3, 200, 2, False)
    y = (signal > 0).astype(int)
    model = TreeClassifier(random_state=0).fit(X, y)
    assert monotonic_violation(lambda Z: model.predict_proba(Z)[:, 1], [-1, 1], 2) > 0.5


def test_pruned_trees_keep_every_node_within_its_interval():
    X, signal, _ = _data(5, 300, 3, True)
    y = (signal > 0).astype(int)
    for params in CLASSIFIERS.values():
        model = TreeClassifier(monotonic_cst=[1, -1, 0], random_state=0, **params).fit(X, y)
        tree = model.tree_
        share = tree.value[:, 0]  # the first class's share: scikit-learn's constrained value
        lower, upper = tree.node_fields["value_lower"], tree.node_fields["value_upper"]
        assert np.all(share >= lower) and np.all(share <= upper), params
        parents = tree.parents()
        inner = parents >= 0
        # intervals nest: a child's lies within its parent's
        assert np.all(lower[inner] >= lower[parents[inner]])
        assert np.all(upper[inner] <= upper[parents[inner]])


# -- interaction constraints --------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"splitter": "c45", "criterion": "entropy"},
        {"pruner": "cost_complexity", "pruner_params": {"cv": 3}},
    ],
)
def test_no_path_mixes_interaction_groups(params):
    X, signal, rng = _data(11, 300, 5, True)
    # x1 + x3 decides, but x0 is the best single question (x0 and x1 are correlated)
    X[:, 0] = np.nan_to_num(X[:, 1]) + np.nan_to_num(X[:, 3]) + rng.normal(scale=0.5, size=300)
    y = (np.nan_to_num(X[:, 1]) + np.nan_to_num(X[:, 3]) > 0).astype(int)
    groups = [[0, 2], [1, 3]]  # feature 4, in no group, is a group of its own
    model = TreeClassifier(interaction_cst=groups, random_state=0, **params).fit(X, y)
    allowed = [frozenset(g) for g in groups] + [frozenset({4})]
    paths = tree_paths(model.tree_)
    if not params:  # the tree asks about several features on a path
        assert any(len(p) > 1 for p in paths)
    for path in paths:
        assert any(path <= group for group in allowed), path
    free = TreeClassifier(random_state=0, **params).fit(X, y)
    assert not all(any(p <= g for g in allowed) for p in tree_paths(free.tree_))


def test_interaction_groups_in_a_forest_and_by_name():
    import pandas as pd

    X, signal, _ = _data(12, 250, 4, False)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    y = signal + frame["c"] * frame["d"]
    forest = ForestRegressor(
        n_estimators=5, interaction_cst=[["a", "b"], ["c", "d"]], random_state=0
    ).fit(frame, y)
    for tree in forest.estimators_:
        for path in tree_paths(tree):
            assert path <= {0, 1} or path <= {2, 3}, path


# -- refusals ----------------------------------------------------------------------


def test_refusals_say_why():
    X, signal, _ = _data(4, 120, 3, False)
    y = (signal > 0).astype(int)
    with pytest.raises(CompositionError, match="two classes"):
        TreeClassifier(monotonic_cst=[1, 0, 0]).fit(X, np.digitize(signal, [-1, 1]))
    with pytest.raises(ValueError, match="monotonic_cst has 2 entries but X has 3"):
        TreeClassifier(monotonic_cst=[1, 0]).fit(X, y)
    with pytest.raises(ValueError, match="-1, 0 or 1"):
        TreeClassifier(monotonic_cst=[2, 0, 0]).fit(X, y)
    with pytest.raises(ValueError, match="no column names"):
        TreeClassifier(monotonic_cst={"age": 1}).fit(X, y)
    with pytest.raises(ValueError, match="out of range"):
        TreeClassifier(interaction_cst=[[0, 5]]).fit(X, y)
    with pytest.raises(CompositionError, match="target 'median'"):
        TreeRegressor(criterion="absolute_error", monotonic_cst=[1, 0, 0]).fit(X, signal)
    with pytest.raises(CompositionError, match="evaluator 'surrogate'"):
        TreeClassifier(propagator="surrogate", evaluator="surrogate", monotonic_cst=[1, 0, 0]).fit(
            X, y
        )


def test_a_nominal_feature_cannot_be_constrained():
    import pandas as pd

    X, signal, _ = _data(6, 120, 2, False)
    frame = pd.DataFrame({"dose": X[:, 0], "site": pd.Categorical(np.where(X[:, 1] > 0, "a", "b"))})
    y = (signal > 0).astype(int)
    with pytest.raises(CompositionError, match="feature 1, which is nominal"):
        TreeClassifier(monotonic_cst={"site": 1}).fit(frame, y)
    # a nominal feature left free is searched as categories, and the constraint holds
    model = TreeClassifier(monotonic_cst={"dose": 1}, min_samples_leaf=5).fit(frame, y)
    rng = np.random.default_rng(0)
    low = pd.DataFrame({"dose": rng.normal(size=200), "site": pd.Categorical(["a"] * 200)})
    high = low.assign(dose=low["dose"] + np.abs(rng.normal(size=200)))
    assert np.all(model.predict_proba(high)[:, 1] >= model.predict_proba(low)[:, 1])


# -- model files, pickles, parameters ------------------------------------------------


def test_model_file_records_and_checks_the_constraints():
    import json

    X, signal, _ = _data(8, 300, 3, False)
    y = (signal > 0).astype(int)
    model = TreeClassifier(monotonic_cst=[1, -1, 0], interaction_cst=[[0, 1], [2]]).fit(X, y)
    text = model.to_json()
    again = TreeClassifier.from_json(text)
    assert again.monotonic_cst == [1, -1, 0]
    assert np.array_equal(again.predict_proba(X), model.predict_proba(X))
    assert again.composition_.constraints == model.composition_.constraints
    tree = model.tree_
    # a node on feature 0 (rising) whose children are leaves: their statistics swapped to
    # pure classes the wrong way round, and every interval opened so nothing clips them
    node = next(
        n
        for n in range(tree.n_nodes)
        if tree.feature[n] == 0 and all(tree.is_leaf[c] for c in tree.children(n))
    )
    left, right = (int(c) for c in tree.children(node))
    tampered = json.loads(text)
    statistics = tampered["tree"]["statistics"]
    statistics[left] = [0.0, float(tree.weight[left])]  # all of classes_[1] on the left
    statistics[right] = [float(tree.weight[right]), 0.0]
    # (pure children: impurity 0, which a file must say, or its impurity check refuses it)
    tampered["tree"]["impurity"][left] = tampered["tree"]["impurity"][right] = 0.0
    opened = tampered["tree"]["node_fields"]
    opened["value_lower"] = [-1e300] * tree.n_nodes
    opened["value_upper"] = [1e300] * tree.n_nodes
    with pytest.raises(ModelFileError, match="do not respect the constraint"):
        TreeClassifier.from_json(json.dumps(tampered))
    # the same statistics within the stored intervals: clipped back into order, accepted
    clipped = json.loads(text)
    clipped["tree"]["statistics"] = statistics
    clipped["tree"]["impurity"] = tampered["tree"]["impurity"]
    again = TreeClassifier.from_json(json.dumps(clipped))
    proba = again.predict_proba(X)[:, 1]
    assert monotonic_violation(lambda Z: again.predict_proba(Z)[:, 1], [1, -1, 0], 3) == 0.0
    assert proba.shape == (X.shape[0],)
    # the intervals removed
    del tampered["tree"]["node_fields"]["value_lower"]
    with pytest.raises(ModelFileError, match="value_lower"):
        TreeClassifier.from_json(json.dumps(tampered))
    # a path across groups
    crossed = json.loads(text)
    crossed["params"]["interaction_cst"] = [[0], [1], [2]]
    with pytest.raises(ModelFileError, match="no interaction_cst group"):
        TreeClassifier.from_json(json.dumps(crossed))
    # NaN intervals
    holes = json.loads(text)
    holes["tree"]["node_fields"]["value_upper"] = ["nan"] * tree.n_nodes
    with pytest.raises(ModelFileError, match="must hold a number at every node"):
        TreeClassifier.from_json(json.dumps(holes))


def test_pickle_grid_search_and_forests_keep_the_constraints():
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV

    X, signal, _ = _data(9, 200, 3, False)
    y = (signal > 0).astype(int)
    model = ForestClassifier(n_estimators=4, monotonic_cst=[1, -1, 0], random_state=0).fit(X, y)
    copy = pickle.loads(pickle.dumps(model))
    assert np.array_equal(copy.predict_proba(X), model.predict_proba(X))
    assert clone(model).get_params()["monotonic_cst"] == [1, -1, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = GridSearchCV(
            TreeClassifier(monotonic_cst=[1, -1, 0]), {"min_samples_leaf": [2, 8]}, cv=3
        ).fit(X, y)
    assert search.best_estimator_.composition_.constraints.monotonic == (1, -1, 0)
