"""A treekit tree or forest as the dict model ``shap.TreeExplainer`` accepts."""

from __future__ import annotations

import numpy as np

from treekit_core.export.hard_trees import (
    binary_threshold_arrays,
    check_hard_routing,
    check_missing_rule,
    fitted_trees,
)


def explained_values(model, tree) -> np.ndarray:
    """The node values SHAP explains: the tree's (class probabilities, a regression value),
    or what the estimator says its prediction is per node (a survival model's risk score:
    its ``node_risk_values``; a column per cause for competing risks, as SHAP explains a
    column per class)."""
    per_node = getattr(model, "node_risk_values", None)
    if per_node is None:
        return tree.value
    values = per_node(tree)
    return values[:, None] if values.ndim == 1 else values


def to_shap(model, missing: str = "warn") -> dict:
    """``{"trees": [...]}`` for ``shap.TreeExplainer``: per tree ``children_left``,
    ``children_right``, ``children_default``, ``features``, ``thresholds``, ``values``
    (n_nodes x n_classes class probabilities, a regressor's values or a survival model's
    risk scores; divided by the number of trees for a forest, so the trees' outputs sum to
    ``predict_proba`` / ``predict``) and ``node_sample_weight`` (the
    training weight reaching each node: the cover of path-dependent TreeSHAP). Needs
    binary ``x <= t`` questions and hard routing; abstention does not matter (SHAP
    explains the probabilities). ``missing``: see :func:`treekit_core.export.to_onnx`."""
    target = "shap's tree model"
    check_hard_routing(model, target)
    if hasattr(model, "loss_"):  # boosted: the raw prediction, the start as the offset
        return _boosted(model, missing, target)
    trees = fitted_trees(model)
    check_missing_rule(missing, model, target)
    exported = [
        _tree_dict(tree, explained_values(model, tree) / len(trees), missing, target)
        for tree in trees
    ]
    return {"trees": exported}


def _tree_dict(tree, values, missing: str, target: str) -> dict:
    """One tree as shap's dict model holds it, with ``values`` per node."""
    arrays = binary_threshold_arrays(tree, missing, target)
    return {
        "children_left": arrays["children_left"].astype(np.int32),
        "children_right": arrays["children_right"].astype(np.int32),
        "children_default": arrays["children_default"].astype(np.int32),
        "features": arrays["feature"].astype(np.int32),
        "thresholds": arrays["threshold"].astype(np.float64),
        "values": values,
        "node_sample_weight": tree.weight.astype(np.float64),
    }


def _boosted(model, missing: str, target: str) -> dict:
    """A boosted model's trees: each tree's values are what its leaves add to its raw
    column (the learning rate included; the other columns 0), ``base_offset`` the raw
    prediction every row starts from, ``tree_output="raw_value"``: SHAP's values then sum,
    with the expected value, to ``decision_function`` (the raw prediction) exactly."""
    check_missing_rule(missing, model, target)
    n_raw = model._init_raw.size
    exported = []
    for trees in model.estimators_:
        for column, tree in enumerate(trees):
            values = np.zeros((tree.n_nodes, n_raw))
            values[:, column] = model.learning_rate * tree.value[:, 0]
            exported.append(_tree_dict(tree, values, missing, target))
    offset = model._init_raw.astype(np.float64)
    return {
        "trees": exported,
        "base_offset": float(offset[0]) if n_raw == 1 else offset,
        "tree_output": "raw_value",
    }
