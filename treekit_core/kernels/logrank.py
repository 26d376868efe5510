"""The split search for survival trees: the log-rank statistic of every cut of a node's rows
sorted by a feature (LeBlanc and Crowley; scikit-survival's ``LogrankCriterion``).

For a left child L of a node whose distinct follow-up times are t_0 < t_1 < ..., with n_k
the node's weight at risk at t_k and d_k its events there, and n_Lk, d_Lk the same in L,

    U = sum_k (d_Lk - d_k n_Lk / n_k),   V = sum_k n_Lk (n_k - n_Lk) c_k,
    c_k = d_k (n_k - d_k) / ((n_k - 1) n_k^2)  (0 where n_k <= 1),

and the cut scores |U| / sqrt(V) (no cut where V = 0). scikit-survival sums over every
time for every cut: O(n T) per cut. Here rows enter L one at a time in feature order, and
each term is kept up to date in O(log T): with A, B, C the prefix sums of d_k / n_k,
c_k n_k and c_k over the times, a row of weight w, event indicator e and time rank r adds
w (e - A(r)) to U and w B(r) to V1 = sum c_k n_k n_Lk, and 2 w Q(r) + w^2 C(r) to
V2 = sum c_k n_Lk^2, where Q(r) = sum_{k <= r} c_k n_Lk comes from two Fenwick trees over
the ranks of the rows in L (their weights, and their weights times C at their rank); V is
V1 - V2. A second pass from the right gives the right child's terms, and each cut reads
the terms of its lighter side, whose V has no cancellation to lose digits to (V is the
same for both sides, U changes sign).

Delayed entry (left truncation, issue 62): a row entering at e is at risk at the times
t_k with e < t_k <= its time, the ranks er..r (er: the first rank past its entry). Its
terms are then differences of the prefix sums, w (e - (A(r) - A(er - 1))), w (B(r) -
B(er - 1)), and Q over [er, r] is P(r) - P(er - 1) with P(x) = sum_{k <= x} c_k n_Lk
= sum_j w_j (C(min(x, r_j)) - C(min(x, er_j - 1))), each part from two Fenwick trees (by
the rows' time ranks, and by their entry ranks). Rows entering at 0 (er = 0) add exact
zeros: without entries the arithmetic is the one above, bit for bit.
"""

import numpy as np
from numba import types

from treekit_core.kernels.compiling import F1, F2A, I1, f8, generic_jit, i8, jit
from treekit_core.kernels.growth import admissible_cut, cut_threshold, gather_ranked_feature
from treekit_core.numerics import FEATURE_THRESHOLD

#: V below this share of V1 is rounding: every at-risk row at every event time is on one
#: side, where scikit-survival's sum of non-negative terms is exactly 0 (no cut).
CANCELLED = 1e-12
#: Cuts whose incremental statistics are within this share of the best are scored again
#: by scikit-survival's sums (:func:`summed_statistic`): cuts that tie exactly (rows that
#: change no term, censored before the node's first event, say) or within rounding get
#: its choice, where the incremental terms (from either side) differ in the last bits.
TIE = 1e-9


@generic_jit
def fenwick_add(tree, size, rank, value):
    position = rank + 1
    while position <= size:
        tree[position] += value
        position += position & -position


@generic_jit
def fenwick_prefix(tree, rank):
    """The sum of the values at ranks 0..rank."""
    total = 0.0
    position = rank + 1
    while position > 0:
        total += tree[position]
        position -= position & -position
    return total


@generic_jit
def cause_ties(ranks, codes, weights, count, size, n_codes, buckets, dead_sq):
    """``dead_sq[k]``: the sum over the causes of the squared weight of their events at
    time rank k (rows with ``codes`` 1..n_codes; 0 censored), what the composite
    variance of several causes reads (Ishwaran et al.'s log-rank for competing risks)."""
    for k in range(size):
        for c in range(n_codes + 1):
            buckets[k, c] = 0.0
    for j in range(count):
        code = int(codes[j])
        if code > 0:
            buckets[ranks[j], code] += weights[j]
    for k in range(size):
        total = 0.0
        for c in range(1, n_codes + 1):
            total += buckets[k, c] * buckets[k, c]
        dead_sq[k] = total


@generic_jit
def time_terms(
    ranks,
    entry_ranks,
    weights,
    events,
    count,
    size,
    at_risk,
    dead,
    late,
    a_sum,
    b_sum,
    c_sum,
    composite,
    dead_sq,
):
    """The node's weight at risk and events at each of its ``size`` time ranks for the
    ``count`` rows given, and the prefix sums ``a_sum[k]`` = sum_{j <= k} d_j / n_j,
    ``b_sum`` of c_j n_j, ``c_sum`` of c_j. A row is at risk from its entry rank on.
    ``composite`` (several causes): c_k sums the causes' own variance terms,
    (n d - sum_c d_c^2) / ((n - 1) n^2), ``dead_sq`` holding sum_c d_c^2."""
    for k in range(size):
        at_risk[k] = 0.0
        dead[k] = 0.0
        late[k] = 0.0
    for j in range(count):
        at_risk[ranks[j]] += weights[j]
        if entry_ranks[j] > 0:
            late[entry_ranks[j] - 1] += weights[j]
        if events[j]:
            dead[ranks[j]] += weights[j]
    for k in range(size - 2, -1, -1):  # weight at risk: every row whose time is >= t_k
        at_risk[k] += at_risk[k + 1]
        late[k] += late[k + 1]
    for k in range(size):  # less the rows not yet entered at t_k
        at_risk[k] -= late[k]
    a, b, c = 0.0, 0.0, 0.0
    for k in range(size):
        n = at_risk[k]
        d = dead[k]
        if n > 0.0:
            a += d / n
        if n > 1.0:
            if composite:
                term = (n * d - dead_sq[k]) / ((n - 1.0) * n * n)
            else:
                term = d * (n - d) / ((n - 1.0) * n * n)
            c += term
            b += term * n
        a_sum[k], b_sum[k], c_sum[k] = a, b, c


@generic_jit
def side_prefix(x, tree_w, tree_wc, entry_w, entry_wc, side_weight, entered_weight, c_sum):
    """P(x) = sum_{k <= x} c_k n_Lk of the rows in the side (the module docstring); 0 for
    x < 0."""
    if x < 0:
        return 0.0
    p = fenwick_prefix(tree_wc, x) + c_sum[x] * (side_weight - fenwick_prefix(tree_w, x))
    if entered_weight > 0.0:  # rows entering late: less what precedes their entry
        p -= fenwick_prefix(entry_wc, x) + c_sum[x] * (entered_weight - fenwick_prefix(entry_w, x))
    return p


@generic_jit
def one_side(
    ranks,
    entry_ranks,
    weights,
    events,
    count,
    forward,
    size,
    a_sum,
    b_sum,
    c_sum,
    tree_w,
    tree_wc,
    entry_w,
    entry_wc,
    out,
):
    """For each prefix (``forward``) or suffix of the rows in feature order: U, V1 and V2
    of that side, into ``out[k, 0:3]`` (k: the last row the side holds)."""
    for j in range(size + 1):
        tree_w[j] = 0.0
        tree_wc[j] = 0.0
        entry_w[j] = 0.0
        entry_wc[j] = 0.0
    u, v1, v2, side_weight, entered_weight = 0.0, 0.0, 0.0, 0.0, 0.0
    for step in range(count):
        k = step if forward else count - 1 - step
        r = ranks[k]
        before = entry_ranks[k] - 1  # the last rank before the row enters (-1: none)
        w = weights[k]
        q = side_prefix(r, tree_w, tree_wc, entry_w, entry_wc, side_weight, entered_weight, c_sum)
        if before >= 0:
            q -= side_prefix(
                before, tree_w, tree_wc, entry_w, entry_wc, side_weight, entered_weight, c_sum
            )
            u += w * ((1.0 if events[k] else 0.0) - (a_sum[r] - a_sum[before]))
            v1 += w * (b_sum[r] - b_sum[before])
            v2 += 2.0 * w * q + w * w * (c_sum[r] - c_sum[before])
            fenwick_add(entry_w, size, before, w)
            fenwick_add(entry_wc, size, before, w * c_sum[before])
            entered_weight += w
        else:
            u += w * ((1.0 if events[k] else 0.0) - a_sum[r])
            v1 += w * b_sum[r]
            v2 += 2.0 * w * q + w * w * c_sum[r]
        fenwick_add(tree_w, size, r, w)
        fenwick_add(tree_wc, size, r, w * c_sum[r])
        side_weight += w
        out[k, 0], out[k, 1], out[k, 2] = u, v1, v2


@generic_jit
def logrank_statistic(u, v1, v2):
    """|U| / sqrt(V), or -inf where V is 0 (up to rounding)."""
    v = v1 - v2
    if not v > CANCELLED * abs(v1):
        return -np.inf
    return abs(u) / np.sqrt(v)


@generic_jit
def summed_statistic(
    ranks,
    entry_ranks,
    weights,
    events,
    n_left,
    left_weight,
    size,
    at_risk,
    dead,
    events_left,
    at_time_left,
    entering_left,
    composite,
    dead_sq,
):
    """The statistic of the cut whose left child holds the first ``n_left`` rows, summed
    over the times as scikit-survival's ``LogrankCriterion.proxy_impurity_improvement``
    sums it (the same operations in the same order; the times where the node has no row
    add exact zeros there): O(rows + times), for the few cuts that tie. A row entering
    late joins the left side's weight at risk at its entry rank."""
    for k in range(size):
        events_left[k] = 0.0
        at_time_left[k] = 0.0
        entering_left[k] = 0.0
    at_risk_left = left_weight
    for j in range(n_left):
        at_time_left[ranks[j]] += weights[j]
        if entry_ranks[j] > 0:
            entering_left[entry_ranks[j]] += weights[j]
            at_risk_left -= weights[j]
        if events[j]:
            events_left[ranks[j]] += weights[j]
    numer = 0.0
    denom = 0.0
    for k in range(size):
        if entering_left[k] > 0.0:
            at_risk_left += entering_left[k]
        total = at_risk[k]
        if total == 0.0:
            at_risk_left -= at_time_left[k]
            continue
        ratio = at_risk_left / total
        numer += events_left[k] - dead[k] * ratio
        if total > 1.0:
            if composite:  # the causes' variances summed
                v = (total * dead[k] - dead_sq[k]) / (total - 1.0)
            else:
                v = (total - dead[k]) / (total - 1.0) * dead[k]
            denom += ratio * (1.0 - ratio) * v
        at_risk_left -= at_time_left[k]
    if denom == 0.0:
        return -np.inf
    return abs(numer / np.sqrt(denom))


@generic_jit
def time_ranks(time, rows):
    """(the node's times, its rows in time order (stable), each row's rank among the
    node's distinct times, how many distinct times) of the training ``rows``."""
    n = rows.shape[0]
    node_time = np.empty(n)
    for j in range(n):
        node_time[j] = time[rows[j]]
    by_time = np.argsort(node_time, kind="mergesort")
    rank_of = np.empty(n, dtype=np.int64)
    size = 0
    for j in range(n):
        if j > 0 and node_time[by_time[j]] != node_time[by_time[j - 1]]:
            size += 1
        rank_of[by_time[j]] = size
    return node_time, by_time, rank_of, size + 1


NODE_SIGNATURE = types.Tuple((i8, f8, f8, f8))(F1, F1, F1, F2A, I1, F1, I1, i8, f8)


@jit(NODE_SIGNATURE)
def best_logrank_split_of_node(
    event, time, entry, X, rows, row_weights, features, min_samples_leaf, min_weight_leaf
):
    """Best (feature, threshold, statistic, missing share) over ``features`` for the rows
    of a node: the cut with the largest log-rank statistic, the first feature and the
    leftmost cut on ties (near ties settled by scikit-survival's sums). A feature with
    missing values is judged on its known rows (their own risk sets), its statistic scaled
    by their weight share (C4.5); the missing share is the known weight sent left. Feature
    -1 when no cut is admissible. ``event`` (1/0, or a cause code 0..K: then the
    composite statistic of every cause, sum_c U_c / sqrt(sum_c V_c), Ishwaran et al.'s
    log-rank rule for competing risks, randomForestSRC's ``logrank``), ``time`` and
    ``entry`` (delayed entry, 0: from the start) are per training row; a row is at risk at
    the node's times in (entry, time]."""
    n = rows.shape[0]
    node_time, by_time, rank_of, size = time_ranks(time, rows)
    distinct = np.empty(size)
    for j in range(n):
        distinct[rank_of[by_time[j]]] = node_time[by_time[j]]
    n_codes = 0
    for j in range(n):
        n_codes = max(n_codes, int(event[rows[j]]))
    composite = n_codes > 1
    codes = np.empty(n)
    buckets = np.empty((size if composite else 0, n_codes + 1))
    dead_sq = np.zeros(size)
    entry_rank_of = np.zeros(n, dtype=np.int64)
    for j in range(n):
        e = entry[rows[j]]
        if e > 0.0:  # the first of the node's times past the entry
            entry_rank_of[j] = np.searchsorted(distinct, e, side="right")
    parent_weight = 0.0
    for j in range(n):
        parent_weight += row_weights[j]
    unsorted = np.empty(n)
    values = np.empty(n)
    weights = np.empty(n)
    ranks = np.empty(n, dtype=np.int64)
    entry_ranks = np.empty(n, dtype=np.int64)
    events = np.empty(n, dtype=np.bool_)
    at_risk = np.empty(size)
    a_sum = np.empty(size)
    b_sum = np.empty(size)
    c_sum = np.empty(size)
    tree_w = np.empty(size + 1)
    tree_wc = np.empty(size + 1)
    entry_w = np.empty(size + 1)
    entry_wc = np.empty(size + 1)
    late = np.empty(size)
    entering_left = np.empty(size)
    left = np.empty((n, 3))
    right = np.empty((n, 3))
    scores = np.empty(n)
    cumulative = np.empty(n)
    dead = np.empty(size)
    events_left = np.empty(size)
    at_time_left = np.empty(size)
    node_terms = False
    best_feature = -1
    best_threshold = 0.0
    best_score = -np.inf
    best_share = 0.5
    for f in features:
        known, known_weight, order = gather_ranked_feature(
            X, rows, row_weights, f, rank_of, unsorted, values, weights, ranks
        )
        for j in range(n):
            codes[j] = event[rows[order[j]]]
            events[j] = codes[j] != 0.0
            entry_ranks[j] = entry_rank_of[order[j]]
        if known < 2 or known_weight <= 0.0:
            continue
        if values[known - 1] <= values[0] + FEATURE_THRESHOLD:
            continue
        if known < n or not node_terms:  # the risk sets of the rows judged
            if composite:
                cause_ties(ranks, codes, weights, known, size, n_codes, buckets, dead_sq)
            time_terms(
                ranks,
                entry_ranks,
                weights,
                events,
                known,
                size,
                at_risk,
                dead,
                late,
                a_sum,
                b_sum,
                c_sum,
                composite,
                dead_sq,
            )
            node_terms = known == n
        for forward in (True, False):
            one_side(
                ranks,
                entry_ranks,
                weights,
                events,
                known,
                forward,
                size,
                a_sum,
                b_sum,
                c_sum,
                tree_w,
                tree_wc,
                entry_w,
                entry_wc,
                left if forward else right,
            )
        # every admissible cut's statistic from the incremental terms
        top = -np.inf
        left_weight = 0.0
        for j in range(known - 1):
            scores[j] = -np.inf
            left_weight += weights[j]
            cumulative[j] = left_weight
            right_weight = known_weight - left_weight
            if not admissible_cut(
                values, j, known, left_weight, right_weight, min_samples_leaf, min_weight_leaf
            ):
                continue
            if left_weight <= right_weight:
                scores[j] = logrank_statistic(left[j, 0], left[j, 1], left[j, 2])
            else:
                scores[j] = logrank_statistic(right[j + 1, 0], right[j + 1, 1], right[j + 1, 2])
            if scores[j] > top:
                top = scores[j]
        if top == -np.inf:
            continue
        # the cuts within TIE of the best, scored again as scikit-survival sums (the first
        # strictly best of those wins): its choice wherever its own sums tell cuts apart
        feature_score = -np.inf
        position = -1
        for j in range(known - 1):
            if scores[j] >= top - TIE * abs(top):
                exact = summed_statistic(
                    ranks,
                    entry_ranks,
                    weights,
                    events,
                    j + 1,
                    cumulative[j],
                    size,
                    at_risk,
                    dead,
                    events_left,
                    at_time_left,
                    entering_left,
                    composite,
                    dead_sq,
                )
                if exact > feature_score:
                    feature_score, position = exact, j
        if position < 0:
            continue
        threshold = cut_threshold(values, position)
        if known < n:
            feature_score *= known_weight / parent_weight
        if feature_score > best_score:
            best_score = feature_score
            best_feature = f
            best_threshold = threshold
            best_share = cumulative[position] / known_weight
    return best_feature, best_threshold, best_score, best_share
