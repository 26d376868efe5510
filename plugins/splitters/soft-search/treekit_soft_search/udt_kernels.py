"""UDT's split searches (Tsang et al., 2011), written once for every criterion.

Every kernel that evaluates the impurity takes it as its first parameter; the splitter gets
them through :func:`treekit_core.kernels.impurity_kernels`, which turns this module into one
specialised to a criterion (the impurity inlined, compiled once per machine and loaded from
disk later), as the core does for its exhaustive search. ``ENTRY_SIGNATURES`` are the entry
points' types after the impurity.
"""

import numpy as np
from numba import types

from treekit_core.kernels import generic_jit, split_drop
from treekit_soft_search.kernels import (
    MAX_BOUND_CLASSES,
    PRUNE_SLACK,
    SAMPLE_EVERY,
    SUB_RUN,
    branch_weight_floor,
    leftmost_of_best,
    longer,
    surviving_range,
    tuples_by_value,
)

f8, i8 = types.float64, types.int64
F1, F2C, I1 = types.float64[::1], types.float64[:, ::1], types.int64[::1]
F2A = types.Array(types.float64, 2, "A")
ENTRY_SIGNATURES = {
    "udt_scan": types.Tuple((f8, f8, i8))(F1, F1, F2C, F1, F1, f8, f8, f8),
    "udt_pruned_node": types.Tuple((f8, i8, f8, f8, i8))(
        F1, F2A, I1, F1, F2C, F1, I1, F1, F1, F1, f8, f8
    ),
}


@generic_jit
def udt_scan(
    impurity,
    params,
    points,
    weighted,
    weights,
    parent_sums,
    parent_weight,
    parent_impurity,
    min_weight_leaf,
):
    """UDT's plain search over pdf sample points sorted by position: every point is a
    candidate threshold (left = points <= it). Returns (best drop, threshold, evaluations):
    the leftmost of the candidates within TIE of the best drop."""
    m = points.shape[0]
    n_classes = parent_sums.shape[0]
    least_weight = branch_weight_floor(min_weight_leaf)
    left_sums = np.zeros(n_classes)
    right_sums = np.empty(n_classes)
    left_weight = 0.0
    admissible_drops = np.empty(m)
    admissible_points = np.empty(m)
    n_admissible = 0
    evaluations = 0
    j = 0
    while j < m:
        while True:  # points at the same position go to the same side
            for c in range(n_classes):
                left_sums[c] += weighted[j, c]
            left_weight += weights[j]
            j += 1
            if j >= m or points[j] != points[j - 1]:
                break
        right_weight = parent_weight - left_weight
        drop = split_drop(
            impurity,
            params,
            parent_sums,
            parent_weight,
            parent_impurity,
            left_sums,
            left_weight,
            right_sums,
        )
        evaluations += 1
        if left_weight < least_weight or right_weight < least_weight:
            continue
        admissible_drops[n_admissible] = drop
        admissible_points[n_admissible] = points[j - 1]
        n_admissible += 1
    chosen, best_drop = leftmost_of_best(admissible_drops, admissible_points, n_admissible)
    best_threshold = admissible_points[chosen] if chosen >= 0 else 0.0
    return best_drop, best_threshold, evaluations


@generic_jit
def cannot_beat(
    impurity,
    params,
    parent_sums,
    parent_weight,
    base,
    start_sums,
    stop_sums,
    beat,
    scratch,
    moving_classes,
):
    """True when no cut whose left class sums lie in the box [start_sums, stop_sums] can
    have a drop within PRUNE_SLACK of ``beat`` (nor above it).

    The bound: the smallest children's weighted impurity W_L i(L) + W_R i(R) over the
    corners of the box (W = the sum of the class sums: evidence rows sum to 1, one-hot
    labels or the class shares of merged tuples). For a concave weighted impurity no
    point of the box is lower, so no threshold inside can do better
    (Tsang et al.'s pruning, for any concave criterion). A box in which more than
    MAX_BOUND_CLASSES classes move is never pruned. ``scratch`` holds 3K floats,
    ``moving_classes`` K integers."""
    n_classes = parent_sums.shape[0]
    left = scratch[:n_classes]
    right = scratch[n_classes : 2 * n_classes]
    moving = scratch[2 * n_classes :]
    n_moving = 0
    for k in range(n_classes):
        moving[k] = max(stop_sums[k] - start_sums[k], 0.0)
        if moving[k] > 0.0:
            moving_classes[n_moving] = k
            n_moving += 1
    if n_moving > MAX_BOUND_CLASSES:
        return False
    lowest = np.inf
    for corner in range(1 << n_moving):
        for k in range(n_classes):
            left[k] = start_sums[k]
        for c in range(n_moving):
            if (corner >> c) & 1:
                left[moving_classes[c]] += moving[moving_classes[c]]
        left_weight = 0.0
        for k in range(n_classes):
            right[k] = parent_sums[k] - left[k]
            left_weight += left[k]
        right_weight = parent_weight - left_weight
        value = 0.0
        if left_weight > 0.0:
            value += left_weight * impurity(left, left_weight, params)
        if right_weight > 0.0:
            value += right_weight * impurity(right, right_weight, params)
        lowest = min(lowest, value)
    return base - lowest / parent_weight < beat - PRUNE_SLACK * max(1.0, abs(beat))


@generic_jit
def evaluate_candidate(
    impurity,
    params,
    known_sums,
    known_weight,
    base,
    left_sums,
    left_weight,
    right_sums,
    least_weight,
    position,
    found_drops,
    found_positions,
    found_left,
    n_found,
):
    """The drop of the cut at ``position`` (left class sums and weight given), recorded in
    the found arrays (grown when full) when both sides keep ``least_weight``. Returns the
    arrays, their new count and the drop (-inf when not admissible)."""
    right_weight = known_weight - left_weight
    if left_weight < least_weight or right_weight < least_weight:
        return found_drops, found_positions, found_left, n_found, -np.inf
    drop = split_drop(
        impurity, params, known_sums, known_weight, base, left_sums, left_weight, right_sums
    )
    if n_found == found_drops.shape[0]:
        found_drops, found_positions = longer(found_drops), longer(found_positions)
        found_left = longer(found_left)
    found_drops[n_found], found_positions[n_found], found_left[n_found] = (
        drop,
        position,
        left_weight,
    )
    return found_drops, found_positions, found_left, n_found + 1, drop


@generic_jit
def udt_pruned_scan(
    impurity,
    params,
    x,
    weights,
    evidence,
    sigma,
    points,
    lower,
    upper,
    min_weight_leaf,
    node_weight,
    to_beat,
):
    """UDT's search over one feature at a node without sorting every pdf point (Tsang et
    al., 2011, section 5: end points and pruning by bounds); the plain search's choice.

    Tuple j (value ``x[j]``, NaN: no pdf) has the points x + sigma * points[k] inside the
    node's box, each of mass weights[j] / count. The candidate thresholds are every point
    position, as in the plain search. The end points (each pdf's first and last point)
    split the axis into intervals; a sweep finds the class sums on the left at every end
    point, and inside an interval only the pdfs spanning it move mass from right to left.
    Every SAMPLE_EVERY-th end point is evaluated first (end-point sampling); then a block of
    end points, an interval between two of them, and a run of SUB_RUN candidates inside an
    interval are each skipped when their corner bound (:func:`cannot_beat`, valid for a
    concave criterion and evidence rows summing to 1) cannot beat the best so far, or when
    every candidate in them leaves one side lighter than ``min_weight_leaf``; what is left is
    evaluated. ``to_beat`` is the best drop of the features searched before this one,
    scaled by their known fraction (Tsang et al.'s global pruning): a region that cannot
    beat it cannot make this feature the node's choice, so it is skipped too (the drop
    returned is then this feature's best only if it beats ``to_beat``). Among candidates
    within TIE of the best, the leftmost is chosen. Returns (best drop on the known
    tuples, threshold, known weight, weight on the left at the threshold, candidates
    evaluated); the drop is -inf when no candidate keeps ``min_weight_leaf`` on each side.
    """
    n = x.shape[0]
    n_classes = evidence.shape[1]
    first = np.empty(n, dtype=np.int64)
    last = np.empty(n, dtype=np.int64)
    mass = np.zeros(n)
    known_sums = np.zeros(n_classes)
    known_weight = 0.0
    for j in range(n):
        first[j], last[j] = 0, -1
        if not np.isnan(x[j]):
            first[j], last[j] = surviving_range(x[j], sigma, points, lower, upper)
        if last[j] >= first[j]:
            mass[j] = weights[j] / (last[j] - first[j] + 1)
            known_weight += weights[j]
            for k in range(n_classes):
                known_sums[k] += weights[j] * evidence[j, k]
    best_drop, best_threshold, best_left = -np.inf, 0.0, 0.0
    if known_weight <= 0.0:
        return best_drop, best_threshold, known_weight, best_left, 0
    base = impurity(known_sums, known_weight, params)
    least_weight = branch_weight_floor(min_weight_leaf)
    if known_weight < 2.0 * least_weight:
        return best_drop, best_threshold, known_weight, best_left, 0  # no admissible cut
    # The end points, sorted; tuples enter the sweep in the order of their first point.
    ends = np.empty(2 * n)
    m = 0
    for j in range(n):
        if last[j] >= first[j]:
            ends[m] = x[j] + sigma * points[first[j]]
            ends[m + 1] = x[j] + sigma * points[last[j]]
            m += 2
    ends = np.unique(ends[:m])
    starts = np.empty(n)
    for j in range(n):
        starts[j] = x[j] + sigma * points[first[j]] if last[j] >= first[j] else np.inf
    entering = np.argsort(starts, kind="mergesort")
    n_entered = 0
    active = np.empty(n, dtype=np.int64)
    n_active = 0
    pointer = first.copy()  # per tuple: its first point not yet on the left
    left_sums = np.zeros(n_classes)
    left_weight = 0.0
    right_sums = np.empty(n_classes)
    n_ends = ends.shape[0]
    # Every admissible candidate evaluated (the choice among near ties is made at the end:
    # the leftmost within TIE of the best, as the plain search chooses).
    capacity = n_ends + 64  # grown when needed
    found_drops = np.empty(capacity)
    found_positions = np.empty(capacity)
    found_left = np.empty(capacity)
    n_found = 0
    # Pass 1: the end points, with the class sums on their left kept for pass 2.
    end_sums = np.empty((n_ends, n_classes + 1))
    before_sums = np.empty((n_ends, n_classes + 1))  # just before each end point
    evaluations = 0
    # The position of each tuple's next point not yet on the left (cached: the sweep
    # compares it for every active tuple at every end point).
    next_position = np.empty(n)
    at_z = np.empty(n, dtype=np.int64)
    for j in range(n):
        next_position[j] = x[j] + sigma * points[first[j]] if last[j] >= first[j] else np.inf
    for i in range(n_ends):
        z = ends[i]
        while n_entered < n and starts[entering[n_entered]] <= z:
            active[n_active] = entering[n_entered]
            n_active += 1
            n_entered += 1
        # One visit of the active pdfs: their points before z go left; those with a
        # point at z are noted and moved after the sums just before z are kept.
        n_at = 0
        a = 0
        while a < n_active:
            j = active[a]
            while next_position[j] < z:
                for k in range(n_classes):
                    left_sums[k] += mass[j] * evidence[j, k]
                left_weight += mass[j]
                pointer[j] += 1
                if pointer[j] > last[j]:
                    next_position[j] = np.inf
                    break
                next_position[j] = x[j] + sigma * points[pointer[j]]
            if next_position[j] == z:
                at_z[n_at] = j
                n_at += 1
            if pointer[j] > last[j]:  # wholly on the left: leaves the sweep
                n_active -= 1
                active[a] = active[n_active]
            else:
                a += 1
        for k in range(n_classes):
            before_sums[i, k] = left_sums[k]
        before_sums[i, n_classes] = left_weight
        for c in range(n_at):
            j = at_z[c]
            while next_position[j] == z:
                for k in range(n_classes):
                    left_sums[k] += mass[j] * evidence[j, k]
                left_weight += mass[j]
                pointer[j] += 1
                if pointer[j] > last[j]:
                    next_position[j] = np.inf
                    break
                next_position[j] = x[j] + sigma * points[pointer[j]]
        # (a pdf whose last point was at z leaves the active set at the next visit)
        for k in range(n_classes):
            end_sums[i, k] = left_sums[k]
        end_sums[i, n_classes] = left_weight
        if i % SAMPLE_EVERY != 0 and i != n_ends - 1:
            continue  # end-point sampling: the others only if their block may win
        found_drops, found_positions, found_left, found, drop = evaluate_candidate(
            impurity,
            params,
            known_sums,
            known_weight,
            base,
            left_sums,
            left_weight,
            right_sums,
            least_weight,
            z,
            found_drops,
            found_positions,
            found_left,
            n_found,
        )
        evaluations += found - n_found
        n_found = found
        best_drop = max(best_drop, drop)
    scratch = np.empty(3 * n_classes)
    moving_classes = np.empty(n_classes, dtype=np.int64)
    path = np.empty(n_classes)
    # the drop on the known tuples that beats the earlier features' best
    global_floor = to_beat * node_weight / known_weight
    # Pass 1b (pruning): a block of end points between two sampled ones whose corner bound
    # may beat the best so far has its end points evaluated; the others are pruned whole.
    block_pruned = np.zeros(n_ends // SAMPLE_EVERY + 1, dtype=np.bool_)
    for b in range(block_pruned.shape[0]):
        head = b * SAMPLE_EVERY
        tail = min(head + SAMPLE_EVERY, n_ends - 1)
        if tail <= head + 1 and (
            tail <= head or before_sums[tail, n_classes] - end_sums[head, n_classes] <= 0.0
        ):
            continue  # no candidate between the two sampled end points
        if (
            before_sums[tail, n_classes] < least_weight
            or known_weight - end_sums[head, n_classes] < least_weight
        ):
            block_pruned[b] = True  # every candidate leaves one side too light
            continue
        if cannot_beat(
            impurity,
            params,
            known_sums,
            known_weight,
            base,
            end_sums[head, :n_classes],
            before_sums[tail, :n_classes],
            max(best_drop, global_floor),
            scratch,
            moving_classes,
        ):
            block_pruned[b] = True
            continue
        for i in range(head + 1, tail):
            for k in range(n_classes):
                path[k] = end_sums[i, k]
            path_weight = end_sums[i, n_classes]
            found_drops, found_positions, found_left, found, drop = evaluate_candidate(
                impurity,
                params,
                known_sums,
                known_weight,
                base,
                path,
                path_weight,
                right_sums,
                least_weight,
                ends[i],
                found_drops,
                found_positions,
                found_left,
                n_found,
            )
            evaluations += found - n_found
            n_found = found
            best_drop = max(best_drop, drop)
    # Pass 2: inside the intervals (ends[i], ends[i + 1]), again in a sweep: only the pdfs
    # spanning an interval (first point <= its start, last >= its end) have points inside.
    # Buffers for the points inside one interval, grown when an interval needs more.
    positions = np.empty(256)
    owners = np.empty(256, dtype=np.int64)
    candidate_positions = np.empty(256)
    candidate_sums = np.empty((256, n_classes + 1))
    n_entered, n_active = 0, 0
    pointer[:] = first
    last_position = np.empty(n)
    for j in range(n):
        last_position[j] = x[j] + sigma * points[last[j]] if last[j] >= first[j] else -np.inf
    for i in range(n_ends - 1):
        low, high = ends[i], ends[i + 1]
        while n_entered < n and starts[entering[n_entered]] <= low:
            active[n_active] = entering[n_entered]
            n_active += 1
            n_entered += 1
        if before_sums[i + 1, n_classes] - end_sums[i, n_classes] <= 0.0:
            continue  # no point inside: no candidate
        if (
            block_pruned[i // SAMPLE_EVERY]
            or before_sums[i + 1, n_classes] < least_weight
            or known_weight - end_sums[i, n_classes] < least_weight
        ):
            continue
        if cannot_beat(
            impurity,
            params,
            known_sums,
            known_weight,
            base,
            end_sums[i, :n_classes],
            before_sums[i + 1, :n_classes],
            max(best_drop, global_floor),
            scratch,
            moving_classes,
        ):
            continue
        # Only here (an interval searched point by point) is the active set brought up to
        # date: pdfs ending at or before low span no later interval.
        most = 0
        a = 0
        while a < n_active:
            j = active[a]
            if last_position[j] <= low:
                n_active -= 1
                active[a] = active[n_active]
                continue
            while x[j] + sigma * points[pointer[j]] <= low:
                pointer[j] += 1
            most += last[j] - pointer[j] + 1
            a += 1
        if most > positions.shape[0]:
            size = max(most, 2 * positions.shape[0])
            positions, owners = np.empty(size), np.empty(size, dtype=np.int64)
            candidate_positions = np.empty(size)
            candidate_sums = np.empty((size, n_classes + 1))
        count = 0
        for a in range(n_active):
            j = active[a]
            k = pointer[j]
            while k <= last[j]:
                position = x[j] + sigma * points[k]
                if position >= high:
                    break
                positions[count] = position
                owners[count] = j
                count += 1
                k += 1
        order = np.argsort(positions[:count], kind="mergesort")
        # The left sums at every candidate inside (cheap: additions), then the candidates
        # evaluated (two impurities each) in runs of SUB_RUN, a run skipped when the corner
        # bound of its own (small) box cannot beat the best.
        for k in range(n_classes):
            path[k] = end_sums[i, k]
        path_weight = end_sums[i, n_classes]
        n_candidates = 0
        c = 0
        while c < count:
            while True:  # points at the same position go to the same side
                j = owners[order[c]]
                for k in range(n_classes):
                    path[k] += mass[j] * evidence[j, k]
                path_weight += mass[j]
                c += 1
                if c >= count or positions[order[c]] != positions[order[c - 1]]:
                    break
            for k in range(n_classes):
                candidate_sums[n_candidates, k] = path[k]
            candidate_sums[n_candidates, n_classes] = path_weight
            candidate_positions[n_candidates] = positions[order[c - 1]]
            n_candidates += 1
        for run in range(0, n_candidates, SUB_RUN):
            run_end = min(run + SUB_RUN, n_candidates)
            if run_end - run > 2 and cannot_beat(
                impurity,
                params,
                known_sums,
                known_weight,
                base,
                end_sums[i, :n_classes] if run == 0 else candidate_sums[run - 1, :n_classes],
                candidate_sums[run_end - 1, :n_classes],
                max(best_drop, global_floor),
                scratch,
                moving_classes,
            ):
                continue
            for c in range(run, run_end):
                for k in range(n_classes):
                    path[k] = candidate_sums[c, k]
                found_drops, found_positions, found_left, found, drop = evaluate_candidate(
                    impurity,
                    params,
                    known_sums,
                    known_weight,
                    base,
                    path,
                    candidate_sums[c, n_classes],
                    right_sums,
                    least_weight,
                    candidate_positions[c],
                    found_drops,
                    found_positions,
                    found_left,
                    n_found,
                )
                evaluations += found - n_found
                n_found = found
                best_drop = max(best_drop, drop)
    chosen, best_drop = leftmost_of_best(found_drops, found_positions, n_found)
    if chosen >= 0:
        best_threshold, best_left = found_positions[chosen], found_left[chosen]
    return best_drop, best_threshold, known_weight, best_left, evaluations


@generic_jit
def udt_pruned_node(
    impurity,
    params,
    X,
    rows,
    weights,
    evidence,
    sigmas,
    features,
    points,
    lowers,
    uppers,
    min_weight_leaf,
    node_weight,
):
    """:func:`udt_pruned_scan` over ``features`` of the node's ``rows`` of X (with their
    ``weights``; ``evidence`` of every row), in order, each feature's search pruned by the
    best of the features before it. Returns
    (drop scaled by the known fraction, feature (-1: none), threshold, share of the known
    weight on the left, candidates evaluated); the first feature within TIE of the best
    drop wins, as in the plain search."""
    m = features.shape[0]
    feature_drops = np.full(m, -np.inf)
    feature_thresholds = np.zeros(m)
    feature_shares = np.full(m, 0.5)
    best_drop = -np.inf
    evaluations = 0
    n = rows.shape[0]
    column = np.empty(n)
    node_evidence = np.empty((n, evidence.shape[1]))
    for r in range(n):
        node_evidence[r] = evidence[rows[r]]
    values = np.empty(n)
    group_weights = np.empty(n)
    group_evidence = np.empty((n, evidence.shape[1]))
    for c in range(m):
        f = features[c]
        for r in range(n):
            column[r] = X[rows[r], f]
        n_groups = tuples_by_value(
            column, weights, node_evidence, values, group_weights, group_evidence
        )
        drop, threshold, known_weight, left_weight, count = udt_pruned_scan(
            impurity,
            params,
            values[:n_groups],
            group_weights[:n_groups],
            group_evidence[:n_groups],
            sigmas[f],
            points,
            lowers[f],
            uppers[f],
            min_weight_leaf,
            node_weight,
            best_drop,
        )
        evaluations += count
        if drop > -np.inf:
            feature_drops[c] = drop * known_weight / node_weight
            feature_thresholds[c] = threshold
            feature_shares[c] = left_weight / known_weight
            best_drop = max(best_drop, feature_drops[c])
    order = np.arange(m).astype(np.float64)
    chosen, best_drop = leftmost_of_best(feature_drops, order, m)
    if chosen < 0 or not best_drop > -np.inf:
        return -np.inf, -1, 0.0, 0.5, evaluations
    return (
        best_drop,
        features[chosen],
        feature_thresholds[chosen],
        feature_shares[chosen],
        evaluations,
    )
