"""The grower of extremely randomised trees (the ``random`` splitter; Geurts et al. 2006,
scikit-learn's ``RandomSplitter`` with its ``DepthFirstTreeBuilder``): one compiled call
grows the whole tree from one array of row ids, partitioned in place node by node.

At a node, features are drawn without replacement (a xoshiro256** stream seeded per tree,
:mod:`.random_bits`)
until ``max_features`` of them vary at the node (a constant one does not count, as in
scikit-learn); each gets one threshold drawn uniformly between its smallest and largest
value at the node (the largest itself becomes the smallest, so the cut sends rows both
ways), scored by the impurity drop of the criterion (the kernel is specialised to each
criterion and cached once per machine, :func:`.specialised.impurity_kernels`); the
shorter side's statistics are summed and the other's are the rest (scikit-learn's
criterion update). The best admissible cut splits the node; its children's statistics are
the sums the search made (no pass over their rows). Unlike the presorted builder, no
feature is kept sorted: a node costs its rows times the features drawn, not times every
feature.

Terminates: a split sends at least one row each way, so every child holds fewer rows
than its parent."""

import numpy as np
from numba import types

from treekit_core.kernels.compiling import F1, F2A, F2C, generic_jit, i8
from treekit_core.kernels.growth import (
    FEATURE,
    IMPROVEMENT,
    SUMS,
    THRESHOLD,
    accepts_split,
    fill_node,
    link_child,
    may_split,
    push_children,
)
from treekit_core.kernels.random_bits import integer_below, seeded_state, uniform
from treekit_core.kernels.threshold_search import split_drop
from treekit_core.numerics import FEATURE_THRESHOLD

#: The entry point's signature after the impurity: (params, X (any layout), row table,
#: row ids, rules, max_features, seed) -> node table.
ENTRY_SIGNATURES = {"grow_random_tree": F2C(F1, F2A, F2C, types.int32[::1], F1, i8, i8)}


@generic_jit
def grow_random_tree(impurity, params, X, rows, samples, rules, max_features, seed):
    """The node table (:data:`.growth.NODE_COLUMNS`, nodes numbered depth first, the left
    child first) of the tree grown on the rows ``samples`` (row ids of X with weight > 0;
    reordered in place). ``rows`` is :func:`.growth.row_table`'s array, ``rules``
    :func:`.growth.rule_vector`'s."""
    state = seeded_state(seed)
    n, d = samples.shape[0], X.shape[1]
    n_stats = rows.shape[1] - 1
    table = np.empty((max(2 * n - 1, 1), SUMS + n_stats))
    stack = np.empty((64, 5), dtype=np.int64)  # start, end, depth, parent, branch
    stack[0, 0], stack[0, 1], stack[0, 2], stack[0, 3], stack[0, 4] = 0, n, 0, -1, 0
    top, node = 1, -1
    sums, left_sums = np.empty(n_stats), np.empty(n_stats)
    right_sums, best_left = np.empty(n_stats), np.empty(n_stats + 1)
    # each stack entry's weight and statistics, where its parent summed them (NaN: not yet)
    known = np.full((64, n_stats + 1), np.nan)
    candidates = np.arange(d)
    values = np.empty(n)  # the node's values of the feature drawn, in samples' order
    # the rows of a cut's shorter side (summed after), and a partition's right side
    side_rows = np.empty(n, dtype=samples.dtype)
    while top > 0:
        top -= 1
        start, end, depth = stack[top, 0], stack[top, 1], stack[top, 2]
        node += 1
        link_child(table, stack[top, 3], stack[top, 4], node)
        if np.isnan(known[top, 0]):  # the root: its rows summed
            for k in range(n_stats):
                sums[k] = 0.0
            weight = 0.0
            for j in range(start, end):
                r = samples[j]
                weight += rows[r, 0]
                for k in range(n_stats):
                    sums[k] += rows[r, 1 + k]
        else:  # a child: what its parent's search summed
            weight = known[top, 0]
            for k in range(n_stats):
                sums[k] = known[top, 1 + k]
        node_impurity = impurity(sums, weight, params) if weight > 0.0 else 0.0
        count = end - start
        fill_node(table[node], sums, weight, count, node_impurity, depth)
        if not may_split(count, weight, node_impurity, depth, rules):
            continue
        best_drop, best_feature, best_threshold = -np.inf, -1, 0.0
        drawn, kept = 0, 0
        while drawn < d and kept < max_features:
            j = integer_below(state, drawn, d)
            candidates[drawn], candidates[j] = candidates[j], candidates[drawn]
            f = candidates[drawn]
            drawn += 1
            low, high = np.inf, -np.inf
            for i in range(start, end):
                value = X[np.uint64(samples[i]), f]  # unsigned: no check for a negative id
                values[i] = value
                low = min(low, value)
                high = max(high, value)
            if high <= low + FEATURE_THRESHOLD:
                continue  # constant at the node: not counted
            kept += 1
            u = uniform(state)
            # a convex combination: within [low, high] even where high - low overflows
            threshold = low * (1.0 - u) + high * u
            if threshold >= high:
                threshold = low
            n_left = 0
            for i in range(start, end):
                n_left += values[i] <= threshold
            if n_left < rules[0] or count - n_left < rules[0]:
                continue
            # the shorter side's rows summed (read at random), the other side the rest:
            # the side's rows listed first without a branch (the side is a coin flip the
            # processor mispredicts half the time), then summed in the same order
            left_side = n_left <= count - n_left
            n_side = 0
            for i in range(start, end):
                side_rows[n_side] = samples[i]
                n_side += (values[i] <= threshold) == left_side
            for k in range(n_stats):
                left_sums[k] = 0.0
            side_weight = 0.0
            for i in range(n_side):
                r = np.uint64(side_rows[i])
                side_weight += rows[r, 0]
                for k in range(n_stats):
                    left_sums[k] += rows[r, 1 + k]
            left_weight = side_weight
            if not left_side:
                left_weight = weight - side_weight
                for k in range(n_stats):
                    left_sums[k] = sums[k] - left_sums[k]
            if left_weight < rules[1] or weight - left_weight < rules[1]:
                continue
            drop = split_drop(
                impurity, params, sums, weight, node_impurity, left_sums, left_weight, right_sums
            )
            if drop > best_drop:
                best_drop, best_feature, best_threshold = drop, f, threshold
                best_left[0] = left_weight
                for k in range(n_stats):
                    best_left[1 + k] = left_sums[k]
        if best_feature < 0 or not accepts_split(best_drop, weight, rules):
            continue
        table[node, FEATURE] = best_feature
        table[node, THRESHOLD] = best_threshold
        table[node, IMPROVEMENT] = best_drop
        # the left rows first, each side in its order, without a branch per row
        n_left, n_right = 0, 0
        for i in range(start, end):
            r = samples[i]
            left = np.int64(X[np.uint64(r), best_feature] <= best_threshold)
            samples[start + n_left] = r
            side_rows[n_right] = r
            n_left += left
            n_right += 1 - left
        for i in range(n_right):
            samples[start + n_left + i] = side_rows[i]
        low_end = start + n_left
        stack, top = push_children(stack, top, node, start, low_end, end, depth)
        if top > known.shape[0]:
            grown = np.full((2 * known.shape[0], n_stats + 1), np.nan)
            grown[: known.shape[0]] = known
            known = grown
        # the children's sums (top - 1: the left child, top - 2: the right one)
        known[top - 1, 0], known[top - 2, 0] = best_left[0], weight - best_left[0]
        for k in range(n_stats):
            known[top - 1, 1 + k] = best_left[1 + k]
            known[top - 2, 1 + k] = sums[k] - best_left[1 + k]
    return table[: node + 1]
