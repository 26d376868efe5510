"""Nominal features: subset questions, exact where the theory says so."""

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_core import TreeClassifier
from treekit_core.builtins.criteria import Entropy, Gini
from treekit_core.builtins.nominal_subsets import best_subset, category_statistics
from treekit_core.datasets import dataset_path, load_dataset


def brute_force(sums, weight, counts, criterion):
    impurity, params = criterion.compiled_impurity(), np.zeros(1)
    parent = impurity(np.ascontiguousarray(sums.sum(0)), weight.sum(), params)
    present = np.flatnonzero(counts > 0)
    best = -np.inf
    for size in range(1, present.size):
        for subset in itertools.combinations(present, size):
            subset = list(subset)
            left, lw = np.ascontiguousarray(sums[subset].sum(0)), weight[subset].sum()
            right, rw = np.ascontiguousarray(sums.sum(0) - left), weight.sum() - lw
            drop = (
                parent
                - (lw * impurity(left, lw, params) + rw * impurity(right, rw, params))
                / weight.sum()
            )
            best = max(best, drop)
    return best, parent


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 10**6),
    st.integers(2, 7),
    st.integers(2, 4),
    st.sampled_from(["gini", "entropy"]),
)
def test_subset_found_equals_search_over_all_subsets(seed, m, k, name):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, m, size=60)
    labels = rng.integers(0, k, size=60)
    evidence = np.eye(k)[labels]
    sums, weight, counts = category_statistics(codes, np.ones(60), evidence, m)
    criterion = Gini() if name == "gini" else Entropy()
    expected, parent = brute_force(sums, weight, counts, criterion)
    drop, subset = best_subset(
        criterion.compiled_impurity(), np.zeros(1), sums, weight, counts, parent, 1, 0.0
    )
    if expected == -np.inf:
        assert subset is None
    else:
        assert drop == pytest.approx(
            expected, abs=1e-12
        )  # exact: Breiman's ordering (K=2) or all subsets


def test_two_classes_many_categories_is_exact_by_ordering():
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 14, size=400)
    labels = (rng.random(400) < (codes % 5) / 5).astype(int)
    sums, weight, counts = category_statistics(codes, np.ones(400), np.eye(2)[labels], 14)
    expected, parent = brute_force(sums, weight, counts, Gini())
    drop, _ = best_subset(
        Gini().compiled_impurity(), np.zeros(1), sums, weight, counts, parent, 1, 0.0
    )
    assert drop == pytest.approx(expected, abs=1e-12)


def test_one_hot_thresholds_never_beat_the_subset_question():
    rng = np.random.default_rng(0)
    colour = rng.choice(["red", "green", "blue", "amber", "grey"], size=300)
    y = np.isin(colour, ["red", "amber"]) ^ (rng.random(300) < 0.1)
    nominal = TreeClassifier(max_depth=1, categorical_features=[0]).fit(colour[:, None], y)
    one_hot = pd.get_dummies(pd.Series(colour)).to_numpy(float)
    thresholds = TreeClassifier(max_depth=1).fit(one_hot, y)

    def drop(model):
        tree = model.tree_
        return tree.impurity[0] - (tree.weight[1:3] * tree.impurity[1:3]).sum() / 300

    assert drop(nominal) >= drop(thresholds) - 1e-12
    assert "colour" not in nominal.export_text() and " in {" in nominal.export_text()


def test_lenses_from_strings_and_json():
    frame = pd.read_csv(dataset_path("lenses").open())
    X, y = frame.drop(columns="class"), frame["class"]
    model = TreeClassifier(criterion="entropy", categorical_features=list(X.columns)).fit(X, y)
    assert model.score(X, y) == 1.0
    assert model.export_text().startswith("|--- tear-prod-rate = normal")  # one category
    loaded = TreeClassifier.from_json(model.to_json())
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    by_index = TreeClassifier(criterion="entropy", categorical_features=[0, 1, 2, 3]).fit(
        X.to_numpy(), y
    )
    np.testing.assert_array_equal(by_index.predict(X.to_numpy()), model.predict(X))


def test_pandas_category_dtype_is_detected_and_missing_values_are_kept():
    frame = pd.read_csv(dataset_path("soybean").open(), na_values="?")
    X, y = frame.drop(columns="class").astype("category"), frame["class"]
    model = TreeClassifier(criterion="entropy", min_samples_leaf=2).fit(X, y)
    assert model.tree_.n_samples[0] == 683 and model.score(X, y) > 0.9
    assert len(model.categories_) == 35


def test_unseen_category_is_treated_as_missing():
    X = np.array([["a"], ["a"], ["b"], ["b"], ["c"], ["c"]], dtype=object)
    y = [0, 0, 1, 1, 1, 1]
    model = TreeClassifier(categorical_features=[0]).fit(X, y)
    proba = model.predict_proba(np.array([["zzz"]], dtype=object))
    share = model.tree_.shares(0)[0]
    left, right = model.tree_.children_left[0], model.tree_.children_right[0]
    np.testing.assert_allclose(
        proba[0], share * model.tree_.value[left] + (1 - share) * model.tree_.value[right]
    )


def test_nominal_errors():
    X = np.array([["a", 1.0], ["b", 2.0]], dtype=object)
    # a text column is nominal without being declared; a declaration adds columns
    model = TreeClassifier(categorical_features=[1]).fit(X, [0, 1])
    assert model.categories_ == {0: ["a", "b"], 1: [1.0, 2.0]}
    with pytest.raises(ValueError, match="column 0 has values that are not numbers"):
        TreeClassifier(categorical_features=[1]).fit(
            np.array([[{"a": 1}, 1.0], [{"b": 2}, 2.0]], dtype=object), [0, 1]
        )
    with pytest.raises(ValueError, match="categorical_features names 'x'"):
        TreeClassifier(categorical_features=["x"]).fit(X, [0, 1])
    many = np.array([[f"v{i}"] for i in range(60)], dtype=object)
    with pytest.raises(ValueError, match="has 60 categories; at most 53"):
        TreeClassifier(categorical_features=[0]).fit(many, [0, 1] * 30)


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("name", ["soybean", "vote", "labor", "lenses", "cu_summary"])
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"splitter_params": {"nominal_split": "multiway"}},
        {"splitter": "c45"},
    ],
    ids=["subset", "multiway", "c45"],
)
def test_no_runtime_warning_from_the_nominal_searches(name, params):
    """Issue 40: trees and bootstrap forests on every bundled data set with nominal columns
    (missing values included) raise no RuntimeWarning from treekit's own arithmetic (forests
    once printed hundreds of "invalid value encountered in divide" from the subset search);
    here every RuntimeWarning is an error."""
    from treekit_core import ForestClassifier, TreeRegressor

    data = load_dataset(name)
    if name == "cu_summary":  # a regression data set with nominal columns
        if "splitter" in params:
            return  # C4.5's rules are for classes
        TreeRegressor(categorical_features=data.categorical, **params).fit(data.X, data.y)
        return
    TreeClassifier(categorical_features=data.categorical, **params).fit(data.X, data.y)
    ForestClassifier(
        n_estimators=10, random_state=0, categorical_features=data.categorical, **params
    ).fit(data.X, data.y)
