"""numba kernels of the uncertain-measurement components (Nunes et al.; Tsang et al.)."""

import math

import numpy as np
from numba import types

from treekit_core.kernels import IMPURITY_TYPE, jit

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


#: Intervals where more classes than this move are searched in full (the bound would
#: evaluate 2^classes corners).
MAX_BOUND_CLASSES = 6
#: End-point sampling: every this many end points one is evaluated first; the blocks
#: between them are bounded as a whole before their own end points are evaluated.
SAMPLE_EVERY = 16
#: Inside an interval, candidates are bounded (and skipped) in runs of this many.
SUB_RUN = 16


@jit(i8(f8, f8, F1, i8, i8, f8))
def first_point_above(x, sigma, points, low, high, bound):
    """The first k in [low, high) whose pdf point x + sigma * points[k] lies above
    ``bound`` (high when none). Positions are computed exactly as the plain search
    computes them, and are non-decreasing in k: a binary search."""
    while low < high:
        middle = (low + high) >> 1
        if x + sigma * points[middle] > bound:
            high = middle
        else:
            low = middle + 1
    return low


@jit(types.Tuple((i8, i8))(f8, f8, F1, f8, f8))
def surviving_range(x, sigma, points, lower, upper):
    """The first and last index k of the pdf points x + sigma * points[k] inside the node's
    box (lower, upper] (last < first: none)."""
    s = points.shape[0]
    first = first_point_above(x, sigma, points, 0, s, lower)
    return first, first_point_above(x, sigma, points, first, s, upper) - 1


F2A = types.Array(types.float64, 2, "A")
UDT_SPLIT_SIGNATURE = types.Tuple((I1, F1, I1, F1))(F2A, i8, I1, F1, f8, F1, f8, f8, f8, f8)


@jit(UDT_SPLIT_SIGNATURE)
def udt_split_rows(X, feature, rows, row_weights, sigma, points, lower, upper, threshold, missing):
    """A node's rows split at ``threshold`` of ``feature``: (left rows, their weights, right
    rows, their weights). A row goes left with the share of its pdf points inside the node's
    box (lower, upper] that lie at or left of the threshold (two binary searches; positions
    computed as the split search computes them), right with the rest; a value with no point
    in the box (or sigma 0) goes wholly to its side; a missing one goes left with the share
    ``missing``. Rows whose share of a side is 0 are left out of it."""
    n = rows.shape[0]
    shares = np.empty(n)
    n_left = n_right = 0
    for r in range(n):
        value = X[rows[r], feature]
        if np.isnan(value):
            share = missing
        else:
            first, last = 0, -1
            if sigma > 0.0:
                first, last = surviving_range(value, sigma, points, lower, upper)
            if last < first:
                share = 1.0 if value <= threshold else 0.0
            else:
                past = first_point_above(value, sigma, points, first, last + 1, threshold)
                share = (past - first) / (last - first + 1)
        shares[r] = share
        n_left += row_weights[r] * share > 0.0
        n_right += row_weights[r] * (1.0 - share) > 0.0
    left_rows, left_weights = np.empty(n_left, dtype=np.int64), np.empty(n_left)
    right_rows, right_weights = np.empty(n_right, dtype=np.int64), np.empty(n_right)
    a = b = 0
    for r in range(n):
        weight = row_weights[r] * shares[r]
        if weight > 0.0:
            left_rows[a], left_weights[a] = rows[r], weight
            a += 1
        weight = row_weights[r] * (1.0 - shares[r])
        if weight > 0.0:
            right_rows[b], right_weights[b] = rows[r], weight
            b += 1
    return left_rows, left_weights, right_rows, right_weights


@jit(i8(F1, F1, F2C, F1, F1, F2C))
def tuples_by_value(x, weights, evidence, values, group_weights, group_evidence):
    """Merges the tuples with the same known value of x into one, in increasing order of
    value: its weight the sum of theirs and its evidence their weighted mean (the class
    sums over its weight). Tuples with the same value have their pdf points at the same
    positions, so a sweep over the merged tuples finds the same class sums at every
    candidate with a fraction of the work on data with repeated values (integer-valued
    measurements). Fills the first entries of the three output arrays; returns how many."""
    n_classes = evidence.shape[1]
    order = np.argsort(x, kind="mergesort")  # NaN last
    n_groups = 0
    for position in range(x.shape[0]):
        j = order[position]
        if np.isnan(x[j]):
            break
        if n_groups == 0 or x[j] != values[n_groups - 1]:
            values[n_groups] = x[j]
            group_weights[n_groups] = 0.0
            for k in range(n_classes):
                group_evidence[n_groups, k] = 0.0
            n_groups += 1
        g = n_groups - 1
        group_weights[g] += weights[j]
        for k in range(n_classes):
            group_evidence[g, k] += weights[j] * evidence[j, k]
    for g in range(n_groups):
        if group_weights[g] > 0.0:
            for k in range(n_classes):
                group_evidence[g, k] /= group_weights[g]
    return n_groups


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
    share = (points_below(standard_points, (threshold - x) / sigma) - below_lower) / inside
    # a threshold outside its node's box (a crafted file) would give a share outside [0, 1]
    # and rows that are no distribution: the gate stays a probability whatever it is given
    return min(max(share, 0.0), 1.0)


I2 = types.int32[:, ::1]
#: A tree's node ids and features, as the tree holds them (int32)
NODE_IDS = types.int32[::1]

MIXTURE_SIGNATURE = types.void(
    types.Array(f8, 2, "A"),
    NODE_IDS,
    NODE_IDS,
    F1,
    NODE_IDS,
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
    F2C,
    i8,
    i8,
)


@jit(MIXTURE_SIGNATURE)
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
    out,
    start,
    stop,
):
    """Into ``out`` (zeros), for rows start..stop-1: P(c | x) = sum over leaves of
    value[leaf, c] times the product of the gates on the path. A threshold node
    (``hard_column[node] < 0``) gates: first child g, second 1 - g, and a missing value's
    gate is the node's training share (C4.5). Any other question is
    answered hard: ``hard_branch[i, hard_column[node]]`` is the branch row i takes (-1: it
    cannot answer, and goes down every branch by the training shares). Branches whose path
    probability is 0 are skipped."""
    n_classes = value.shape[1]
    stack_node = np.empty(stack_size, dtype=np.int64)
    stack_p = np.empty(stack_size)
    for i in range(start, stop):
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
    # The ramp brackets its threshold: where every known row lies on one side of Z (soft
    # search puts Z between values, soft propagation sends rows that the hard test would
    # not), the defaults (smallest, largest value) would put both ends on that side, and a
    # row on Z's other side would take the wrong branch for sure.
    return min(z_minus, threshold), max(z_plus, threshold), limit


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
