"""Walks over a fitted tree that several evaluators need."""

from __future__ import annotations

import numpy as np


def rows_per_node(tree, X) -> dict:
    """Training rows reaching every node under hard routing."""
    rows = {0: np.arange(X.shape[0])}
    for node in range(tree.n_nodes):
        if tree.children_left[node] >= 0 and node in rows:
            r = rows[node]
            x = X[r, tree.feature[node]]
            left = x <= tree.threshold[node]
            missing = np.isnan(x)  # a row with the value missing belongs to both branches
            rows[int(tree.children_left[node])] = r[left | missing]
            rows[int(tree.children_right[node])] = r[~left | missing]
    return rows


def route_from(tree, X, start) -> np.ndarray:
    """Leaf reached by every row of X when starting at node ``start`` (hard routing)."""
    nodes = np.full(X.shape[0], start, dtype=np.int64)
    active = tree.children_left[nodes] >= 0
    while active.any():
        idx = np.flatnonzero(active)
        current = nodes[idx]
        x = X[idx, tree.feature[current]]
        share = np.asarray(tree.node_fields.get("missing_left", np.full(tree.n_nodes, 0.5)))[
            current
        ]
        go_left = np.where(
            np.isnan(x), share >= 0.5, x <= tree.threshold[current]
        )  # missing: the heavier side
        nodes[idx] = np.where(go_left, tree.children_left[current], tree.children_right[current])
        active = tree.children_left[nodes] >= 0
    return nodes


def tested_feature_bounds(tree):
    """For every node, the bounds (lower, upper] of its region on the feature it tests."""
    from treekit_core import node_boxes

    lower, upper = node_boxes(tree)
    nodes = np.arange(tree.n_nodes)
    feature = np.maximum(tree.feature, 0)
    internal = tree.children_left >= 0
    return (
        np.where(internal, lower[nodes, feature], -np.inf),
        np.where(internal, upper[nodes, feature], np.inf),
    )
