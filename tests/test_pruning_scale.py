"""Issue 66: cost-complexity pruning without quadratic steps. The weakest-link sequence by
a heap (compiled) is the one recomputing every g(t) at every step gives (kept here as the
reference); cross-validation along each held-out row's path gives the errors that pruning
and scoring every subtree gives. Their speed is measured in benchmarks/ (bench_pruning.py,
README); here, exactness."""

import numpy as np
import pytest

from treekit_core import TreeClassifier, TreeRegressor
from treekit_core.builtins.pruners import cost_complexity as cc


def reference_sequence(tree, r_node):
    """The quadratic definition: every step recomputes g for every candidate and collapses
    the first node of the smallest (scikit-learn's ``_cost_complexity_prune``)."""
    n = tree.n_nodes
    parent = tree.parents()
    leaves = tree.leaves_under().astype(float)
    branch = np.zeros(n)
    for node in range(n - 1, -1, -1):
        kids = tree.children(node)
        branch[node] = r_node[node] if kids.size == 0 else branch[kids].sum()
    candidate = ~tree.is_leaf
    pruned, alphas = [], []
    while candidate[0]:
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.where(candidate, (r_node - branch) / (leaves - 1), np.inf)
        node = int(np.argmin(g))
        candidate[tree.descendants(node)] = False
        lost, diff = leaves[node] - 1, r_node[node] - branch[node]
        leaves[node], branch[node] = 1, r_node[node]
        up = parent[node]
        while up >= 0:
            leaves[up] -= lost
            branch[up] += diff
            up = parent[up]
        pruned.append(node)
        alphas.append(g[node])
    return np.array(pruned), np.array(alphas)


def fitted(kind, seed):
    rng = np.random.default_rng(seed)
    n = 300
    X = rng.normal(size=(n, 4))
    if kind == "regression":
        return TreeRegressor(min_samples_leaf=2).fit(X, X[:, 0] + rng.normal(size=n))
    if kind == "classes":
        y = (X[:, 0] + rng.normal(size=n) > 0).astype(int) + (X[:, 1] > 1)
        return TreeClassifier(min_samples_leaf=2).fit(X, y)
    codes = rng.integers(0, 5, size=n).astype(float)  # a multi-way nominal column
    X = np.column_stack([codes, X[:, 1:]])
    y = (codes % 2 + rng.normal(size=n) > 0.5).astype(int)
    return TreeClassifier(
        categorical_features=[0], splitter_params={"nominal_split": "multiway"}
    ).fit(X, y)


@pytest.mark.parametrize("kind", ["regression", "classes", "multiway"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_heap_sequence_is_the_quadratic_one_to_the_last_bit(kind, seed):
    model = fitted(kind, seed)
    tree = model.tree_
    r_node = cc.node_risk(tree, "prediction", model.composition_.labeler, model.composition_.target)
    sequence = cc.weakest_link_sequence(tree, r_node)
    pruned, alphas = reference_sequence(tree, r_node)
    np.testing.assert_array_equal(sequence.pruned_node, pruned)
    np.testing.assert_array_equal(sequence.step_alpha, alphas)
    # the internal nodes left after each step, as counting the pruned tree gives them
    for step in range(0, pruned.size + 1, max(1, pruned.size // 7)):
        mask = np.zeros(tree.n_nodes, dtype=bool)
        mask[pruned[:step]] = True
        kept = tree.collapse(mask)
        assert sequence.n_internal[step] == int((~kept.is_leaf).sum())
        assert sequence.n_leaves[step] == kept.n_leaves


def cross_validated(estimator, X, y, along_paths, monkeypatch):
    with monkeypatch.context() as patch:
        if not along_paths:
            patch.setattr(cc, "_routes_along_paths", lambda evaluator: False)
        model = estimator.fit(X, y)
    return model


@pytest.mark.parametrize("case", ["regression", "classes_with_missing", "nominal"])
def test_errors_along_paths_are_the_subtree_by_subtree_errors(case, monkeypatch):
    rng = np.random.default_rng(5)
    n = 400
    X = rng.normal(size=(n, 3))
    if case == "regression":
        y = X[:, 0] + rng.normal(size=n)
        make = lambda: TreeRegressor(  # noqa: E731
            pruner="cost_complexity", pruner_params={"cv": 5, "seed": 0}
        )
    elif case == "classes_with_missing":
        y = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
        X[rng.random(X.shape) < 0.05] = np.nan  # those rows are scored subtree by subtree
        make = lambda: TreeClassifier(  # noqa: E731
            pruner="cost_complexity", pruner_params={"cv": 5, "seed": 0, "rule": "one_se"}
        )
    else:  # many categories: a fold's tree meets categories its training rows lacked
        codes = rng.integers(0, 30, size=n).astype(float)
        X = np.column_stack([codes, X[:, 1:]])
        y = (codes % 3 == 0).astype(int) ^ (rng.random(n) < 0.1)
        make = lambda: TreeClassifier(  # noqa: E731
            categorical_features=[0], pruner="cost_complexity", pruner_params={"cv": 5, "seed": 0}
        )
    fast = cross_validated(make(), X, y, True, monkeypatch)
    slow = cross_validated(make(), X, y, False, monkeypatch)
    a, b = fast.tree_.component_state["pruner"], slow.tree_.component_state["pruner"]
    np.testing.assert_allclose(a["cv_error"], b["cv_error"], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(a["cv_std_error"], b["cv_std_error"], rtol=1e-9, atol=1e-12)
    assert a["chosen_alpha"] == b["chosen_alpha"]
    np.testing.assert_array_equal(fast.predict(X), slow.predict(X))


@pytest.mark.parametrize("n", [1, 2, 7, 255, 256, 300])
def test_presort_of_few_rows_is_the_radix_order(n):
    """Wide data of few rows is presorted by one numpy argsort (2 rows x 1M columns took 45
    s column by column): the same stable orders as the radix sort, NaN last, -0.0 as 0.0."""
    from treekit_core.kernels.builder import presort, stable_order

    rng = np.random.default_rng(n)
    X = np.round(rng.normal(size=(n, 40)), 1)
    X[rng.random(X.shape) < 0.2] = np.nan
    X[rng.random(X.shape) < 0.1] = -0.0
    X[rng.random(X.shape) < 0.1] = 0.0
    order = presort(X)
    assert order.dtype == np.int32 and order.shape == (40, n)
    for feature in range(40):
        np.testing.assert_array_equal(order[feature], stable_order(X[:, feature]))
