"""With classic settings treekit grows exactly scikit-learn's tree (real data sets)."""

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier
from sklearn_parity import assert_same_tree, float32_exact, split_margins

from treekit_core import TreeClassifier
from treekit_core.datasets import load_dataset

# (data set, criterion, min_samples_leaf, max_depth): settings where every node's best
# feature beats the runner-up by more than 1e-9 (checked in the test itself).
CASES = [
    ("haberman", "gini", 20, None),
    ("haberman", "entropy", 20, None),
    ("bupa", "gini", 20, None),
    ("bupa", "entropy", 30, None),
    ("wisconsin", "gini", 20, None),
    ("wisconsin", "entropy", 20, None),
    ("pima", "gini", 40, None),
    ("pima", "entropy", 10, 4),
    ("wdbc", "gini", 60, None),
    ("satimage", "gini", 10, 4),
    ("satimage", "entropy", 10, 4),
]


def _fit_both(name, criterion, min_samples_leaf, max_depth, **extra):
    data = load_dataset(name, dropna=True)
    X = float32_exact(data.data)
    ours = TreeClassifier(
        criterion=criterion, min_samples_leaf=min_samples_leaf, max_depth=max_depth, **extra
    ).fit(X, data.target)
    theirs = DecisionTreeClassifier(
        criterion=criterion,
        min_samples_leaf=min_samples_leaf,
        max_depth=max_depth,
        random_state=0,
        **extra,
    ).fit(X, data.target)
    return data, X, ours, theirs


@pytest.mark.parametrize("name,criterion,min_samples_leaf,max_depth", CASES)
def test_same_tree_as_sklearn(name, criterion, min_samples_leaf, max_depth):
    data, X, ours, theirs = _fit_both(name, criterion, min_samples_leaf, max_depth)
    classes, encoded = np.unique(data.target, return_inverse=True)
    margins = split_margins(ours, X, encoded, classes.size)
    assert margins.min() > 1e-9, "a near-tie: scikit-learn's random feature order could differ"
    assert_same_tree(ours.tree_, theirs.tree_)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-12)
    np.testing.assert_array_equal(ours.apply(X), theirs.apply(X))


@pytest.mark.parametrize(
    "extra",
    [
        {"min_samples_split": 60},
        {"min_weight_fraction_leaf": 0.05},
        {"min_impurity_decrease": 0.01},
        {"min_samples_leaf": 0.05},
    ],
)
def test_stopping_rules_mean_what_sklearn_means(extra):
    settings = {"min_samples_leaf": 20, **extra}
    data, X, ours, theirs = _fit_both(
        "wisconsin", "gini", settings.pop("min_samples_leaf"), None, **settings
    )
    assert_same_tree(ours.tree_, theirs.tree_)


def test_sample_weights_as_sklearn():
    data = load_dataset("haberman")
    X = float32_exact(data.data)
    weight = np.random.default_rng(3).integers(1, 4, size=X.shape[0]).astype(float)
    ours = TreeClassifier(min_samples_leaf=20).fit(X, data.target, sample_weight=weight)
    theirs = DecisionTreeClassifier(min_samples_leaf=20, random_state=0).fit(
        X, data.target, sample_weight=weight
    )
    classes, encoded = np.unique(data.target, return_inverse=True)
    assert split_margins(ours, X, encoded, 2, weight).min() > 1e-9
    assert_same_tree(ours.tree_, theirs.tree_)


@pytest.mark.parametrize(
    "name,class_weight",
    [
        ("haberman", "balanced"),
        ("wisconsin", {"benign": 1.0, "malignant": 3.0}),
        ("bupa", "balanced"),
    ],
)
def test_class_weight_as_sklearn(name, class_weight):
    """Issue 37: class_weight has scikit-learn's meaning: every row weighs its class's
    weight, so splits, stopping rules and predict_proba (class-weighted leaf proportions)
    are DecisionTreeClassifier(class_weight=...)'s; checked where no node nearly ties."""
    data, X, ours, theirs = _fit_both(name, "gini", 20, None, class_weight=class_weight)
    classes, encoded = np.unique(data.target, return_inverse=True)
    weights = np.array(
        [
            (len(encoded) / (classes.size * np.sum(encoded == k)))
            if class_weight == "balanced"
            else class_weight.get(c, 1.0)
            for k, c in enumerate(classes)
        ]
    )
    margins = split_margins(ours, X, encoded, classes.size, sample_weight=weights[encoded])
    assert margins.min() > 1e-9, "a near-tie: scikit-learn's random feature order could differ"
    assert_same_tree(ours.tree_, theirs.tree_)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-12)
    np.testing.assert_allclose(ours.tree_.weight, theirs.tree_.weighted_n_node_samples)
    with pytest.raises(ValueError, match="class_weight names classes"):
        TreeClassifier(class_weight={"no such class": 1.0}).fit(X, data.target)
