import numpy as np
import pytest

from treekit_core import TreeClassifier
from treekit_core.datasets import load_dataset


def diagonal(n=400, seed=0, margin=0.3):
    """Points on both sides of the line x0 + x1 = 10, none closer than ``margin`` to it."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 10, size=(3 * n, 2))
    X = X[np.abs(X.sum(axis=1) - 10) > margin][:n]
    y = (X[:, 0] + X[:, 1] > 10).astype(int)
    return X, y


def test_one_oblique_split_separates_a_diagonal_where_axis_aligned_needs_a_staircase():
    X, y = diagonal()
    oblique = TreeClassifier(splitter="oblique").fit(X, y)
    axis = TreeClassifier().fit(X, y)
    assert oblique.get_n_leaves() == 2 and oblique.score(X, y) == 1.0
    assert axis.get_n_leaves() > 10
    coef = oblique.tree_.node_fields["coef"][0]
    assert coef[0] / coef[1] == pytest.approx(1.0, rel=0.1)  # the direction of x0 + x1
    X_new, y_new = diagonal(seed=1)
    assert oblique.score(X_new, y_new) > axis.score(X_new, y_new)


def test_text_json_and_pruning():
    X, y = diagonal()
    model = TreeClassifier(splitter="oblique", pruner="cost_complexity").fit(X, y)
    assert "*x[0] + " in model.export_text()
    loaded = TreeClassifier.from_json(model.to_json())
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_real_data_and_any_criterion():
    data = load_dataset("wdbc")
    for criterion in ("gini", "entropy"):
        model = TreeClassifier(splitter="oblique", criterion=criterion, max_depth=3).fit(
            data.X, data.y
        )
        assert model.score(data.X, data.y) > 0.95


def test_pure_oblique_mode():
    X, y = diagonal()
    model = TreeClassifier(
        splitter="oblique", splitter_params={"also_axis_aligned": False}, max_depth=2
    ).fit(X, y)
    assert model.score(X, y) == 1.0
