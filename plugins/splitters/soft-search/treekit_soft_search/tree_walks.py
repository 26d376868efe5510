"""Walks over a fitted tree that several evaluators need. Branches are answered by the
core's routing, so every question kind (thresholds, subsets, multi-way, plugins') works."""

from __future__ import annotations

import numpy as np


def rows_per_node(tree, X) -> dict:
    """Training rows reaching every node under hard routing; a row that cannot answer a
    question belongs to every branch."""
    from treekit_core import answers_at

    rows = {0: np.arange(X.shape[0])}
    for node in range(tree.n_nodes):
        kids = tree.children(node)
        if kids.size == 0 or node not in rows:
            continue
        r = rows[node]
        branch = answers_at(tree, np.ascontiguousarray(X[r]), [node])[:, 0]
        for b, child in enumerate(kids):
            rows[int(child)] = r[(branch == b) | (branch < 0)]
    return rows


def route_from(tree, X, start) -> np.ndarray:
    """Leaf reached by every row of X when starting at node ``start`` (hard routing; a
    row that cannot answer follows the branch that took the most training weight)."""
    from treekit_core import answers_at

    reached = np.full(X.shape[0], int(start), dtype=np.int64)
    pending = [(int(start), np.arange(X.shape[0]))]
    while pending:
        node, r = pending.pop()
        kids = tree.children(node)
        if kids.size == 0 or r.size == 0:
            reached[r] = node
            continue
        branch = answers_at(tree, np.ascontiguousarray(X[r]), [node])[:, 0]
        branch = np.where(branch < 0, int(np.argmax(tree.shares(node))), branch)
        for b, child in enumerate(kids):
            pending.append((int(child), r[branch == b]))
    return reached


def tested_feature_bounds(tree):
    """For every node, the bounds (lower, upper] of its region on the feature it tests."""
    from treekit_core import node_boxes

    lower, upper = node_boxes(tree)
    nodes = np.arange(tree.n_nodes)
    feature = np.maximum(tree.feature, 0)
    internal = ~tree.is_leaf
    return (
        np.where(internal, lower[nodes, feature], -np.inf),
        np.where(internal, upper[nodes, feature], np.inf),
    )
