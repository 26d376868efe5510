"""Exhaustive threshold search: scan one feature's sorted values with running class sums.

``scan_sorted_feature`` is the one piece of code that evaluates every midpoint between
consecutive distinct values; the per-node search and the fused builder both call it.
"""
import numpy as np
from numba import types

from treekit_core._jit import IMPURITY_TYPE, jit

#: Values closer than this are treated as equal (scikit-learn's FEATURE_THRESHOLD), so the
#: candidate thresholds are exactly scikit-learn's.
FEATURE_THRESHOLD = 1e-7

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
def scan_sorted_feature(impurity, params, values, weighted_evidence, weights, parent_sums,
                        parent_weight, parent_impurity, min_samples_leaf, min_weight_leaf,
                        left_sums, right_sums):
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
        drop = parent_impurity - (
            left_weight * impurity(left_sums, left_weight, params)
            + right_weight * impurity(right_sums, right_weight, params)
        ) / parent_weight
        if drop > best_drop:
            best_drop = drop
            best_position = n_left
            threshold = values[j] / 2.0 + values[j + 1] / 2.0
            if threshold == values[j + 1] or threshold == np.inf or threshold == -np.inf:
                threshold = values[j]
            best_threshold = threshold
    return best_drop, best_threshold, best_position


GATHER_SIGNATURE = types.int64(F2A, F2C, I1, F1, i8, F1, F1, F2C, F1)


@jit(GATHER_SIGNATURE)
def gather_sorted_feature(X, evidence, rows, row_weights, feature, unsorted, values, weighted, weights):
    """Copy the node's samples sorted by ``X[:, feature]`` into the buffers; samples with a
    missing value (NaN) go last. Returns the number of samples with a known value."""
    n = rows.shape[0]
    n_classes = evidence.shape[1]
    for j in range(n):
        unsorted[j] = X[rows[j], feature]
    order = np.argsort(unsorted, kind="mergesort")  # stable, NaN last
    known = 0
    for j in range(n):
        i = order[j]
        values[j] = unsorted[i]
        if not np.isnan(unsorted[i]):
            known += 1
        weights[j] = row_weights[i]
        r = rows[i]
        for k in range(n_classes):
            weighted[j, k] = row_weights[i] * evidence[r, k]
    return known


NODE_SIGNATURE = types.Tuple((i8, f8, f8))(
    IMPURITY_TYPE, F1, F2A, F2C, I1, F1, F1, f8, I1, i8, f8
)


@jit(NODE_SIGNATURE)
def best_split_of_node(impurity, params, X, evidence, rows, row_weights, parent_sums,
                       parent_weight, features, min_samples_leaf, min_weight_leaf):
    """Best (feature, threshold, drop) over ``features`` for the samples ``rows`` of a node.

    ``row_weights`` are the samples' weights at this node (fractional under soft
    propagation). Features are tried in the given order; the first strictly best wins.
    Returns feature -1 when no admissible cut exists.
    """
    n = rows.shape[0]
    n_classes = evidence.shape[1]
    values = np.empty(n)
    unsorted = np.empty(n)
    weighted = np.empty((n, n_classes))
    weights = np.empty(n)
    left_sums = np.empty(n_classes)
    right_sums = np.empty(n_classes)
    parent_impurity = impurity(parent_sums, parent_weight, params)
    best_feature = -1
    best_threshold = 0.0
    best_drop = -np.inf
    for f in features:
        gather_sorted_feature(X, evidence, rows, row_weights, f, unsorted, values, weighted, weights)
        drop, threshold, position = scan_sorted_feature(
            impurity, params, values, weighted, weights, parent_sums, parent_weight,
            parent_impurity, min_samples_leaf, min_weight_leaf, left_sums, right_sums,
        )
        if position >= 0 and drop > best_drop:
            best_drop = drop
            best_feature = f
            best_threshold = threshold
    return best_feature, best_threshold, best_drop
