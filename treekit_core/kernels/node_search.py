"""Split search one node at a time (used when a composition cannot use the fused builder:
soft propagation, feature subsets drawn in Python, C4.5's rules)."""

import numpy as np
from numba import types

from treekit_core.kernels.compiling import IMPURITY_TYPE, jit
from treekit_core.kernels.split_search import F1, F2A, F2C, I1, f8, i8, scan_sorted_feature

GATHER_SIGNATURE = types.int64(F2A, F2C, I1, F1, i8, F1, F1, F2C, F1)


@jit(GATHER_SIGNATURE)
def gather_sorted_feature(
    X, evidence, rows, row_weights, feature, unsorted, values, weighted, weights
):
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


@jit(f8(F2C, F1, i8, F1))
def sum_known(weighted, weights, known, sums):
    """Class sums (into ``sums``) and total weight of the first ``known`` sorted samples,
    those with a known value (gather_sorted_feature puts missing values last)."""
    n_classes = sums.shape[0]
    for k in range(n_classes):
        sums[k] = 0.0
    total = 0.0
    for j in range(known):
        total += weights[j]
        for k in range(n_classes):
            sums[k] += weighted[j, k]
    return total


NODE_SIGNATURE = types.Tuple((i8, f8, f8, f8))(
    IMPURITY_TYPE, F1, F2A, F2C, I1, F1, F1, f8, I1, i8, f8
)


@jit(NODE_SIGNATURE)
def best_split_of_node(
    impurity,
    params,
    X,
    evidence,
    rows,
    row_weights,
    parent_sums,
    parent_weight,
    features,
    min_samples_leaf,
    min_weight_leaf,
):
    """Best (feature, threshold, drop, missing share) over ``features`` for the rows of a node.

    ``row_weights`` are the samples' weights at this node (fractional under soft
    propagation). A feature with missing values is judged on its known values, its drop
    scaled by their weight fraction (C4.5); the missing share is the known weight sent left.
    Features are tried in the given order; the first strictly best wins. Returns feature -1
    when no admissible cut exists.
    """
    n = rows.shape[0]
    n_classes = evidence.shape[1]
    values = np.empty(n)
    unsorted = np.empty(n)
    weighted = np.empty((n, n_classes))
    weights = np.empty(n)
    left_sums = np.empty(n_classes)
    right_sums = np.empty(n_classes)
    known_sums = np.empty(n_classes)
    parent_impurity = impurity(parent_sums, parent_weight, params)
    best_feature = -1
    best_threshold = 0.0
    best_drop = -np.inf
    best_share = 0.5
    for f in features:
        known = gather_sorted_feature(
            X, evidence, rows, row_weights, f, unsorted, values, weighted, weights
        )
        if known == n:  # no missing value: the node's own statistics
            sums, weight, base = parent_sums, parent_weight, parent_impurity
        else:
            weight = sum_known(weighted, weights, known, known_sums)
            if weight <= 0.0:
                continue
            sums, base = known_sums, impurity(known_sums, weight, params)
        drop, threshold, position = scan_sorted_feature(
            impurity,
            params,
            values[:known],
            weighted[:known],
            weights[:known],
            sums,
            weight,
            base,
            min_samples_leaf,
            min_weight_leaf,
            left_sums,
            right_sums,
        )
        if position < 0:
            continue
        if known < n:
            drop *= weight / parent_weight
        if drop > best_drop:
            best_drop = drop
            best_feature = f
            best_threshold = threshold
            left = 0.0
            for j in range(position):
                left += weights[j]
            best_share = left / weight
    return best_feature, best_threshold, best_drop, best_share
