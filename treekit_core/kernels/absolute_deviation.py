"""The split search for absolute error: for every cut of a node's rows sorted by a feature,
the weighted absolute deviations of each side from its weighted median.

No sum of per-row statistics gives a median, so the criterion contract's running sums
cannot score these cuts. The search is scikit-learn's (``sklearn/tree/_criterion.pyx``,
class ``MAE``, 1.9), written anew here: the node's responses are ranked once; a Fenwick
tree over the ranks holds the weights and weighted responses of the rows "activated" so far;
one pass in feature order activates rows one by one and reads, after each, the median (the
rank where the cumulative weight crosses half the total) and the deviations from it by the
identity

    sum_i w_i |y_i - m| = (wy_right - m w_right) + (m w_left - wy_left)

(left/right: the activated rows ranked below/from the median); a second pass in reverse
order gives every suffix. O(n log n) per feature and node; the whole-tree builder keeps
every feature's rows, and the responses, presorted, so a node sorts nothing.

The median is scikit-learn's: the smallest response whose cumulative weight share reaches
one half, or the midpoint of it and the next response when the share is exactly one half.
"""

import numpy as np
from numba import types

from treekit_core.kernels.compiling import F1, F2A, I1, f8, generic_jit, i8, jit
from treekit_core.kernels.growth import (
    FEATURE,
    IMPROVEMENT,
    SUMS,
    THRESHOLD,
    accepts_split,
    fill_node,
    grow_array,
    link_child,
    mark_left,
    may_split,
    partition_features,
    push_children,
)
from treekit_core.kernels.threshold_search import (
    admissible_cut,
    cut_threshold,
    gather_ranked_feature,
)


@generic_jit
def fenwick_add(tree_w, tree_wy, size, rank, value, weight):
    """Activate a row of response ``value`` and ``weight`` at 0-based ``rank``."""
    position = rank + 1
    weighted = weight * value
    while position <= size:
        tree_w[position] += weight
        tree_wy[position] += weighted
        position += position & -position


@generic_jit
def fenwick_first_beyond(tree_w, tree_wy, size, top_bit, target, strictly):
    """The smallest 0-based rank whose cumulative weight (itself included) reaches
    ``target`` (exceeds it when ``strictly``), with the weight and weighted responses of
    the ranks before it."""
    position = 0
    cumulative_w = 0.0
    cumulative_wy = 0.0
    bit = top_bit
    while bit > 0:
        following = position + bit
        if following <= size:
            reached = cumulative_w + tree_w[following]
            if reached < target or (strictly and reached == target):
                position = following
                cumulative_w = reached
                cumulative_wy += tree_wy[following]
        bit >>= 1
    return position, cumulative_w, cumulative_wy


@generic_jit
def median_and_deviations(tree_w, tree_wy, size, top_bit, sorted_y, total_w, total_wy):
    """(weighted median, weighted absolute deviations from it) of the activated rows."""
    half = 0.5 * total_w
    low, _, _ = fenwick_first_beyond(tree_w, tree_wy, size, top_bit, half, False)
    high, w_left, wy_left = fenwick_first_beyond(tree_w, tree_wy, size, top_bit, half, True)
    if high >= size:  # rounding put the whole weight at or below half: the last active rank
        high = low
    if low >= size:
        low = size - 1
        high = low
    median = sorted_y[high] if low == high else (sorted_y[low] + sorted_y[high]) / 2.0
    w_right = total_w - w_left
    wy_right = total_wy - wy_left
    return median, (wy_right - median * w_right) + (median * w_left - wy_left)


@generic_jit
def prefix_deviations(sorted_y, ranks, weights, count, forward, tree_w, tree_wy, errors):
    """``errors[k]``: the absolute deviations of rows 0..k (``forward``) or k..count-1 from
    their median, the rows given by their ``ranks`` and ``weights`` in feature order."""
    size = sorted_y.shape[0]
    top_bit = 1
    while top_bit * 2 <= size:
        top_bit *= 2
    for j in range(size + 1):
        tree_w[j] = 0.0
        tree_wy[j] = 0.0
    total_w = 0.0
    total_wy = 0.0
    for step in range(count):
        k = step if forward else count - 1 - step
        rank = ranks[k]
        fenwick_add(tree_w, tree_wy, size, rank, sorted_y[rank], weights[k])
        total_w += weights[k]
        total_wy += weights[k] * sorted_y[rank]
        errors[k] = median_and_deviations(
            tree_w, tree_wy, size, top_bit, sorted_y, total_w, total_wy
        )[1]


@generic_jit
def median_of_weights_by_rank(sorted_y, by_rank):
    """The weighted median (scikit-learn's rule) of responses ``sorted_y`` (ascending) with
    weights ``by_rank`` (0: a rank not in the set)."""
    total = 0.0
    for r in range(sorted_y.shape[0]):
        total += by_rank[r]
    half = 0.5 * total
    cumulative = 0.0
    low = -1
    for r in range(sorted_y.shape[0]):
        if by_rank[r] <= 0.0:
            continue
        if low >= 0:  # the cumulative weight was exactly half at ``low``
            return (sorted_y[low] + sorted_y[r]) / 2.0
        cumulative += by_rank[r]
        if cumulative > half:
            return sorted_y[r]
        if cumulative == half:
            low = r
    return sorted_y[low] if low >= 0 else 0.0


@generic_jit
def deviations_of_weights_by_rank(sorted_y, by_rank, median):
    """The weighted absolute deviations from ``median``, summed in the order of the
    responses (so every search sums a set of rows in the same order)."""
    total = 0.0
    for r in range(sorted_y.shape[0]):
        if by_rank[r] > 0.0:
            total += by_rank[r] * abs(sorted_y[r] - median)
    return total


@generic_jit
def scan_ranked_feature(
    values,
    weights,
    ranks,
    count,
    sorted_y,
    base,
    total_weight,
    min_samples_leaf,
    min_weight_leaf,
    tree_w,
    tree_wy,
    left_errors,
    right_errors,
):
    """Best cut of ``count`` rows sorted by a feature's ``values`` (with their weights and
    the ranks of their responses in ``sorted_y``): (drop, threshold, weight on the left,
    rows on the left), the drop ``base - (w_L i(L) + w_R i(R)) / total_weight`` with i the
    mean absolute deviation from the side's median; -inf and -1 rows when no cut is
    admissible. Candidate cuts, minimum leaf sizes, thresholds and the tie rule (the
    leftmost cut) are the exhaustive search's."""
    prefix_deviations(sorted_y, ranks, weights, count, True, tree_w, tree_wy, left_errors)
    prefix_deviations(sorted_y, ranks, weights, count, False, tree_w, tree_wy, right_errors)
    best_drop = -np.inf
    best_threshold = 0.0
    best_left_weight = 0.0
    best_position = -1
    left_weight = 0.0
    for j in range(count - 1):
        left_weight += weights[j]
        right_weight = total_weight - left_weight
        if not admissible_cut(
            values, j, count, left_weight, right_weight, min_samples_leaf, min_weight_leaf
        ):
            continue
        # scikit-learn's proxy, w_L (e_L / w_L) + w_R (e_R / w_R), in its order
        children = left_weight * (left_errors[j] / left_weight) + right_weight * (
            right_errors[j + 1] / right_weight
        )
        drop = base - children / total_weight
        if drop > best_drop:
            best_drop = drop
            best_left_weight = left_weight
            best_position = j + 1
            best_threshold = cut_threshold(values, j)
    return best_drop, best_threshold, best_left_weight, best_position


NODE_SIGNATURE = types.Tuple((i8, f8, f8, f8))(F1, F2A, I1, F1, I1, i8, f8)


@jit(NODE_SIGNATURE)
def best_absolute_split_of_node(
    response, X, rows, row_weights, features, min_samples_leaf, min_weight_leaf
):
    """Best (feature, threshold, drop, missing share) over ``features`` for the rows of a
    node (``row_weights``: their weights at the node) under absolute error. Missing values
    as the exhaustive search treats them (C4.5): a feature is judged on its known rows,
    its drop scaled by their weight share; the missing share is the known weight sent
    left. The first strictly best feature wins. Returns feature -1 when no cut is
    admissible."""
    n = rows.shape[0]
    node_y = np.empty(n)
    for j in range(n):
        node_y[j] = response[rows[j]]
    by_response = np.argsort(node_y, kind="mergesort")
    sorted_y = np.empty(n)
    rank_of = np.empty(n, dtype=np.int64)
    by_rank = np.zeros(n)
    parent_weight = 0.0
    for r in range(n):
        sorted_y[r] = node_y[by_response[r]]
        rank_of[by_response[r]] = r
        by_rank[r] = row_weights[by_response[r]]
        parent_weight += row_weights[r]
    # the node's own deviations serve every feature without a missing value
    node_base = deviations_of_weights_by_rank(
        sorted_y, by_rank, median_of_weights_by_rank(sorted_y, by_rank)
    )
    unsorted = np.empty(n)
    values = np.empty(n)
    weights = np.empty(n)
    ranks = np.empty(n, dtype=np.int64)
    left_errors = np.empty(n)
    right_errors = np.empty(n)
    tree_w = np.empty(n + 1)
    tree_wy = np.empty(n + 1)
    best_feature = -1
    best_threshold = 0.0
    best_drop = -np.inf
    best_share = 0.5
    for f in features:
        known, known_weight, _ = gather_ranked_feature(
            X, rows, row_weights, f, rank_of, unsorted, values, weights, ranks
        )
        if known < 2 or known_weight <= 0.0:
            continue
        if known == n:
            base = node_base / known_weight
        else:
            for r in range(n):
                by_rank[r] = 0.0
            for j in range(known):
                by_rank[ranks[j]] = weights[j]
            median = median_of_weights_by_rank(sorted_y, by_rank)
            base = deviations_of_weights_by_rank(sorted_y, by_rank, median) / known_weight
        drop, threshold, left_weight, position = scan_ranked_feature(
            values,
            weights,
            ranks,
            known,
            sorted_y,
            base,
            known_weight,
            min_samples_leaf,
            min_weight_leaf,
            tree_w,
            tree_wy,
            left_errors,
            right_errors,
        )
        if position < 0:
            continue
        if known < n:
            drop *= known_weight / parent_weight
        if drop > best_drop:
            best_drop = drop
            best_feature = f
            best_threshold = threshold
            best_share = left_weight / known_weight
    return best_feature, best_threshold, best_drop, best_share


SUMMARY_SIGNATURE = types.UniTuple(f8, 2)(F1, F1)


@jit(SUMMARY_SIGNATURE)
def median_summary(values, weights):
    """(weighted median, weighted absolute deviations from it) of a node's responses."""
    n = values.shape[0]
    by_response = np.argsort(values, kind="mergesort")
    sorted_y = np.empty(n)
    by_rank = np.empty(n)
    for r in range(n):
        sorted_y[r] = values[by_response[r]]
        by_rank[r] = weights[by_response[r]]
    median = median_of_weights_by_rank(sorted_y, by_rank)
    return median, deviations_of_weights_by_rank(sorted_y, by_rank, median)


GROW_SIGNATURE = types.float64[:, ::1](F1, F2A, F1, types.int32[:, ::1], i8, F1, i8, i8)


@jit(GROW_SIGNATURE)
def grow_absolute_error_tree(response, X, weight, order, n_rows, rules, max_features, seed):
    """Grow a whole absolute-error tree on data without missing values: the tree the
    engine's node-by-node loop grows with the exhaustive splitter and hard propagation
    (nodes numbered depth first, first branch first; features drawn per node as the
    presorted grower draws them), without a Python step per node. Returns the node table
    (:data:`.growth.NODE_COLUMNS`; the statistics: median and absolute deviations).

    ``order`` holds, per feature and then for the responses (its last row), the rows
    sorted stably by value, the ``n_rows`` rows of positive weight first (a zero-weight
    row is a removed row: a forest's out-of-bag rows); a split partitions every row's
    slice stably, so a node's rows stay sorted and nothing is sorted again. ``rules`` as
    :func:`.growth.rule_vector` gives them.

    Terminates: every split sends at least one row each way (a cut exists only between
    distinct values), so every child holds fewer rows than its parent."""
    d = X.shape[1]
    np.random.seed(seed)
    candidates = np.empty(d, dtype=np.int64)
    for f in range(d):
        candidates[f] = f
    partitioned = np.empty(d + 1, dtype=np.int64)
    for f in range(d + 1):
        partitioned[f] = f
    n_total = weight.shape[0]
    goes_left = np.zeros(n_total, dtype=np.uint8)
    scratch = np.empty(max(n_rows, 1), dtype=np.int32)
    rank_of_row = np.empty(n_total, dtype=np.int64)
    sorted_y = np.empty(n_rows)
    by_rank = np.empty(n_rows)
    values = np.empty(n_rows)
    weights = np.empty(n_rows)
    ranks = np.empty(n_rows, dtype=np.int64)
    left_errors = np.empty(n_rows)
    right_errors = np.empty(n_rows)
    tree_w = np.empty(n_rows + 1)
    tree_wy = np.empty(n_rows + 1)
    table = np.empty((64, SUMS + 2))
    stack = np.empty((64, 5), dtype=np.int64)  # start, end, depth, parent, branch
    stack[0, 0], stack[0, 1], stack[0, 2], stack[0, 3], stack[0, 4] = 0, n_rows, 0, -1, 0
    top = 1
    node = -1
    summary = np.empty(2)
    min_samples_leaf = np.int64(min(rules[0], 9.0e18))
    while top > 0:
        top -= 1
        start, end, depth = stack[top, 0], stack[top, 1], stack[top, 2]
        parent, branch = stack[top, 3], stack[top, 4]
        node += 1
        if node == table.shape[0]:
            table = grow_array(table, 2 * table.shape[0])
        link_child(table, parent, branch, node)
        count = end - start
        node_weight = 0.0
        for k in range(count):
            row = order[d, start + k]
            sorted_y[k] = response[row]
            by_rank[k] = weight[row]
            rank_of_row[row] = k
            node_weight += weight[row]
        node_y = sorted_y[:count]
        summary[0] = median_of_weights_by_rank(node_y, by_rank[:count])
        summary[1] = deviations_of_weights_by_rank(node_y, by_rank[:count], summary[0])
        impurity = summary[1] / node_weight if node_weight > 0.0 else 0.0
        fill_node(table[node], summary, node_weight, count, impurity, depth)
        if not may_split(count, node_weight, impurity, depth, rules):
            continue
        n_candidates = d
        if max_features < d:
            for i in range(max_features):  # partial Fisher-Yates draw
                j = np.random.randint(i, d)
                candidates[i], candidates[j] = candidates[j], candidates[i]
            n_candidates = max_features
        best_feature = -1
        best_drop = -np.inf
        best_threshold = 0.0
        best_position = -1
        for c in range(n_candidates):
            f = candidates[c]
            for j in range(count):
                row = order[f, start + j]
                values[j] = X[row, f]
                weights[j] = weight[row]
                ranks[j] = rank_of_row[row]
            drop, threshold, _, position = scan_ranked_feature(
                values,
                weights,
                ranks,
                count,
                node_y,
                impurity,
                node_weight,
                min_samples_leaf,
                rules[1],
                tree_w[: count + 1],
                tree_wy[: count + 1],
                left_errors,
                right_errors,
            )
            if position >= 0 and drop > best_drop:
                best_feature, best_drop = f, drop
                best_threshold, best_position = threshold, position
        if best_feature < 0 or not accepts_split(best_drop, node_weight, rules):
            continue
        table[node, FEATURE], table[node, THRESHOLD] = best_feature, best_threshold
        table[node, IMPROVEMENT] = best_drop
        mark_left(order, best_feature, start, end, best_position, goes_left)
        partition_features(order, partitioned, best_feature, start, end, goes_left, scratch)
        stack, top = push_children(stack, top, node, start, start + best_position, end, depth)
    return table[: node + 1].copy()
