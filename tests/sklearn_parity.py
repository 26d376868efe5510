"""Helpers comparing a treekit tree with a scikit-learn tree node by node."""

import numpy as np

from treekit_core.kernels.node_search import best_split_of_node


def float32_exact(X):
    """scikit-learn works in float32: compare on values exactly representable in it."""
    return np.asarray(X, dtype=np.float64).astype(np.float32).astype(np.float64)


def agreed_sklearn_tree(estimator, X, y, **params):
    """scikit-learn's fitted ``estimator`` (a tree class) where its five ``random_state``s
    grow the same tree (nodes, features, thresholds), else None: it tries features in a
    random order and keeps the first of tied splits, so trees are compared where no tie
    decides."""
    fits = [estimator(random_state=s, **params).fit(X, y) for s in range(5)]
    first = fits[0].tree_
    for other in fits[1:]:
        o = other.tree_
        if (
            o.node_count != first.node_count
            or not np.array_equal(o.feature, first.feature)
            or not np.array_equal(o.threshold, first.threshold)
        ):
            return None
    return fits[0]


def assert_same_nodes(tree, theirs, impurity_atol=1e-12):
    """A treekit tree node for node as scikit-learn's ``theirs`` (its ``tree_``): the same
    count of nodes, features and thresholds of the splits, rows per node, and impurities
    (to 1e-9 relative)."""
    assert tree.n_nodes == theirs.node_count
    internal = theirs.children_left >= 0
    np.testing.assert_array_equal(tree.feature[internal], theirs.feature[internal])
    np.testing.assert_array_equal(tree.threshold[internal], theirs.threshold[internal])
    np.testing.assert_array_equal(tree.n_samples, theirs.n_node_samples)
    np.testing.assert_allclose(tree.impurity, theirs.impurity, rtol=1e-9, atol=impurity_atol)


def node_rows(tree, X):
    """Training rows reaching every node (hard routing)."""
    rows = {0: np.arange(X.shape[0])}
    for node in range(tree.n_nodes):
        if tree.children_left[node] >= 0:
            r = rows[node]
            left = X[r, tree.feature[node]] <= tree.threshold[node]
            rows[int(tree.children_left[node])] = r[left]
            rows[int(tree.children_right[node])] = r[~left]
    return rows


def split_margins(model, X, y_encoded, n_classes, sample_weight=None):
    """For each internal node: best drop minus the best drop of any other feature.

    scikit-learn tries features in a random order, so it agrees with treekit only where
    the best feature wins by a margin; tests demand that margin before demanding equality.
    """
    tree = model.tree_
    criterion = model.composition_.criterion
    impurity = criterion.compiled_impurity()
    params = criterion.impurity_params(n_classes)
    X = np.asfortranarray(X, dtype=np.float64)
    evidence = np.zeros((X.shape[0], n_classes))
    evidence[np.arange(X.shape[0]), y_encoded] = 1.0
    w = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, float)
    msl = model.min_samples_leaf
    margins = []
    for node, rows in node_rows(tree, X).items():
        if tree.children_left[node] < 0:
            continue
        rows = rows.astype(np.int64)
        rw = w[rows].copy()
        sums = rw @ evidence[rows]
        drops = []
        for f in range(X.shape[1]):
            feat, thr, drop, _ = best_split_of_node(
                impurity,
                params,
                X,
                evidence,
                rows,
                rw,
                sums,
                rw.sum(),
                np.array([f], dtype=np.int64),
                msl,
                0.0,
            )
            drops.append(drop if feat >= 0 else -np.inf)
        drops = np.sort(np.array(drops))[::-1]
        margins.append(drops[0] - drops[1] if len(drops) > 1 else np.inf)
    return np.array(margins)


def assert_same_tree(ours, theirs):
    """Structure, features, thresholds, counts, impurities and values identical."""
    n = ours.n_nodes
    assert n == theirs.node_count, f"{n} nodes vs scikit-learn's {theirs.node_count}"
    np.testing.assert_array_equal(ours.children_left, theirs.children_left)
    np.testing.assert_array_equal(ours.children_right, theirs.children_right)
    internal = ours.children_left >= 0
    np.testing.assert_array_equal(ours.feature[internal], theirs.feature[internal])
    np.testing.assert_array_equal(ours.threshold[internal], theirs.threshold[internal])
    np.testing.assert_array_equal(ours.n_samples, theirs.n_node_samples)
    np.testing.assert_allclose(ours.weight, theirs.weighted_n_node_samples, rtol=1e-12)
    np.testing.assert_allclose(ours.impurity, theirs.impurity, rtol=1e-9, atol=1e-12)
    their_value = theirs.value[:, 0, :]
    their_value = their_value / their_value.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(ours.value, their_value, rtol=1e-12, atol=1e-12)
