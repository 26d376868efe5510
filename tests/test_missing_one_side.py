"""Missing values as scikit-learn sends them (issue 57): the exhaustive splitter's
``missing="one_side"`` sends every row missing a feature to the side chosen with the cut,
as ``DecisionTreeClassifier`` / ``DecisionTreeRegressor`` do since 1.3, monotonic
constraints included (scikit-learn 1.4+ checks them with the missing rows on their side,
#27630). Compared with scikit-learn where its trees do not depend on its random feature
order (its five ``random_state``s agree: exact ties between features are broken by that
order)."""

import json

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from sklearn_parity import float32_exact

from treekit_core import CompositionError, TreeClassifier, TreeRegressor

ONE_SIDE = {"missing": "one_side"}


def _data(seed, n=600, d=5, missing=0.12):
    """n rows of d float32-exact columns, column j missing in about missing * (j + 1) / d
    of the rows; a class and a response driven by the first three columns, and 400 new
    rows with a fifth of their values missing."""
    rng = np.random.default_rng(seed)
    X = float32_exact(rng.normal(size=(n, d)))
    signal = X[:, 0] - 0.5 * X[:, 1] + X[:, 2]
    labels = (signal + rng.normal(scale=0.7, size=n) > 0).astype(int)
    response = 2.0 * signal + rng.normal(size=n)
    for j in range(d):
        X[rng.random(n) < missing * (j + 1) / d, j] = np.nan
    new = float32_exact(rng.normal(size=(400, d)))
    new[rng.random(new.shape) < 0.2] = np.nan
    return X, labels, response, new


def _compare(kind, X, y, new, **params):
    """("ties", None) where scikit-learn's random_states disagree, else (exact, largest
    difference) of treekit's predictions against scikit-learn's."""
    if kind == "classification":
        theirs = [
            DecisionTreeClassifier(random_state=s, **params).fit(X, y).predict_proba(new)
            for s in range(5)
        ]
        ours = TreeClassifier(splitter_params=ONE_SIDE, **params).fit(X, y).predict_proba(new)
    else:
        theirs = [
            DecisionTreeRegressor(random_state=s, **params).fit(X, y).predict(new) for s in range(5)
        ]
        ours = TreeRegressor(splitter_params=ONE_SIDE, **params).fit(X, y).predict(new)
    # (a regression tree's means may differ in the last bits between random_states: the
    # rows of a node are summed in another order)
    if not all(np.allclose(theirs[0], other, rtol=1e-12, atol=0) for other in theirs[1:]):
        return "ties", None
    difference = float(np.abs(theirs[0] - ours).max())
    return bool(np.allclose(ours, theirs[0], rtol=1e-12, atol=0)), difference


@pytest.mark.parametrize("kind", ["classification", "regression"])
@pytest.mark.parametrize(
    "params",
    [
        {"min_samples_leaf": 5, "max_depth": 4},
        {"min_samples_leaf": 12, "max_depth": 4},
        # issue 57's hidden case: monotonic constraints on three features
        {"min_samples_leaf": 20, "max_depth": 4, "monotonic_cst": [1, -1, 1, 0, 0]},
    ],
    ids=["leaf5", "leaf12", "monotonic"],
)
def test_one_side_predicts_what_scikit_learn_predicts(kind, params):
    compared = [
        _compare(kind, X, labels if kind == "classification" else response, new, **params)
        for X, labels, response, new in map(_data, range(12))
    ]
    differing = [(seed, d) for seed, (same, d) in enumerate(compared) if same is False]
    assert not differing  # every case without ties is exact
    assert sum(same is True for same, _ in compared) >= 3  # and there are such cases


def test_the_default_shares_differ_from_scikit_learn_where_one_side_matches():
    """The fixture of issue 57 that failed before: a monotonic tree on data with missing
    values, where scikit-learn's random_states agree; C4.5's shares (the default) give
    other probabilities, one side gives scikit-learn's."""
    X, labels, _, new = _data(0)
    params = {"min_samples_leaf": 20, "max_depth": 4, "monotonic_cst": [1, -1, 1, 0, 0]}
    theirs = [
        DecisionTreeClassifier(random_state=s, **params).fit(X, labels).predict_proba(new)
        for s in range(5)
    ]
    assert all(np.array_equal(theirs[0], other) for other in theirs[1:])
    shares = TreeClassifier(**params).fit(X, labels).predict_proba(new)
    one_side = TreeClassifier(splitter_params=ONE_SIDE, **params).fit(X, labels)
    assert np.abs(shares - theirs[0]).max() > 0.2  # 0.45 on this data
    np.testing.assert_array_equal(one_side.predict_proba(new), theirs[0])


def test_without_missing_values_at_fit_a_missing_value_goes_to_the_larger_child():
    """The presorted builder grows the tree (no missing value in the training rows); a
    value missing at prediction goes to the child with more training rows (ties: right),
    scikit-learn's rule."""
    X, _, response, new = _data(5, missing=0.0)
    assert not np.isnan(X).any()
    theirs = DecisionTreeRegressor(random_state=0, min_samples_leaf=10, max_depth=5)
    ours = TreeRegressor(splitter_params=ONE_SIDE, min_samples_leaf=10, max_depth=5)
    theirs.fit(X, response), ours.fit(X, response)
    np.testing.assert_allclose(ours.predict(new), theirs.predict(new), rtol=1e-12, atol=0)
    tree = ours.tree_
    internal = np.flatnonzero(tree.child_start[1:] - tree.child_start[:-1] == 2)
    to_left = tree.child_shares[tree.child_start[internal]]
    left, right = (
        tree.child_ids[tree.child_start[internal]],
        tree.child_ids[tree.child_start[internal] + 1],
    )
    np.testing.assert_array_equal(to_left, tree.n_samples[left] > tree.n_samples[right])


def test_a_cut_of_known_from_missing_values_and_its_model_file():
    """Where the missing rows differ from all known ones, the best cut sends every known
    value left and the missing ones right: threshold the largest float (scikit-learn's is
    +inf, which a model file does not take); the file keeps the sides."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    y = np.zeros(200)
    missing = rng.random(200) < 0.3
    y[missing] = 10.0
    x[missing] = np.nan
    X = np.column_stack([x, rng.normal(size=200)])
    model = TreeRegressor(max_depth=1, splitter_params=ONE_SIDE).fit(X, y)
    assert model.tree_.feature[0] == 0
    assert model.tree_.threshold[0] == np.finfo(np.float64).max
    new = np.array([[np.nan, 0.0], [1e30, 0.0], [-3.0, 1.0]])
    np.testing.assert_array_equal(model.predict(new), [10.0, 0.0, 0.0])
    loaded = TreeRegressor.from_json(model.to_json())
    np.testing.assert_array_equal(loaded.predict(new), [10.0, 0.0, 0.0])
    assert json.loads(model.to_json())["params"]["splitter_params"] == ONE_SIDE
    theirs = DecisionTreeRegressor(max_depth=1).fit(X, y)
    np.testing.assert_array_equal(theirs.predict(new), [10.0, 0.0, 0.0])


@pytest.mark.parametrize(
    "params, named",
    [
        ({"splitter_params": {**ONE_SIDE, "gain_ratio": True}}, "gain_ratio=True"),
        ({"splitter_params": {**ONE_SIDE, "questions": ["interval"]}}, "question kind"),
        ({"criterion": "absolute_error", "splitter_params": ONE_SIDE}, "absolute_error"),
    ],
    ids=["gain_ratio", "questions", "row_search"],
)
def test_one_side_refuses_what_it_cannot_search(params, named):
    X, _, response, _ = _data(0, n=60)
    with pytest.raises(CompositionError, match=f"missing='one_side'.*{named}"):
        TreeRegressor(**params).fit(X, response)


def test_one_side_refuses_a_nominal_feature():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame({"c": pd.Categorical(["a", "b", None, "a"] * 10), "x": np.arange(40.0)})
    with pytest.raises(CompositionError, match=r"nominal feature column 0 \('c'\)"):
        TreeRegressor(splitter_params=ONE_SIDE).fit(X, np.arange(40.0))


def test_an_unknown_missing_rule_is_refused_naming_it():
    with pytest.raises(ValueError, match="'missing' must be in"):
        TreeRegressor(splitter_params={"missing": "nearest"}).fit(np.eye(4), np.arange(4.0))
