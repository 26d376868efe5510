"""Fused depth-first builder for exhaustive search with hard propagation.

Grows the whole tree in one compiled call, with the semantics of
:func:`treekit_core.engine.grow.grow_tree` (same stopping rules, same node numbering, same tie
breaking), so the two give identical trees. What makes it fast:

* every feature is sorted once (``presort``); each node keeps, per feature, its samples in
  sorted order in a slice of ``order``, and a split partitions those slices stably, so no
  node sorts anything;
* the per-feature scans and partitions of large nodes run in parallel over features;
* the tree's arrays grow by doubling, like scikit-learn's.

``numba.get_num_threads()`` must not be called inside a cached kernel (numba then refuses
to cache it), so the thread count is an argument.
"""

import numba
import numpy as np
from numba import prange, types

from treekit_core.kernels.compiling import IMPURITY_TYPE, jit
from treekit_core.kernels.split_search import F1, F2A, F2C, f8, i8, scan_sorted_feature

I32_2 = types.int32[:, ::1]


@jit(I32_2(F2A, i8), parallel=True)
def presort(X, n_threads):
    """For every feature, the row ids sorted by value (stable)."""
    n, d = X.shape
    order = np.empty((d, n), dtype=np.int32)
    for f in prange(d):
        order[f, :] = np.argsort(X[:, f], kind="mergesort").astype(np.int32)
    return order


@jit(types.void(F2A, F2C, F1, I32_2, i8, i8, i8, F1, F2C, F1))
def _gather_presorted(
    X, weighted_evidence, weights, order, feature, start, end, values, weighted, node_weights
):
    n_classes = weighted_evidence.shape[1]
    for j in range(end - start):
        s = order[feature, start + j]
        values[j] = X[s, feature]
        node_weights[j] = weights[s]
        for k in range(n_classes):
            weighted[j, k] = weighted_evidence[s, k]


@jit(types.void(I32_2, i8, i8, i8, types.uint8[::1], types.int32[::1]))
def _stable_partition(order, feature, start, end, goes_left, scratch):
    """Left rows first, right rows after, each keeping its sorted order."""
    n_left = 0
    n_right = 0
    for j in range(start, end):
        s = order[feature, j]
        if goes_left[s]:
            order[feature, start + n_left] = s
            n_left += 1
        else:
            scratch[n_right] = s
            n_right += 1
    for j in range(n_right):
        order[feature, start + n_left + j] = scratch[j]


@jit()
def _grow(array, size):
    bigger = np.empty((size,) + array.shape[1:], dtype=array.dtype)
    bigger[: array.shape[0]] = array
    return bigger


BUILD_RESULT = types.Tuple(
    (
        types.int64[::1],
        types.int64[::1],
        types.int64[::1],
        types.float64[::1],
        F2C,
        types.float64[::1],
        types.int64[::1],
        types.float64[::1],
        types.int64[::1],
        types.float64[::1],
    )
)
BUILD_SIGNATURE = BUILD_RESULT(
    IMPURITY_TYPE,
    F1,
    F2A,
    F2C,
    F1,
    I32_2,
    i8,
    f8,
    i8,
    i8,
    f8,
    f8,
    f8,
    f8,
    i8,
    i8,
    i8,
    i8,
)


@jit(BUILD_SIGNATURE, parallel=True)
def build_depth_first(
    impurity,
    params,
    X,
    weighted_evidence,
    weights,
    order,
    min_samples_leaf,
    min_weight_leaf,
    min_samples_split,
    max_depth,
    min_impurity_decrease,
    min_gain,
    pure_tolerance,
    total_weight,
    max_features,
    seed,
    n_threads,
    parallel_min_work,
):
    """Grow a tree; returns (left, right, feature, threshold, class_sums, weight,
    n_samples, impurity, depth, improvement), one entry per node.

    ``order`` (features x rows) is consumed. ``max_features`` < d draws that many
    candidate features per node (Fisher-Yates, numba's generator seeded with ``seed``);
    ``min_gain`` NaN disables the gain threshold. Nodes with at least
    ``parallel_min_work`` rows x features are searched in parallel over features.
    """
    n, d = X.shape
    n_classes = weighted_evidence.shape[1]
    eps = np.finfo(np.float64).eps
    np.random.seed(seed)
    values = np.empty((n_threads, n))
    weighted = np.empty((n_threads, n, n_classes))
    node_weights = np.empty((n_threads, n))
    left_sums = np.empty((n_threads, n_classes))
    right_sums = np.empty((n_threads, n_classes))
    scratch = np.empty((n_threads, n), dtype=np.int32)
    goes_left = np.zeros(n, dtype=np.uint8)
    candidates = np.arange(d)
    best_drop = np.empty(d)
    best_threshold = np.empty(d)
    best_position = np.empty(d, dtype=np.int64)

    capacity = 64
    left = np.empty(capacity, dtype=np.int64)
    right = np.empty(capacity, dtype=np.int64)
    feature = np.empty(capacity, dtype=np.int64)
    threshold = np.empty(capacity)
    class_sums = np.empty((capacity, n_classes))
    node_weight = np.empty(capacity)
    n_samples = np.empty(capacity, dtype=np.int64)
    node_impurity = np.empty(capacity)
    depth = np.empty(capacity, dtype=np.int64)
    improvement = np.empty(capacity)

    stack_start = np.empty(64, dtype=np.int64)
    stack_end = np.empty(64, dtype=np.int64)
    stack_depth = np.empty(64, dtype=np.int64)
    stack_parent = np.empty(64, dtype=np.int64)
    stack_is_left = np.empty(64, dtype=np.int64)
    stack_start[0], stack_end[0], stack_depth[0], stack_parent[0], stack_is_left[0] = 0, n, 0, -1, 0
    top = 1
    node_count = 0
    sums = np.empty(n_classes)
    while top > 0:
        top -= 1
        start, end = stack_start[top], stack_end[top]
        node_depth, parent, is_left = stack_depth[top], stack_parent[top], stack_is_left[top]
        if node_count == capacity:
            capacity *= 2
            left, right, feature = (
                _grow(left, capacity),
                _grow(right, capacity),
                _grow(feature, capacity),
            )
            threshold, class_sums = _grow(threshold, capacity), _grow(class_sums, capacity)
            node_weight, n_samples = _grow(node_weight, capacity), _grow(n_samples, capacity)
            node_impurity, depth = _grow(node_impurity, capacity), _grow(depth, capacity)
            improvement = _grow(improvement, capacity)
        node = node_count
        node_count += 1
        if parent >= 0:
            if is_left:
                left[parent] = node
            else:
                right[parent] = node
        sums[:] = 0.0
        weight = 0.0
        for j in range(start, end):
            s = order[0, j]
            weight += weights[s]
            for k in range(n_classes):
                sums[k] += weighted_evidence[s, k]
        imp = impurity(sums, weight, params)
        left[node], right[node], feature[node], threshold[node] = -1, -1, -1, -2.0
        class_sums[node, :] = sums
        node_weight[node], n_samples[node], node_impurity[node], depth[node] = (
            weight,
            end - start,
            imp,
            node_depth,
        )
        improvement[node] = np.nan
        count = end - start
        if (
            node_depth >= max_depth
            or count < min_samples_split
            or count < 2 * min_samples_leaf
            or weight < 2 * min_weight_leaf
            or imp <= pure_tolerance
        ):
            continue
        n_candidates = d
        if max_features < d:
            for i in range(max_features):  # partial Fisher-Yates draw
                j = np.random.randint(i, d)
                candidates[i], candidates[j] = candidates[j], candidates[i]
            n_candidates = max_features
        if count * n_candidates >= parallel_min_work:
            for c in prange(n_candidates):
                t = numba.get_thread_id()
                f = candidates[c]
                _gather_presorted(
                    X,
                    weighted_evidence,
                    weights,
                    order,
                    f,
                    start,
                    end,
                    values[t],
                    weighted[t],
                    node_weights[t],
                )
                best_drop[c], best_threshold[c], best_position[c] = scan_sorted_feature(
                    impurity,
                    params,
                    values[t, :count],
                    weighted[t, :count],
                    node_weights[t, :count],
                    sums,
                    weight,
                    imp,
                    min_samples_leaf,
                    min_weight_leaf,
                    left_sums[t],
                    right_sums[t],
                )
        else:
            for c in range(n_candidates):
                f = candidates[c]
                _gather_presorted(
                    X,
                    weighted_evidence,
                    weights,
                    order,
                    f,
                    start,
                    end,
                    values[0],
                    weighted[0],
                    node_weights[0],
                )
                best_drop[c], best_threshold[c], best_position[c] = scan_sorted_feature(
                    impurity,
                    params,
                    values[0, :count],
                    weighted[0, :count],
                    node_weights[0, :count],
                    sums,
                    weight,
                    imp,
                    min_samples_leaf,
                    min_weight_leaf,
                    left_sums[0],
                    right_sums[0],
                )
        chosen = -1
        for c in range(n_candidates):
            if best_position[c] >= 0 and (chosen < 0 or best_drop[c] > best_drop[chosen]):
                chosen = c
        if chosen < 0:
            continue
        drop = best_drop[chosen]
        if weight / total_weight * drop + eps < min_impurity_decrease:
            continue
        if not np.isnan(min_gain) and drop <= min_gain:
            continue
        f = candidates[chosen]
        n_left = best_position[chosen]
        feature[node], threshold[node], improvement[node] = f, best_threshold[chosen], drop
        for j in range(start, end):
            goes_left[order[f, j]] = 1 if j < start + n_left else 0
        if count * d >= parallel_min_work:
            for g in prange(d):
                if g != f:
                    _stable_partition(
                        order, g, start, end, goes_left, scratch[numba.get_thread_id()]
                    )
        else:
            for g in range(d):
                if g != f:
                    _stable_partition(order, g, start, end, goes_left, scratch[0])
        if top + 2 > stack_start.shape[0]:
            size = 2 * stack_start.shape[0]
            stack_start, stack_end = _grow(stack_start, size), _grow(stack_end, size)
            stack_depth, stack_parent = _grow(stack_depth, size), _grow(stack_parent, size)
            stack_is_left = _grow(stack_is_left, size)
        middle = start + n_left
        stack_start[top], stack_end[top], stack_depth[top] = middle, end, node_depth + 1
        stack_parent[top], stack_is_left[top] = node, 0
        top += 1
        stack_start[top], stack_end[top], stack_depth[top] = start, middle, node_depth + 1
        stack_parent[top], stack_is_left[top] = node, 1
        top += 1
    return (
        left[:node_count].copy(),
        right[:node_count].copy(),
        feature[:node_count].copy(),
        threshold[:node_count].copy(),
        class_sums[:node_count].copy(),
        node_weight[:node_count].copy(),
        n_samples[:node_count].copy(),
        node_impurity[:node_count].copy(),
        depth[:node_count].copy(),
        improvement[:node_count].copy(),
    )


#: Nodes with at least this many rows x candidate features are searched in parallel.
PARALLEL_MIN_WORK = 50_000


def build_arrays(criterion, data, rules, max_features, seed, parallel=True):
    """Run the fused builder on training data and return an unlabelled Tree.

    The presorted order depends only on X, so it is kept in ``data.cache`` and shared by
    every tree grown on the same X (a forest's bootstrap only changes weights)."""
    from treekit_core.engine.grow import PURE_TOLERANCE
    from treekit_core.engine.tree import Tree

    n_threads = numba.get_num_threads() if parallel else 1
    X = data.X
    if "presort" not in data.cache:
        data.cache["presort"] = presort(X, n_threads)
    order = data.cache["presort"].copy()
    weighted_evidence = np.ascontiguousarray(data.evidence * data.weight[:, None])
    (
        left,
        right,
        feature,
        threshold,
        class_sums,
        weight,
        n_samples,
        impurity,
        depth,
        improvement,
    ) = build_depth_first(
        criterion.compiled_impurity(),
        criterion.impurity_params(data.n_classes),
        X,
        weighted_evidence,
        np.ascontiguousarray(data.weight),
        order,
        rules.min_samples_leaf,
        rules.min_weight_leaf,
        rules.min_samples_split,
        rules.max_depth,
        rules.min_impurity_decrease,
        np.nan if rules.min_gain is None else float(rules.min_gain),
        PURE_TOLERANCE,
        rules.total_weight,
        max_features,
        seed,
        n_threads,
        PARALLEL_MIN_WORK if parallel else 2**62,
    )
    n = left.shape[0]
    tree = Tree.from_binary(
        left,
        right,
        feature,
        threshold,
        class_sums,
        weight,
        n_samples,
        impurity,
        depth,
        np.zeros((n, data.n_classes)),
        np.zeros(n, dtype=np.int64),
        data.n_features,
    )
    tree.node_fields["improvement"] = improvement
    return tree
