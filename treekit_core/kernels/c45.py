"""C4.5 release 8 numeric split search (as Weka's J48: C45Split.handleNumericAttribute)."""

import math

import numpy as np
from numba import types

from treekit_core.kernels.compiling import F1, F2A, F2C, I1, IMPURITY_TYPE, f8, i8, jit
from treekit_core.kernels.growth import within_bounds
from treekit_core.kernels.node_search import gather_sorted_feature, sum_known

#: Weka's tolerance in comparisons (Utils.SMALL) and its "values differ" gap.
SMALL = 1e-6
VALUE_GAP = 1e-5


@jit(types.float64(types.float64))
def weight_log2(x):
    """x log2 x, 0 below 1e-6 (Weka's logFunc)."""
    if x < 1e-6:
        return 0.0
    return x * math.log2(x)


C45_SIGNATURE = types.void(
    IMPURITY_TYPE, F1, F2A, F2C, I1, F1, F1, I1, f8, i8, F1, F1, F1, F1, F1, F1
)


@jit(C45_SIGNATURE)
def c45_feature_scores(
    impurity,
    params,
    X,
    evidence,
    rows,
    row_weights,
    sample_weight,
    features,
    min_objects,
    n_outcomes,
    info_gain,
    gain_ratio,
    split_point,
    left_weight,
    signs,
    limits,
):
    """For every candidate feature: info gain after the log2(Tries)/|D| penalty (NaN when
    the feature has no usable cut), gain ratio, the cut's midpoint and the share of the
    known weight on its left (``left_weight``, where samples with a missing value go).

    The gain uses the composition's impurity on the samples with a known value, scaled by
    their weight fraction: with criterion "entropy" this is C4.5's information gain in bits.

    ``signs[f]`` is feature f's monotonic constraint (0: none) and ``limits`` the node's
    value limits: a cut that breaks the constraint (:func:`.growth.within_bounds`, on the
    known values) is no candidate, though it counts in Tries (it was examined).

    J48 requires 2 x MinSplit *instances* with a known value, counting a fractional copy of
    an instance (missing values) as one. Here an instance counts its sample weight
    (``sample_weight``, indexed by row): the same for unit weights, and a row of integer
    weight w counts as its w duplicates would.
    """
    n = rows.shape[0]
    n_stats = evidence.shape[1]
    unsorted = np.empty(n)
    values = np.empty(n)
    weighted = np.empty((n, n_stats))
    weights = np.empty(n)
    left_sums = np.empty(n_stats)
    right_sums = np.empty(n_stats)
    known_sums = np.empty(n_stats)
    node_weight = 0.0
    for j in range(n):
        node_weight += row_weights[j]
    for index in range(features.shape[0]):
        f = features[index]
        info_gain[index] = np.nan
        gain_ratio[index] = 0.0
        known = gather_sorted_feature(
            X, evidence, rows, row_weights, f, unsorted, values, weighted, weights
        )
        known_weight = sum_known(weighted, weights, known, known_sums)
        instances = 0.0
        for j in range(n):
            if not np.isnan(X[rows[j], f]):
                instances += sample_weight[rows[j]]
        min_split = 0.1 * known_weight / n_outcomes
        if min_split <= min_objects + SMALL:
            min_split = min_objects
        elif min_split > 25.0 + SMALL:
            min_split = 25.0
        if instances < 2 * min_split - SMALL:
            continue
        unknown_rate = (node_weight - known_weight) / node_weight
        parent_impurity = impurity(known_sums, known_weight, params)
        for k in range(n_stats):
            left_sums[k] = 0.0
        left = 0.0
        best_gain = 0.0
        best_position = -1
        best_left = 0.0
        tries = 0
        for j in range(known - 1):
            left += weights[j]
            for k in range(n_stats):
                left_sums[k] += weighted[j, k]
            if not (values[j] + VALUE_GAP < values[j + 1]):
                continue
            right = known_weight - left
            if left < min_split - SMALL or right < min_split - SMALL:
                continue
            for k in range(n_stats):
                right_sums[k] = known_sums[k] - left_sums[k]
            gain = (1.0 - unknown_rate) * (
                parent_impurity
                - (
                    left * impurity(left_sums, left, params)
                    + right * impurity(right_sums, right, params)
                )
                / known_weight
            )
            tries += 1
            if signs[f] != 0.0 and not within_bounds(
                signs[f], limits, left_sums, left, right_sums, right
            ):
                continue
            if gain > best_gain + SMALL:
                best_gain = gain
                best_position = j
                best_left = left
        if tries == 0 or best_position < 0:
            continue
        gain = best_gain - math.log2(tries) / node_weight
        if gain <= SMALL:
            continue
        # halves first: the sum of two values near the largest float overflows to inf
        point = values[best_position] / 2.0 + values[best_position + 1] / 2.0
        if point == values[best_position + 1]:
            point = values[best_position]
        unknown = node_weight - known_weight
        split_entropy = (
            -weight_log2(best_left)
            - weight_log2(known_weight - best_left)
            - weight_log2(unknown)
            + weight_log2(node_weight)
        )
        info_gain[index] = gain
        split_point[index] = point
        left_weight[index] = best_left / known_weight  # the missing share (C4.5)
        if abs(split_entropy) > SMALL:
            gain_ratio[index] = gain / (split_entropy / node_weight)
