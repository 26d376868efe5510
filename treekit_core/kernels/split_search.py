"""Exhaustive threshold search: scan one feature's sorted values with running class sums.

``scan_sorted_feature`` is the one piece of code that evaluates every midpoint between
consecutive distinct values; the per-node search (:mod:`.node_search`) and the fused
builder (:mod:`.builder`) both call it. Kernels live in separate modules so a fit loads
from numba's cache only the ones it uses.
"""

import numpy as np
from numba import types

from treekit_core.components.splitter import FEATURE_THRESHOLD
from treekit_core.kernels.compiling import IMPURITY_TYPE, jit

f8 = types.float64
i8 = types.int64
F1 = types.float64[::1]
F2C = types.float64[:, ::1]
F2A = types.Array(types.float64, 2, "A")
I1 = types.int64[::1]

SCAN_SIGNATURE = types.Tuple((f8, f8, i8))(
    IMPURITY_TYPE, F1, F1, F2C, F1, F1, f8, f8, i8, f8, F1, F1
)


@jit(SCAN_SIGNATURE)
def scan_sorted_feature(
    impurity,
    params,
    values,
    weighted_evidence,
    weights,
    parent_sums,
    parent_weight,
    parent_impurity,
    min_samples_leaf,
    min_weight_leaf,
    left_sums,
    right_sums,
):
    """Best cut of one feature whose node samples are sorted by value.

    ``weighted_evidence[j]`` is sample j's weight times its evidence row. Returns
    (impurity drop, threshold, number of samples on the left); the drop is -inf when no
    cut is admissible. ``left_sums`` and ``right_sums`` are scratch buffers of length K.
    """
    n = values.shape[0]
    n_classes = parent_sums.shape[0]
    best_drop = -np.inf
    best_threshold = 0.0
    best_position = -1
    if n < 2 or values[n - 1] <= values[0] + FEATURE_THRESHOLD:
        return best_drop, best_threshold, best_position
    for k in range(n_classes):
        left_sums[k] = 0.0
    left_weight = 0.0
    for j in range(n - 1):
        for k in range(n_classes):
            left_sums[k] += weighted_evidence[j, k]
        left_weight += weights[j]
        if values[j + 1] <= values[j] + FEATURE_THRESHOLD:
            continue
        n_left = j + 1
        if n_left < min_samples_leaf or n - n_left < min_samples_leaf:
            continue
        right_weight = parent_weight - left_weight
        if left_weight < min_weight_leaf or right_weight < min_weight_leaf:
            continue
        for k in range(n_classes):
            right_sums[k] = parent_sums[k] - left_sums[k]
        drop = (
            parent_impurity
            - (
                left_weight * impurity(left_sums, left_weight, params)
                + right_weight * impurity(right_sums, right_weight, params)
            )
            / parent_weight
        )
        if drop > best_drop:
            best_drop = drop
            best_position = n_left
            threshold = values[j] / 2.0 + values[j + 1] / 2.0
            if threshold == values[j + 1] or threshold == np.inf or threshold == -np.inf:
                threshold = values[j]
            best_threshold = threshold
    return best_drop, best_threshold, best_position
