"""Each node's training rows in the order rpart adds them up, so that a target can compute
node risks, and so rpart's cp table, to rpart's last bit.

rpart (4.1.19, rpart.c and partition.c) computes the root's risk over the rows in file
order and every other node's over the rows of its first feature's sort (``sorts[0]``:
rpart's quicksort of the first column, a missing value sorting as 0; a nominal first column
is not sorted), which every split partitions stably (nodesplit.c): left rows first, each
side in the order it had. So a node's rows are that sort's order restricted to the node.
"""

from __future__ import annotations

import numpy as np

from treekit_core.engine.questions import tree_leaves


def rpart_first_column_order(X: np.ndarray, n_categories) -> np.ndarray:
    """The rows in the order of rpart's ``sorts[0]`` before any split."""
    n = X.shape[0]
    if n_categories is not None and len(n_categories) and n_categories[0] > 0:
        return np.arange(n, dtype=np.int64)  # rpart sorts no categorical column
    from treekit_core.kernels.rpart_order import rpart_sort

    column = np.asarray(X[:, 0], dtype=np.float64)
    values = np.ascontiguousarray(np.where(np.isnan(column), 0.0, column))
    order = np.arange(n, dtype=np.int64)
    rpart_sort(values, order)
    return order


def rows_by_node(tree, stopping_node: np.ndarray, order: np.ndarray) -> list:
    """Each node's rows: the root's in file order, every other node's as ``order``
    restricted to the rows whose ``stopping_node`` (the node each training row reaches,
    a leaf or a node it cannot pass) lies in its subtree."""
    _, position, size = tree.preorder()
    at = position[stopping_node]
    rows = [np.arange(stopping_node.shape[0], dtype=np.int64)] + [None] * (tree.n_nodes - 1)
    ordered = [order] + [None] * (tree.n_nodes - 1)
    for node in range(tree.n_nodes):  # a parent's id is below its children's
        members = ordered[node]
        for child in tree.children(node):
            inside = (at[members] >= position[child]) & (
                at[members] < position[child] + size[child]
            )
            ordered[child] = rows[child] = members[inside]
    return rows


def rpart_node_risks(tree, data, evaluator, target, labeler):
    """Every node's risk as rpart computes it (:meth:`Target.node_risks_in_order` on the
    rows of :func:`rows_by_node`), in risk units (not per unit of root weight); None when
    the target does not compute it or the evaluator does not send each training row to one
    node (rows shared between branches have no order of rpart's)."""
    stopping = evaluator.stopping_nodes(tree, data.X)
    if stopping is None:
        if "hard_routing" not in evaluator.provides or np.isnan(data.X).any():
            return None  # some row is shared among branches
        stopping = tree_leaves(tree, np.ascontiguousarray(data.X), complete=True)
    order = rpart_first_column_order(data.X, data.n_categories)
    node_rows = rows_by_node(tree, np.asarray(stopping, dtype=np.int64), order)
    risks = target.node_risks_in_order(data.evidence, data.weight, node_rows, labeler)
    return None if risks is None else np.asarray(risks, dtype=np.float64)
