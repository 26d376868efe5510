"""Hard routing: each sample follows ``x[feature] <= threshold`` to exactly one leaf."""
import numpy as np
from numba import prange, types

from treekit_core._jit import jit

APPLY_SIGNATURE = types.int64[::1](
    types.Array(types.float64, 2, "A"), types.int64[::1], types.int64[::1], types.int64[::1],
    types.float64[::1],
)


@jit(APPLY_SIGNATURE, parallel=True)
def apply_hard(X, children_left, children_right, feature, threshold):
    """Leaf id reached by every row of X."""
    n = X.shape[0]
    leaves = np.empty(n, dtype=np.int64)
    for i in prange(n):
        node = 0
        while children_left[node] >= 0:
            if X[i, feature[node]] <= threshold[node]:
                node = children_left[node]
            else:
                node = children_right[node]
        leaves[i] = node
    return leaves
