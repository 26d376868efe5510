"""numba kernels of the uncertain-measurement components (Nunes et al.; Tsang et al.)."""

import math

import numpy as np
from numba import prange, types

from treekit_core.kernels import IMPURITY_TYPE, jit, split_drop

f8 = types.float64
i8 = types.int64
F1 = types.float64[::1]
F2C = types.float64[:, ::1]
I1 = types.int64[::1]

SQRT2 = math.sqrt(2.0)


@jit(f8(f8))
def normal_cdf(z):
    return 0.5 * math.erfc(-z / SQRT2)


@jit(f8(f8, f8))
def truncated_cdf(z, window):
    """The normal CDF truncated to [-window, window] and renormalised (0 below, 1 above)."""
    if z <= -window:
        return 0.0
    if z >= window:
        return 1.0
    low = normal_cdf(-window)
    return (normal_cdf(z) - low) / (normal_cdf(window) - low)


GRID_SIGNATURE = types.UniTuple(f8, 3)(F1, f8, f8, f8, i8)


@jit(GRID_SIGNATURE)
def grid_for(values, sigma, window, resolution, max_candidates):
    """(first grid point, spacing, number of points) of the candidate thresholds:
    theta_k = x_min - window sigma + k delta with delta = sigma / resolution, widened so
    that at most ``max_candidates`` points remain (0: no cap)."""
    low = values.min() - window * sigma
    high = values.max() + window * sigma
    delta = sigma / resolution
    count = int(math.ceil((high - low) / delta)) + 1
    if max_candidates > 0 and count > max_candidates:
        count = max_candidates
        delta = (high - low) / (count - 1)
    return low, delta, float(count)


INCREMENT_SIGNATURE = i8(f8, f8, f8, f8, f8, i8, F1)


@jit(INCREMENT_SIGNATURE)
def sample_increments(x, sigma, window, low, delta, count, out):
    """How much of one sample's mass crosses to the left between consecutive grid points.

    Writes increments for the grid points k0, k0+1, ... (the sample's window) into ``out``
    and returns k0; the increments sum to exactly 1 (the last grid point lies beyond every
    window, where the truncated CDF is 1)."""
    k0 = int(math.floor((x - window * sigma - low) / delta))
    if k0 < 0:
        k0 = 0
    k1 = int(math.ceil((x + window * sigma - low) / delta))
    if k1 > count - 1:
        k1 = count - 1
    previous = 0.0
    for k in range(k0, k1 + 1):
        current = 1.0 if k == count - 1 else truncated_cdf((low + k * delta - x) / sigma, window)
        out[k - k0] = current - previous
        previous = current
    for k in range(k1 + 1 - k0, out.shape[0]):
        out[k] = 0.0
    if previous < 1.0:  # the window ends beyond the last grid point: settle the rest there
        out[k1 - k0] += 1.0 - previous
    return k0


SOFT_SCAN_SIGNATURE = types.Tuple((f8, f8, i8, i8, f8))(
    IMPURITY_TYPE,
    F1,
    F1,
    F2C,
    F1,
    F1,
    f8,
    f8,
    f8,
    f8,
    f8,
    i8,
    i8,
    f8,
    f8,
)


@jit(SOFT_SCAN_SIGNATURE)
def soft_scan(
    impurity,
    params,
    values,
    weighted,
    weights,
    parent_sums,
    parent_weight,
    parent_impurity,
    sigma,
    window,
    resolution,
    max_candidates,
    min_samples_leaf,
    min_weight_leaf,
    tie_tolerance,
):
    """Soft split search on one feature whose node samples are sorted by value.

    Left class mass at theta: L_c = sum_i w_i E_ic Phi~((theta - x_i) / sigma), accumulated
    as running sums of per-sample increments, so the criterion is evaluated once per grid
    point whatever n is. A grid point is admissible when the smoothed masses and the hard
    partition (x <= theta) both leave min_samples_leaf / min_weight_leaf on each side. A
    later grid point replaces the best only if its drop is larger by more than
    ``tie_tolerance`` (C4.5 keeps the first of near-equal cuts).

    Returns (best drop, threshold, number of criterion evaluations, number of distinct hard
    partitions among the admissible grid points (C4.5's Tries), smoothed left weight at the
    best threshold).
    """
    n = values.shape[0]
    n_classes = parent_sums.shape[0]
    low, delta, count_f = grid_for(values, sigma, window, resolution, max_candidates)
    count = int(count_f)
    increments = np.zeros((count, n_classes))
    weight_increments = np.zeros(count)
    span = int(math.ceil(2.0 * window * resolution)) + 3
    scratch = np.empty(max(span, 2))
    for i in range(n):
        k0 = sample_increments(values[i], sigma, window, low, delta, count, scratch)
        for j in range(scratch.shape[0]):
            k = k0 + j
            if k >= count:
                break
            amount = scratch[j]
            if amount != 0.0:
                weight_increments[k] += amount * weights[i]
                for c in range(n_classes):
                    increments[k, c] += amount * weighted[i, c]
    left_sums = np.zeros(n_classes)
    right_sums = np.empty(n_classes)
    left_weight = 0.0
    hard_left = 0
    hard_left_weight = 0.0
    evaluations = 0
    tries = 0
    last_tried = -1
    best_drop = -np.inf
    best_threshold = 0.0
    best_left_weight = 0.0
    for k in range(count):
        theta = low + k * delta
        for c in range(n_classes):
            left_sums[c] += increments[k, c]
        left_weight += weight_increments[k]
        while hard_left < n and values[hard_left] <= theta:
            hard_left_weight += weights[hard_left]
            hard_left += 1
        right_weight = parent_weight - left_weight
        for c in range(n_classes):
            right_sums[c] = parent_sums[c] - left_sums[c]
        left_impurity = impurity(left_sums, left_weight, params)
        right_impurity = impurity(right_sums, right_weight, params)
        evaluations += 1
        if hard_left < min_samples_leaf or n - hard_left < min_samples_leaf:
            continue
        if hard_left_weight < min_weight_leaf or parent_weight - hard_left_weight < min_weight_leaf:
            continue
        if (
            left_weight < min_weight_leaf
            or right_weight < min_weight_leaf
            or left_weight <= 0
            or right_weight <= 0
        ):
            continue
        if hard_left != last_tried:
            tries += 1
            last_tried = hard_left
        drop = (
            parent_impurity
            - (left_weight * left_impurity + right_weight * right_impurity) / parent_weight
        )
        if drop > best_drop + tie_tolerance:
            best_drop = drop
            best_threshold = theta
            best_left_weight = left_weight
    return best_drop, best_threshold, evaluations, tries, best_left_weight


#: UDT's searches choose, among the candidates whose drop is within this (relative) of the
#: best, the leftmost (and among features, the first): drops that differ by rounding only
#: must not decide, since the plain and the pruned search add the same masses in different
#: orders.
TIE = 1e-12
#: A region is pruned only when its bound is below the best by more than this (relative):
#: far more than TIE, so nothing within TIE of the best is ever pruned.
PRUNE_SLACK = 1e-10


@jit(F1(F1))
def longer(array):
    """A copy of ``array`` with twice the room (its first entries copied)."""
    bigger = np.empty(2 * array.shape[0])
    bigger[: array.shape[0]] = array
    return bigger


@jit(types.Tuple((i8, f8))(F1, F1, i8))
def leftmost_of_best(drops, keys, count):
    """(index, drop) of the candidate with the smallest key among the first ``count``
    whose drop is within TIE of the largest; (-1, -inf) when count is 0."""
    if count == 0:
        return -1, -np.inf
    top = drops[0]
    for c in range(1, count):
        top = max(top, drops[c])
    floor = top - TIE * max(1.0, abs(top))
    chosen = -1
    for c in range(count):
        if drops[c] >= floor and (chosen < 0 or keys[c] < keys[chosen]):
            chosen = c
    return chosen, drops[chosen]


@jit(f8(f8))
def branch_weight_floor(min_weight_leaf):
    """The least weight a branch of a UDT split keeps: min_weight_leaf less a relative 1e-9
    (a branch weight is a sum of pdf masses w / count, and whether 2/3 + 4/3 reaches 2
    should not depend on the order of the additions), and more than nothing."""
    return max(min_weight_leaf * (1.0 - 1e-9), 1e-12)


UDT_SCAN_SIGNATURE = types.Tuple((f8, f8, i8))(IMPURITY_TYPE, F1, F1, F2C, F1, F1, f8, f8, f8)


@jit(UDT_SCAN_SIGNATURE)
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
        least_weight = branch_weight_floor(min_weight_leaf)
        if left_weight < least_weight or right_weight < least_weight:
            continue
        admissible_drops[n_admissible] = drop
        admissible_points[n_admissible] = points[j - 1]
        n_admissible += 1
    chosen, best_drop = leftmost_of_best(admissible_drops, admissible_points, n_admissible)
    best_threshold = admissible_points[chosen] if chosen >= 0 else 0.0
    return best_drop, best_threshold, evaluations


#: Intervals where more classes than this move are searched in full (the bound would
#: evaluate 2^classes corners).
MAX_BOUND_CLASSES = 6
#: End-point sampling: every this many end points one is evaluated first; the blocks
#: between them are bounded as a whole before their own end points are evaluated.
SAMPLE_EVERY = 16
#: Inside an interval, candidates are bounded (and skipped) in runs of this many.
SUB_RUN = 16


@jit(types.Tuple((i8, i8))(f8, f8, F1, f8, f8))
def surviving_range(x, sigma, points, lower, upper):
    """The first and last index k of the pdf points x + sigma * points[k] inside the node's
    box (lower, upper] (last < first: none). Positions are computed exactly as the plain
    search computes them, and are non-decreasing in k, so both ends are binary searches."""
    s = points.shape[0]
    low, high = 0, s
    while low < high:  # first k with position > lower
        middle = (low + high) >> 1
        if x + sigma * points[middle] > lower:
            high = middle
        else:
            low = middle + 1
    first = low
    low, high = first, s
    while low < high:  # first k with position > upper
        middle = (low + high) >> 1
        if x + sigma * points[middle] > upper:
            high = middle
        else:
            low = middle + 1
    return first, low - 1


@jit(types.boolean(IMPURITY_TYPE, F1, F1, f8, f8, F1, F1, f8, F1, I1))
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
    corners of the box (W = the sum of the class sums: one-hot evidence). For a concave
    weighted impurity no point of the box is lower, so no threshold inside can do better
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


EVALUATE_SIGNATURE = types.Tuple((F1, F1, F1, i8, f8))(
    IMPURITY_TYPE, F1, F1, f8, f8, F1, f8, F1, f8, f8, F1, F1, F1, i8
)


@jit(EVALUATE_SIGNATURE)
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


UDT_PRUNED_SIGNATURE = types.Tuple((f8, f8, f8, f8, i8))(
    IMPURITY_TYPE, F1, F1, F1, F2C, f8, F1, f8, f8, f8, f8, f8
)


@jit(UDT_PRUNED_SIGNATURE)
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
    concave criterion and one-hot evidence) cannot beat the best so far, or when every
    candidate in them leaves one side lighter than ``min_weight_leaf``; what is left is
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


UDT_PRUNED_NODE_SIGNATURE = types.Tuple((f8, i8, f8, f8, i8))(
    IMPURITY_TYPE, F1, F2C, F1, F2C, F1, I1, F1, F1, F1, f8, f8
)


@jit(UDT_PRUNED_NODE_SIGNATURE)
def udt_pruned_node(
    impurity,
    params,
    X,
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
    """:func:`udt_pruned_scan` over ``features`` of a node's rows (X: the node's rows), in
    order, each feature's search pruned by the best of the features before it. Returns
    (drop scaled by the known fraction, feature (-1: none), threshold, share of the known
    weight on the left, candidates evaluated); the first feature within TIE of the best
    drop wins, as in the plain search."""
    m = features.shape[0]
    feature_drops = np.full(m, -np.inf)
    feature_thresholds = np.zeros(m)
    feature_shares = np.full(m, 0.5)
    best_drop = -np.inf
    evaluations = 0
    for c in range(m):
        f = features[c]
        x = np.ascontiguousarray(X[:, f])
        drop, threshold, known_weight, left_weight, count = udt_pruned_scan(
            impurity,
            params,
            x,
            weights,
            evidence,
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


GAUSSIAN, RAMP, UDT = 0, 1, 2


@jit(f8(F1, f8))
def points_below(standard_points, z):
    """Fraction of the (sorted) standard pdf points <= z."""
    return np.searchsorted(standard_points, z, side="right") / standard_points.shape[0]


@jit(f8(i8, f8, f8, f8, f8, f8, f8, f8, F1))
def left_gate(mode, x, threshold, sigma, lower, upper, z_minus, z_plus, standard_points):
    """Probability that a sample with value x takes the left branch of ``x <= threshold``."""
    if mode == GAUSSIAN:
        if sigma <= 0.0:
            return 1.0 if x <= threshold else 0.0
        return normal_cdf((threshold - x) / sigma)
    if mode == RAMP:
        # Differences of halves: exactly half the differences, which for values near the
        # float limit would overflow to inf (and inf / inf to NaN).
        eps = 1e-3
        if x <= z_minus:
            return 1.0
        if x <= threshold:
            return 1.0 - (x / 2 - z_minus / 2) / (2.0 * (threshold / 2 - z_minus / 2 + eps / 2))
        if x <= z_plus:
            return 0.5 - (x / 2 - threshold / 2) / (2.0 * (z_plus / 2 - threshold / 2 + eps / 2))
        return 0.0
    # UDT: the share of the sample's pdf inside the node's box that lies left of threshold
    if sigma <= 0.0:
        return 1.0 if x <= threshold else 0.0
    below_upper = points_below(standard_points, (upper - x) / sigma) if upper < np.inf else 1.0
    below_lower = points_below(standard_points, (lower - x) / sigma) if lower > -np.inf else 0.0
    inside = below_upper - below_lower
    if inside <= 0.0:
        return 0.5
    return (points_below(standard_points, (threshold - x) / sigma) - below_lower) / inside


I2 = types.int32[:, ::1]

MIXTURE_SIGNATURE = F2C(
    types.Array(f8, 2, "A"),
    I1,
    I1,
    F1,
    I1,
    F1,
    I1,
    I2,
    F2C,
    i8,
    F1,
    F1,
    F1,
    F1,
    F1,
    F1,
    i8,
)


@jit(MIXTURE_SIGNATURE, parallel=True)
def gated_mixture(
    X,
    child_start,
    child_ids,
    child_shares,
    feature,
    threshold,
    hard_column,
    hard_branch,
    value,
    mode,
    sigma,
    lower,
    upper,
    z_minus,
    z_plus,
    standard_points,
    stack_size,
):
    """P(c | x) = sum over leaves of value[leaf, c] times the product of the gates on the
    path. A threshold node (``hard_column[node] < 0``) gates: first child g, second 1 - g,
    and a missing value's gate is the node's training share (C4.5). Any other question is
    answered hard: ``hard_branch[i, hard_column[node]]`` is the branch row i takes (-1: it
    cannot answer, and goes down every branch by the training shares). Branches whose path
    probability is 0 are skipped."""
    n = X.shape[0]
    n_classes = value.shape[1]
    out = np.zeros((n, n_classes))
    for i in prange(n):
        stack_node = np.empty(stack_size, dtype=np.int64)
        stack_p = np.empty(stack_size)
        stack_node[0] = 0
        stack_p[0] = 1.0
        top = 1
        while top > 0:
            top -= 1
            node = stack_node[top]
            p = stack_p[top]
            first = child_start[node]
            count = child_start[node + 1] - first
            if count == 0:
                for c in range(n_classes):
                    out[i, c] += p * value[node, c]
                continue
            column = hard_column[node]
            if column >= 0:
                b = hard_branch[i, column]
                if b >= 0:
                    stack_node[top] = child_ids[first + b]
                    stack_p[top] = p
                    top += 1
                    continue
                for j in range(count - 1, -1, -1):
                    q = p * child_shares[first + j]
                    if q > 0.0:
                        stack_node[top] = child_ids[first + j]
                        stack_p[top] = q
                        top += 1
                continue
            f = feature[node]
            if np.isnan(X[i, f]):
                g = child_shares[first]
            else:
                g = left_gate(
                    mode,
                    X[i, f],
                    threshold[node],
                    sigma[f],
                    lower[node],
                    upper[node],
                    z_minus[node],
                    z_plus[node],
                    standard_points,
                )
            if p * (1.0 - g) > 0.0:
                stack_node[top] = child_ids[first + 1]
                stack_p[top] = p * (1.0 - g)
                top += 1
            if p * g > 0.0:
                stack_node[top] = child_ids[first]
                stack_p[top] = p * g
                top += 1
    return out


@jit(i8(F1, F1, F1, F1, F1))
def error_curve_sorted(x, left_errors, right_errors, values, errors):
    """Quinlan's E(v) over the distinct values v of x (sorted ascending): errors of the
    left subtree on x <= v plus errors of the right subtree on x > v. Writes v and E(v) to
    ``values`` and ``errors``; returns how many distinct values there are. The sums run
    in order, as numpy's cumulative sums do."""
    total_right = 0.0
    for j in range(x.shape[0]):
        total_right += right_errors[j]
    left, right = 0.0, 0.0
    k = 0
    j = 0
    while j < x.shape[0]:
        v = x[j]
        while j < x.shape[0] and x[j] == v:
            left += left_errors[j]
            right += right_errors[j]
            j += 1
        values[k] = v
        errors[k] = left + (total_right - right)
        k += 1
    return k


@jit(types.UniTuple(f8, 3)(F1, F1, f8, f8))
def ramp_bounds(values, errors, threshold, total_weight):
    """(Z-, Z+, Limit) from an error curve: Limit = E0 + sqrt((E0 + 0.5)(N - E0 + 0.5) /
    (N + 1)) with E0 = E(Z); Z- where E first falls to Limit coming from below Z, Z+ where
    it last rises past Limit above Z, interpolated linearly (default: the value range)."""
    n = values.shape[0]
    at = -1  # the largest value <= Z
    while at + 1 < n and values[at + 1] <= threshold:
        at += 1
    e0 = errors[max(at, 0)]
    limit = e0 + np.sqrt((e0 + 0.5) * (total_weight - e0 + 0.5) / (total_weight + 1))
    z_minus = values[0]
    for j in range(0, max(at, 0) + 1):
        if errors[j] <= limit:
            if j > 0:
                a, b = values[j - 1], values[j]
                z_minus = a + (b - a) * (errors[j - 1] - limit) / (errors[j - 1] - errors[j])
            break
    z_plus = values[n - 1]
    for j in range(n - 1, at, -1):
        if errors[j] <= limit:
            if j < n - 1:
                a, b = values[j], values[j + 1]
                z_plus = a + (b - a) * (limit - errors[j]) / (errors[j + 1] - errors[j])
            break
    return z_minus, z_plus, limit


@jit(types.void(F1, F1, F1, I1, I1, F1, F1, F1, F1))
def ramps_of_nodes(x, left_errors, right_errors, starts, node, threshold, total, z_minus, z_plus):
    """Z- and Z+ of every node from its known rows: segment s (rows starts[s] to
    starts[s + 1], sorted by x) belongs to ``node[s]``; a node with fewer than two known rows
    keeps Z- = Z+ = Z (a hard test)."""
    values = np.empty(x.shape[0])
    errors = np.empty(x.shape[0])
    for s in range(node.shape[0]):
        a, b = starts[s], starts[s + 1]
        if b - a < 2:
            continue
        k = error_curve_sorted(
            x[a:b], left_errors[a:b], right_errors[a:b], values[: b - a], errors[: b - a]
        )
        t = node[s]
        z_minus[t], z_plus[t], _ = ramp_bounds(values[:k], errors[:k], threshold[t], total[t])
