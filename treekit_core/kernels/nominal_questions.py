"""Nominal questions at a node: the best subset question (CART's) or multi-way question (one
branch per category) from the node's statistics per category, scored by impurity drop.

The node-by-node loop's compiled search (:func:`best_nominal_questions`, through
:mod:`.nominal_search`) and the presorted growers' (:func:`best_nominal_question`, passed to
them as a function value of type :data:`NOMINAL_SEARCH_TYPE`) run the one body
:func:`nominal_questions_of_node`, so both ask the same questions; the growers' helpers
(:func:`sorted_category_statistics`, :func:`ask_nominal_question`, ...) live here too.
"""

import numpy as np
from numba import types

from treekit_core.kernels.compiling import F1, F2C, I1, f8, generic_jit, i8

#: The nominal search a compiled grower calls at a node with nominal candidates, from their
#: categories' statistics (:func:`best_nominal_question` compiled for one criterion, or
#: :func:`.builder.no_nominal_search`): passed as a function value, so a grower's compile
#: never includes it (it is compiled where a fit has nominal features, with the
#: node-by-node loop's nominal search) and every grower (the presorted one, a plugin's
#: histogram grower) calls the same search.
NOMINAL_SEARCH_SIGNATURE = i8(
    *(F1, types.float64[:, :, ::1], F2C, types.int64[:, ::1], I1),
    *(i8, i8, i8, types.boolean, f8, F1, i8, F1, F2C),
)
NOMINAL_SEARCH_TYPE = types.FunctionType(NOMINAL_SEARCH_SIGNATURE)
#: The category scores of a subset search that orders categories in its kernel (or not at
#: all): never read.
NO_SCORES = np.zeros((0, 0))


# -- nominal questions at a node ----------------------------------------------
# The subset and multi-way searches from a node's statistics per category (the node-by-node
# loop's compiled search, :mod:`.nominal_search`, and the presorted grower's).


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
    node_sums,
    node_count,
    min_samples_leaf,
    min_weight_leaf,
    multiway,
    exact_limit,
    results,
):
    """:func:`nominal_questions_of_node`: the node-by-node loop's entry point. The
    growers' search (:func:`best_nominal_question`) calls the body, not this entry: the
    generated module compiles an entry for its one signature and closes it."""
    nominal_questions_of_node(
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
        node_sums,
        node_count,
        min_samples_leaf,
        min_weight_leaf,
        multiway,
        exact_limit,
        results,
    )


@generic_jit
def nominal_questions_of_node(
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
    node_sums,
    node_count,
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
    known weight; for a multi-way question NaN (no mask), 0.5 and the known weight (the
    shares are the categories' weights over it).

    ``node_sums``, ``node_count``: the node's statistics and rows (count -1: unknown, a
    distributed grower's summed histograms). Where a feature misses no value at the node,
    its totals are the node's own, as the threshold search reads them, so a question that
    splits the rows as a threshold does drops to the same bit and a tie goes to the
    earlier feature (rpart's rule) instead of to the last bits of two summation orders."""
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
        if total_count == node_count:
            known_weight = node_weight
            for k in range(n_stats):
                total_sums[k] = node_sums[k]
        else:
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
            results[a, 1] = np.nan  # no category mask: a branch per category
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
        results[a, 0] = best * (known_weight / node_weight)  # exactly best when nothing is missing
        results[a, 1] = float(mask)
        results[a, 2] = best_left / known_weight
        results[a, 3] = known_weight


@generic_jit
def sorted_category_statistics(rows, order, values, features, start, end, sums, weights, counts):
    """For each of the nominal ``features`` (category codes in ``values``), the node's rows
    ``[start, end)`` summed per category: ``sums[a, c]`` the weighted evidence, ``weights[a,
    c]`` the weight, ``counts[a, c]`` the rows (outputs, zeroed here). A feature's slice is
    sorted by code, and each code's rows keep row order (a stable presort and stable
    partitions), so every sum adds in the node-by-node loop's order."""
    n_stats = sums.shape[2]
    for a in range(features.shape[0]):
        feature = features[a]
        for c in range(sums.shape[1]):
            weights[a, c] = 0.0
            counts[a, c] = 0
            for k in range(n_stats):
                sums[a, c, k] = 0.0
        for j in range(start, end):
            row = order[feature, j]
            c = np.int64(values[feature, j])
            weights[a, c] += rows[row, 0]
            counts[a, c] += 1
            for k in range(n_stats):
                sums[a, c, k] += rows[row, 1 + k]


@generic_jit
def mark_subset(order, values, feature, start, end, mask, goes_left):
    """goes_left[row] = 1 for the node's rows whose category is in ``mask`` (bit c: code
    c); returns how many there are."""
    n_left = 0
    for j in range(start, end):
        inside = (mask >> np.int64(values[feature, j])) & 1
        goes_left[order[feature, j]] = inside
        n_left += inside
    return n_left


@generic_jit
def best_nominal_question(
    impurity,
    params,
    sums,
    weights,
    counts,
    categories,
    n_features,
    order_column,
    exact_limit,
    multiway,
    weight,
    node_sums,
    node_count,
    rules,
    results,
):
    """The best subset question (or, with ``multiway``, multi-way question) on
    ``n_features`` nominal features at a node of weight ``weight`` (statistics
    ``node_sums``, ``node_count`` rows), from their categories'
    statistics (the first ``n_features`` rows of ``sums``, ``weights``, ``counts``: features
    x categories, padded past each feature's ``categories``): the node-by-node loop's
    compiled search (:func:`nominal_questions_of_node`, categories ordered by statistic
    ``order_column``'s share, or unordered for -1), so the same questions. Returns the index
    of the first strictly best feature (-1: no admissible question); its drop, mask (NaN
    for a multi-way question), share and known weight are ``results[index]``."""
    n = n_features
    nominal_questions_of_node(
        impurity,
        params,
        sums[:n],
        weights[:n],
        counts[:n],
        categories[:n],
        NO_SCORES,
        order_column >= 0,
        order_column,
        weight,
        node_sums,
        node_count,
        np.int64(rules[0]),
        rules[1],
        multiway,
        exact_limit,
        results,
    )
    chosen = -1
    for a in range(n):
        if results[a, 0] > -np.inf and (chosen < 0 or results[a, 0] > results[chosen, 0]):
            chosen = a
    return chosen


@generic_jit
def nominal_buffers(n_categories, n_stats):
    """Scratch for a grower's nominal questions, d = len(``n_categories``): the candidates
    split by kind (numeric, nominal: :func:`split_candidates`) and, per nominal candidate,
    its categories' sums, weights and counts, its number of categories and its result row
    (:func:`ask_nominal_question`)."""
    d = n_categories.shape[0]
    most = 1  # the most categories of any feature
    for f in range(d):
        most = max(most, n_categories[f])
    return (
        np.empty(d, dtype=np.int64),
        np.empty(d, dtype=np.int64),
        np.empty((d, most, n_stats)),
        np.empty((d, most)),
        np.empty((d, most), dtype=np.int64),
        np.empty(d, dtype=np.int64),
        np.empty((d, 4)),
    )


@generic_jit
def split_candidates(candidates, n_candidates, n_categories, numeric, nominal):
    """The first ``n_candidates`` candidates into ``numeric`` and ``nominal`` features
    (``n_categories[f]`` > 0), each kind in the candidates' order, as the node-by-node loop
    searches them; returns (numeric count, nominal count)."""
    n_numeric, n_nominal = 0, 0
    for c in range(n_candidates):
        if n_categories[candidates[c]] > 0:
            nominal[n_nominal] = candidates[c]
            n_nominal += 1
        else:
            numeric[n_numeric] = candidates[c]
            n_numeric += 1
    return n_numeric, n_nominal


@generic_jit
def ask_nominal_question(
    question_search,
    params,
    nominal,
    n_nominal,
    n_categories,
    sums,
    weights,
    counts,
    categories,
    results,
    order_column,
    exact_limit,
    multiway,
    weight,
    node_sums,
    node_count,
    rules,
):
    """The grower's nominal search (a function value: :data:`NOMINAL_SEARCH_TYPE`) over the
    first ``n_nominal`` of ``nominal``, whose categories' statistics the grower summed into
    ``sums``, ``weights`` and ``counts``: the index of the best subset question (multi-way
    question with ``multiway``; -1: none), its result in ``results``."""
    for a in range(n_nominal):
        categories[a] = n_categories[nominal[a]]
    return question_search(
        params,
        sums,
        weights,
        counts,
        categories,
        n_nominal,
        order_column,
        exact_limit,
        multiway,
        weight,
        node_sums,
        node_count,
        rules,
        results,
    )
