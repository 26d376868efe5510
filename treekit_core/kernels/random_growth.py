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

Where most features are drawn at every node (a regression forest's default draws them all)
the grower keeps X's columns in the order of the rows (``in_node_order``): a node's values
of a feature are then one contiguous run, read in a stream, where reading them from X at
the node's rows costs a cache miss for most rows; a split moves every column's run (each
row's place computed once). 0.85x of a grown-out regression tree's time at 100 000 x 20;
1.4x for a classification tree drawing 4 of 20 features, which reads X at its rows. It
costs a copy of X (float64) while the tree grows.

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
#: row ids, rules, max_features, seed, in_node_order) -> node table.
ENTRY_SIGNATURES = {
    "grow_random_tree": F2C(F1, F2A, F2C, types.int32[::1], F1, i8, i8, types.boolean)
}


@generic_jit
def grow_random_tree(impurity, params, X, rows, samples, rules, max_features, seed, in_node_order):
    """The node table (:data:`.growth.NODE_COLUMNS`, nodes numbered depth first, the left
    child first) of the tree grown on the rows ``samples`` (row ids of X with weight > 0;
    reordered in place). ``rows`` is :func:`.growth.row_table`'s array, ``rules``
    :func:`.growth.rule_vector`'s; ``in_node_order``: keep X's columns in the rows' order
    (the module's docstring). The same tree either way."""
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
    # X's columns in the order of samples (a node's values of a feature: one run), with
    # each row's place in its split and a column's moved run
    columns = np.empty((d, n) if in_node_order else (0, 0))
    for f in range(columns.shape[0]):
        for j in range(n):
            columns[f, j] = X[np.uint64(samples[j]), f]
    places = np.empty(n if in_node_order else 0, dtype=np.int64)
    moved = np.empty(n if in_node_order else 0)
    # else the node's values of the feature drawn, and of the best one so far, read from
    # X at its rows (the partition reads the best one's: no second read of X at random)
    gathered = np.empty(0 if in_node_order else n)
    best_gathered = np.empty(0 if in_node_order else n)
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
        best_drop, best_feature, best_threshold, best_n_left = -np.inf, -1, 0.0, 0
        node_samples = samples[start:end]
        drawn, kept = 0, 0
        while drawn < d and kept < max_features:
            j = integer_below(state, drawn, d)
            candidates[drawn], candidates[j] = candidates[j], candidates[drawn]
            f = candidates[drawn]
            drawn += 1
            if in_node_order:
                values = columns[f, start:end]
                low, high = run_range(values)
            else:
                values = gathered[:count]
                low, high = gather_range(X, node_samples, f, values)
            if high <= low + FEATURE_THRESHOLD:
                continue  # constant at the node: not counted
            kept += 1
            u = uniform(state)
            # a convex combination: within [low, high] even where high - low overflows
            threshold = low * (1.0 - u) + high * u
            if threshold >= high:
                threshold = low
            n_left = count_at_most(values, count, threshold)
            if n_left < rules[0] or count - n_left < rules[0]:
                continue
            # the shorter side's rows summed (read at random), the other side the rest:
            # the side's rows listed first without a branch (the side is a coin flip the
            # processor mispredicts half the time), then summed in the same order
            left_side = n_left <= count - n_left
            n_side = list_side(node_samples, values, threshold, left_side, side_rows)
            side_weight = sum_rows(rows, side_rows, n_side, left_sums)
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
                best_drop, best_feature, best_threshold, best_n_left = drop, f, threshold, n_left
                best_left[0] = left_weight
                for k in range(n_stats):
                    best_left[1 + k] = left_sums[k]
                gathered, best_gathered = best_gathered, gathered
        if best_feature < 0 or not accepts_split(best_drop, weight, rules):
            continue
        table[node, FEATURE] = best_feature
        table[node, THRESHOLD] = best_threshold
        table[node, IMPROVEMENT] = best_drop
        if in_node_order:
            n_left = best_n_left
            split_places(columns[best_feature, start:end], best_threshold, n_left, places)
            move_runs(columns, start, end, node_samples, places, side_rows, moved)
        else:
            n_left = partition_rows(node_samples, best_gathered, best_threshold, side_rows)
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


# -- a node's passes over its rows; each loop counts from 0 over the node's slices, so
# LLVM sees non-negative indices (over [start, end) every index paid numba's check for
# a negative one, and the count could not be vectorised: a third of a classification
# tree's time, benchmarks/README.md)


@generic_jit
def gather_range(X, node_samples, feature, values):
    """``X[node_samples, feature]`` into ``values[:len(node_samples)]``; returns their
    smallest and largest (no NaN here: trees with missing values grow elsewhere). Four
    running minima and maxima: one pair chained every value's min/max on the last one's
    (the same extremes in any order). :func:`run_range`'s loop fused with the gather: the
    gather followed by ``run_range`` took 1.2x the time of a classification tree."""
    low0, low1, low2, low3 = np.inf, np.inf, np.inf, np.inf
    high0, high1, high2, high3 = -np.inf, -np.inf, -np.inf, -np.inf
    count = node_samples.shape[0]
    i = 0
    while i + 4 <= count:
        # unsigned row ids: no check for a negative one
        v0 = X[np.uint64(node_samples[i]), feature]
        v1 = X[np.uint64(node_samples[i + 1]), feature]
        v2 = X[np.uint64(node_samples[i + 2]), feature]
        v3 = X[np.uint64(node_samples[i + 3]), feature]
        values[i], values[i + 1], values[i + 2], values[i + 3] = v0, v1, v2, v3
        low0, low1, low2, low3 = min(low0, v0), min(low1, v1), min(low2, v2), min(low3, v3)
        high0, high1 = max(high0, v0), max(high1, v1)
        high2, high3 = max(high2, v2), max(high3, v3)
        i += 4
    while i < count:
        v0 = X[np.uint64(node_samples[i]), feature]
        values[i] = v0
        low0, high0 = min(low0, v0), max(high0, v0)
        i += 1
    return min(min(low0, low1), min(low2, low3)), max(max(high0, high1), max(high2, high3))


@generic_jit
def run_range(values):
    """The smallest and largest of ``values`` (no NaN), four running pairs as
    :func:`gather_range`'s."""
    low0, low1, low2, low3 = np.inf, np.inf, np.inf, np.inf
    high0, high1, high2, high3 = -np.inf, -np.inf, -np.inf, -np.inf
    count = values.shape[0]
    i = 0
    while i + 4 <= count:
        v0, v1, v2, v3 = values[i], values[i + 1], values[i + 2], values[i + 3]
        low0, low1, low2, low3 = min(low0, v0), min(low1, v1), min(low2, v2), min(low3, v3)
        high0, high1 = max(high0, v0), max(high1, v1)
        high2, high3 = max(high2, v2), max(high3, v3)
        i += 4
    while i < count:
        low0, high0 = min(low0, values[i]), max(high0, values[i])
        i += 1
    return min(min(low0, low1), min(low2, low3)), max(max(high0, high1), max(high2, high3))


@generic_jit
def split_places(values, threshold, n_left, places):
    """Each row's place in its node's split (the ``n_left`` rows with values at most
    ``threshold`` first, each side in its order) into ``places``."""
    left, right = 0, n_left
    for i in range(values.shape[0]):
        goes = values[i] <= threshold
        places[i] = left if goes else right
        left += goes
        right += 1 - goes


@generic_jit
def move_runs(columns, start, end, node_samples, places, row_scratch, value_scratch):
    """Every column's run ``columns[:, start:end]`` and the node's row ids moved to their
    ``places`` (through the scratch arrays: each value's store is independent of the
    last, where a partition's next store waits on its count)."""
    count = end - start
    for i in range(count):
        row_scratch[places[i]] = node_samples[i]
    for i in range(count):
        node_samples[i] = row_scratch[i]
    for f in range(columns.shape[0]):
        run = columns[f, start:end]
        for i in range(count):
            value_scratch[places[i]] = run[i]
        for i in range(count):
            run[i] = value_scratch[i]


@generic_jit
def count_at_most(values, count, threshold):
    """How many of ``values[:count]`` are at most ``threshold`` (go left)."""
    n_left = 0
    for i in range(count):
        n_left += values[i] <= threshold
    return n_left


@generic_jit
def list_side(node_samples, values, threshold, left_side, side_rows):
    """The rows of one side of the cut (``left_side``: those with values at most
    ``threshold``) into ``side_rows`` in the node's order; returns how many. Without a
    branch: the side is a coin flip the processor mispredicts half the time."""
    n_side = 0
    for i in range(node_samples.shape[0]):
        side_rows[n_side] = node_samples[i]
        n_side += (values[i] <= threshold) == left_side
    return n_side


@generic_jit
def sum_rows(rows, listed, n_listed, sums):
    """The weight (returned) and statistics (into ``sums``) of the rows
    ``listed[:n_listed]`` of the row table ``rows``, added in that order. One and two
    statistics in registers (a loop over ``sums`` in memory made every row's addition
    wait on the last one's store)."""
    n_stats = sums.shape[0]
    weight = 0.0
    if n_stats == 1:
        s0 = 0.0
        for i in range(n_listed):
            r = np.uint64(listed[i])
            weight += rows[r, 0]
            s0 += rows[r, 1]
        sums[0] = s0
    elif n_stats == 2:
        s0, s1 = 0.0, 0.0
        for i in range(n_listed):
            r = np.uint64(listed[i])
            weight += rows[r, 0]
            s0 += rows[r, 1]
            s1 += rows[r, 2]
        sums[0], sums[1] = s0, s1
    else:
        for k in range(n_stats):
            sums[k] = 0.0
        for i in range(n_listed):
            r = np.uint64(listed[i])
            weight += rows[r, 0]
            for k in range(n_stats):
                sums[k] += rows[r, 1 + k]
    return weight


@generic_jit
def partition_rows(node_samples, values, threshold, scratch):
    """Reorder ``node_samples`` so the rows whose ``values`` are at most ``threshold``
    come first, each side in its order (stable, without a branch per row; the right side
    waits in ``scratch``); returns how many go left."""
    n_left, n_right = 0, 0
    for i in range(node_samples.shape[0]):
        r = node_samples[i]
        left = np.int64(values[i] <= threshold)
        node_samples[n_left] = r
        scratch[n_right] = r
        n_left += left
        n_right += 1 - left
    for i in range(n_right):
        node_samples[n_left + i] = scratch[i]
    return n_left
