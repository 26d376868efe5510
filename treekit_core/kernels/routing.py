"""Hard routing: each sample follows ``x[feature] <= threshold`` to exactly one leaf."""
import numpy as np
from numba import prange

from treekit_core._jit import jit

#: One node in 24 bytes, so a visit touches one cache line instead of four arrays.
NODE_DTYPE = np.dtype([("left", np.int32), ("right", np.int32), ("feature", np.int32),
                       ("threshold", np.float64)], align=True)


def pack_nodes(children_left, children_right, feature, threshold) -> np.ndarray:
    nodes = np.empty(children_left.shape[0], dtype=NODE_DTYPE)
    nodes["left"], nodes["right"] = children_left, children_right
    nodes["feature"], nodes["threshold"] = feature, threshold
    return nodes


@jit(parallel=True)
def apply_hard(X, nodes):
    """Leaf id reached by every row of X (``nodes`` from :func:`pack_nodes`)."""
    n = X.shape[0]
    leaves = np.empty(n, dtype=np.int64)
    for i in prange(n):
        node = 0
        while nodes[node].left >= 0:
            if X[i, nodes[node].feature] <= nodes[node].threshold:
                node = nodes[node].left
            else:
                node = nodes[node].right
        leaves[i] = node
    return leaves
