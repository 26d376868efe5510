"""The subset and multi-way searches of nominal features at one node, compiled.

The same searches as :mod:`treekit_core.builtins.nominal_subsets` (which stays as their
readable definition and the reference the tests compare with), with the same candidates,
order of evaluation and arithmetic, so they choose the same questions: per feature, the
known rows' weighted statistics per category; for a subset question every prefix of the
categories in the target's order (exact where that order is: Breiman et al., theorem 4.5),
or else every subset keeping the first category left up to ``exact_limit`` categories, or
beyond it the prefixes by the share of the majority statistic; for a multi-way question
the partition into all categories. Sums are taken in numpy's order (a category's rows in
row order; a list of weights by numpy's pairwise summation), so drops agree to the last
bit with the Python search's.

The entry point takes the impurity as its first parameter; the nominal searches compile
it specialised to each criterion and cached per machine, as the threshold search is
(:func:`treekit_core.kernels.specialised.function_kernels`). The categories' statistics
come from :mod:`.nominal_statistics` (no impurity in them).
"""

import numpy as np
from numba import types

from treekit_core.kernels.compiling import F1, I1, f8, generic_jit, i8

F3C = types.float64[:, :, ::1]
I2C = types.int64[:, ::1]
F2 = types.float64[:, ::1]


@generic_jit
def numpy_sum(values, n):
    """``values[:n].sum()`` exactly as numpy adds a contiguous float64 array of at most 128
    values: one by one below 8, else eight running sums combined pairwise, then the rest."""
    if n < 8:
        total = 0.0
        for i in range(n):
            total += values[i]
        return total
    r0, r1, r2, r3 = values[0], values[1], values[2], values[3]
    r4, r5, r6, r7 = values[4], values[5], values[6], values[7]
    i = 8
    while i < n - (n % 8):
        r0 += values[i]
        r1 += values[i + 1]
        r2 += values[i + 2]
        r3 += values[i + 3]
        r4 += values[i + 4]
        r5 += values[i + 5]
        r6 += values[i + 6]
        r7 += values[i + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        total += values[i]
        i += 1
    return total


@generic_jit
def subset_drop(
    impurity,
    params,
    sums,
    weights,
    counts,
    subset,
    size,
    total_sums,
    total_weight,
    total_count,
    parent,
    min_samples_leaf,
    min_weight_leaf,
    left_sums,
    right_sums,
    buffer,
):
    """(drop, left weight) of sending the categories ``subset[:size]`` left; -inf when a
    side breaks the minimum leaf sizes."""
    n_stats = total_sums.shape[0]
    left_count = 0
    for k in range(n_stats):
        left_sums[k] = sums[subset[0], k]
    for i in range(1, size):
        for k in range(n_stats):
            left_sums[k] += sums[subset[i], k]
    for i in range(size):
        buffer[i] = weights[subset[i]]
        left_count += counts[subset[i]]
    left_weight = numpy_sum(buffer, size)
    for k in range(n_stats):
        right_sums[k] = total_sums[k] - left_sums[k]
    right_weight = total_weight - left_weight
    right_count = total_count - left_count
    if min(left_count, right_count) < min_samples_leaf or min(left_weight, right_weight) < max(
        min_weight_leaf, 1e-300
    ):
        return -np.inf, left_weight
    drop = (
        parent
        - (
            left_weight * impurity(left_sums, left_weight, params)
            + right_weight * impurity(right_sums, right_weight, params)
        )
        / total_weight
    )
    return drop, left_weight


#: The entry point's signature after the impurity (the kernels are specialised to each
#: criterion: :func:`treekit_core.kernels.specialised.function_kernels`).
ENTRY_SIGNATURES = {
    "best_nominal_questions": types.void(
        F1, F3C, F2, I2C, I1, F2, types.boolean, i8, f8, i8, f8, types.boolean, i8, F2
    )
}


@generic_jit
def best_nominal_questions(
    impurity,
    params,
    sums,
    weights,
    counts,
    n_categories,
    scores,
    ordered,
    order_column,
    node_weight,
    min_samples_leaf,
    min_weight_leaf,
    multiway,
    exact_limit,
    results,
):
    """Each nominal feature's best question at a node, from its categories' statistics
    (:func:`nominal_category_statistics`). ``scores[f, c]``: the target's order of the
    categories (:meth:`treekit_core.Target.category_order`; read when ``ordered``), or,
    where ``order_column`` >= 0 (:meth:`treekit_core.Target.category_order_column`), that
    statistic's share of each category's weight, computed here as the target computes it.

    ``results[f]`` (outputs): the drop scaled by the known weight share (-inf: no
    admissible question), then for a subset question the mask of the left categories
    (absent categories follow the heavier side), the known weight's share sent left and the
    known weight; for a multi-way question the known weight (the shares are the
    categories' weights over it)."""
    n_stats = sums.shape[2]
    max_m = sums.shape[1]
    total_sums = np.empty(n_stats)
    left_sums = np.empty(n_stats)
    right_sums = np.empty(n_stats)
    buffer = np.empty(max_m)
    present = np.empty(max_m, dtype=np.int64)
    order = np.empty(max_m, dtype=np.int64)
    best_subset = np.empty(max_m, dtype=np.int64)
    key = np.empty(max_m)
    chosen = np.empty(max_m, dtype=np.int64)
    subset = np.empty(max_m, dtype=np.int64)
    for a in range(sums.shape[0]):
        results[a, 0] = -np.inf
        results[a, 1] = 0.0
        results[a, 2] = 0.5
        results[a, 3] = 0.0
        m = n_categories[a]
        feature_sums = sums[a]
        feature_weights = weights[a]
        feature_counts = counts[a]
        n_present = 0
        total_count = 0
        for c in range(m):
            total_count += feature_counts[c]
            if feature_counts[c] > 0:
                present[n_present] = c
                n_present += 1
        known_weight = numpy_sum(feature_weights, m)
        for k in range(n_stats):
            total_sums[k] = feature_sums[0, k]
        for c in range(1, m):
            for k in range(n_stats):
                total_sums[k] += feature_sums[c, k]
        if multiway:
            if n_present < 2 or known_weight <= 0.0:
                continue
            admissible = True
            for i in range(n_present):
                c = present[i]
                if feature_counts[c] < min_samples_leaf or feature_weights[c] < max(
                    min_weight_leaf, 1e-300
                ):
                    admissible = False
            if not admissible:
                continue
            parent = impurity(total_sums, known_weight, params)
            children = 0.0
            for c in range(m):
                if feature_weights[c] > 0.0:
                    children += feature_weights[c] * impurity(
                        feature_sums[c], feature_weights[c], params
                    )
            results[a, 0] = (known_weight / node_weight) * (parent - children / known_weight)
            results[a, 3] = known_weight
            continue
        if total_count < 2 or known_weight <= 0.0 or n_present < 2:
            continue
        parent = impurity(total_sums, known_weight, params)
        best = -np.inf
        best_size = 0
        best_left = 0.0
        use_order = ordered or n_present > exact_limit
        if use_order:
            if ordered and order_column >= 0:
                for i in range(n_present):
                    c = present[i]
                    w = feature_weights[c]
                    key[i] = feature_sums[c, order_column] / w if w > 0.0 else 0.0
            elif ordered:
                for i in range(n_present):
                    key[i] = scores[a, present[i]]
            else:  # the share of the feature's majority statistic (a heuristic)
                majority = 0
                for k in range(1, n_stats):
                    if total_sums[k] > total_sums[majority]:
                        majority = k
                for i in range(n_present):
                    c = present[i]
                    key[i] = feature_sums[c, majority] / feature_weights[c]
            ranked = np.argsort(key[:n_present], kind="mergesort")
            for i in range(n_present):
                order[i] = present[ranked[i]]
            for size in range(1, n_present):
                drop, left_weight = subset_drop(
                    impurity,
                    params,
                    feature_sums,
                    feature_weights,
                    feature_counts,
                    order,
                    size,
                    total_sums,
                    known_weight,
                    total_count,
                    parent,
                    min_samples_leaf,
                    min_weight_leaf,
                    left_sums,
                    right_sums,
                    buffer,
                )
                if drop > best:
                    best, best_size, best_left = drop, size, left_weight
                    for i in range(size):
                        best_subset[i] = order[i]
        else:
            # every subset keeping the first category left, by size, each size's subsets
            # of the others in lexicographic order (itertools.combinations')
            rest = n_present - 1
            for size in range(0, n_present - 1):
                for i in range(size):
                    chosen[i] = i
                while True:
                    subset[0] = present[0]
                    for i in range(size):
                        subset[1 + i] = present[1 + chosen[i]]
                    drop, left_weight = subset_drop(
                        impurity,
                        params,
                        feature_sums,
                        feature_weights,
                        feature_counts,
                        subset,
                        size + 1,
                        total_sums,
                        known_weight,
                        total_count,
                        parent,
                        min_samples_leaf,
                        min_weight_leaf,
                        left_sums,
                        right_sums,
                        buffer,
                    )
                    if drop > best:
                        best, best_size, best_left = drop, size + 1, left_weight
                        for i in range(size + 1):
                            best_subset[i] = subset[i]
                    position = size - 1
                    while position >= 0 and chosen[position] == rest - size + position:
                        position -= 1
                    if position < 0:
                        break
                    chosen[position] += 1
                    for i in range(position + 1, size):
                        chosen[i] = chosen[i - 1] + 1
        if best_size == 0:
            continue
        mask = np.int64(0)
        for i in range(best_size):
            mask |= np.int64(1) << best_subset[i]
        if best_left >= known_weight - best_left:  # absent categories follow the heavier side
            for c in range(m):
                if feature_counts[c] == 0:
                    mask |= np.int64(1) << c
        results[a, 0] = best * known_weight / node_weight
        results[a, 1] = float(mask)
        results[a, 2] = best_left / known_weight
        results[a, 3] = known_weight
