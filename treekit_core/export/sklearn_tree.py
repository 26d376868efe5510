"""A treekit tree as a fitted scikit-learn ``DecisionTreeClassifier`` (or, for a tree that
predicts numbers, ``DecisionTreeRegressor``)."""

from __future__ import annotations

import numpy as np

from treekit_core.export.hard_trees import (
    binary_threshold_arrays,
    check_argmax_labels,
    check_hard,
    check_missing_rule,
)


def to_sklearn(model, missing: str = "warn"):
    """A fitted ``sklearn.tree.DecisionTreeClassifier`` with the same nodes, thresholds,
    class probabilities and labels, so ``plot_tree``, ``export_graphviz`` and the rest of
    scikit-learn's tree tools work. Needs binary ``x <= t`` questions, hard routing, no
    abstention and a labeler that picks the most probable class; otherwise
    :class:`NotExportableError` says what stands in the way. scikit-learn compares X in
    float32, so predictions are identical on X exactly representable in float32 (as
    between two scikit-learn trees). ``missing``: see :func:`treekit_core.export.to_onnx`.
    Nominal columns enter as their category codes (``model.categories_``)."""
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
    from sklearn.tree._tree import NODE_DTYPE
    from sklearn.tree._tree import Tree as SklearnTree

    target = "a scikit-learn tree"
    if hasattr(model, "estimators_"):
        raise TypeError("to_sklearn converts one tree; a forest has several trees")
    # a tree that predicts numbers becomes a regressor whose leaves hold those numbers
    regression = not model.composition_.target.predicts_labels()
    check_hard(model, target)
    # several outputs' labels: each output's class is the most probable of its own
    n_outputs = getattr(model, "n_outputs_", 1)
    if not regression and n_outputs == 1:
        check_argmax_labels(model, target)
    tree = model.tree_
    check_missing_rule(missing, model, target)
    arrays = binary_threshold_arrays(tree, missing, target)
    nodes = np.zeros(tree.n_nodes, dtype=NODE_DTYPE)
    nodes["left_child"] = arrays["children_left"]
    nodes["right_child"] = arrays["children_right"]
    nodes["feature"] = arrays["feature"]
    nodes["threshold"] = arrays["threshold"]
    nodes["impurity"] = tree.impurity
    nodes["n_node_samples"] = tree.n_samples
    nodes["weighted_n_node_samples"] = tree.weight
    nodes["missing_go_to_left"] = (arrays["children_default"] == arrays["children_left"]) & (
        arrays["children_left"] >= 0
    )
    # scikit-learn holds values n_nodes x n_outputs x the most classes of an output: a
    # regressor's one value per output, a classifier's class shares per output (zeros past
    # an output's own classes)
    if regression:
        n_classes = np.ones(n_outputs, dtype=np.intp)
        values = tree.value[:, :, None] if n_outputs > 1 else tree.value[:, None, :]
    else:
        classes = model.classes_ if n_outputs > 1 else [model.classes_]
        n_classes = np.array([len(c) for c in classes], dtype=np.intp)
        values = np.zeros((tree.n_nodes, n_outputs, int(n_classes.max())))
        start = 0
        for j, size in enumerate(n_classes):
            values[:, j, :size] = tree.value[:, start : start + size]
            start += size
    sk_tree = SklearnTree(tree.n_features, n_classes, n_outputs)
    sk_tree.__setstate__(
        {
            "max_depth": int(tree.max_depth),
            "node_count": int(tree.n_nodes),
            "nodes": nodes,
            "values": np.ascontiguousarray(values, dtype=np.float64),
        }
    )
    # the criterion's name labels the impurities in plot_tree / export_graphviz
    name = model.composition_.criterion.name
    if regression:
        known = ("squared_error", "friedman_mse", "absolute_error", "poisson")
        clf = DecisionTreeRegressor(criterion=name if name in known else "squared_error")
    else:
        clf = DecisionTreeClassifier(criterion=name)
        if n_outputs > 1:
            clf.classes_ = [np.asarray(c) for c in model.classes_]
            clf.n_classes_ = n_classes.copy()
        else:
            clf.classes_ = np.asarray(model.classes_)
            clf.n_classes_ = int(model.n_classes_)
    clf.tree_ = sk_tree
    clf.n_outputs_ = n_outputs
    clf.n_features_in_ = int(tree.n_features)
    clf.max_features_ = int(tree.n_features)
    if hasattr(model, "feature_names_in_"):
        clf.feature_names_in_ = np.asarray(model.feature_names_in_, dtype=object)
    return clf
