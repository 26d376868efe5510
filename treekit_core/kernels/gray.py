"""The split search of Gray's test (competing risks, issue 62): the two-sample test that a
cause's cumulative incidence is the same in both children (Gray 1988; cmprsk's ``crstm``
with rho = 0, one stratum), randomForestSRC's ``logrankCR`` rule scored by Gray's own
statistic.

Each group's subdistribution risk set keeps the rows that ended in another cause,
weighted by the group's censoring survival: a group's statistic is no sum over its rows,
so no running sums score every cut. Each candidate cut is scored from the node's rows in
time order, O(rows); the candidates are the admissible cuts of each feature, or, beyond
``n_cuts`` of them, ``n_cuts`` of them spread evenly over the sorted rows
(randomForestSRC's ``nsplit``, deterministic here). Weights count as frequencies (a row of
weight 3 is three rows: what a bootstrap's counts mean), cmprsk's ties corrections with
them.
"""

import numpy as np
from numba import types

from treekit_core.kernels.compiling import F1, F2A, I1, f8, generic_jit, i8, jit
from treekit_core.kernels.growth import admissible_cut, cut_threshold, gather_ranked_feature
from treekit_core.kernels.logrank import time_ranks
from treekit_core.numerics import FEATURE_THRESHOLD


@generic_jit
def gray_two_sample(time, kind, group, weight, count):
    """Gray's chi-square (1 df) of the ``count`` rows in time order (``time`` rising),
    ``kind`` 1 the cause, 2 another cause, 0 censored, ``group`` 0/1: cmprsk's ``crstm``
    for two groups, step for step, with weights as frequencies. -inf where the variance
    is not positive or a group is empty."""
    rs = np.zeros(2)
    for j in range(count):
        rs[group[j]] += weight[j]
    if rs[0] <= 0.0 or rs[1] <= 0.0:
        return -np.inf
    # (every division below is guarded: numba raises on a division by zero, where
    # cmprsk's Fortran gives NaN; such a cut gets no score)
    f1m = np.zeros(2)
    f1 = np.zeros(2)
    skmm = np.ones(2)
    skm = np.ones(2)
    v3 = np.zeros(2)
    v2 = np.zeros(2)
    c = np.zeros((2, 2))
    a = np.zeros((2, 2))
    d = np.zeros((3, 2))
    s = 0.0
    v = 0.0
    fm = 0.0
    f = 0.0
    start = 0
    while start < count:
        end = start + 1
        while end < count and time[end] == time[start]:
            end += 1
        for m in range(3):
            d[m, 0] = 0.0
            d[m, 1] = 0.0
        for j in range(start, end):
            d[kind[j], group[j]] += weight[j]
        nd1 = d[1, 0] + d[1, 1]
        nd2 = d[2, 0] + d[2, 1]
        if nd1 > 0.0 or nd2 > 0.0:
            if fm >= 1.0:  # the cause's incidence is complete: no test (cmprsk: NaN)
                return -np.inf
            tr = 0.0
            tq = 0.0
            for i in range(2):
                if rs[i] > 0.0:
                    if skmm[i] <= 0.0:
                        return -np.inf
                    skm[i] = skmm[i] * (rs[i] - d[1, i] - d[2, i]) / rs[i]
                    f1[i] = f1m[i] + skmm[i] * d[1, i] / rs[i]
                    tr += rs[i] / skmm[i]
                    tq += rs[i] * (1.0 - f1m[i]) / skmm[i]
            f = fm + nd1 / tr
            for i in range(2):
                for j in range(2):
                    a[i, j] = 0.0
            for i in range(2):
                if rs[i] <= 0.0:
                    continue
                t1 = rs[i] / skmm[i]
                a[i, i] = t1 * (1.0 - t1 / tr)
                c[i, i] += a[i, i] * nd1 / (tr * (1.0 - fm))
                if i == 0 and rs[1] > 0.0:
                    a[0, 1] = -t1 * rs[1] / (skmm[1] * tr)
                    c[0, 1] += a[0, 1] * nd1 / (tr * (1.0 - fm))
            a[1, 0] = a[0, 1]
            c[1, 0] = c[0, 1]
            if rs[0] > 0.0:
                if tq <= 0.0:
                    return -np.inf
                s += d[1, 0] - nd1 * rs[0] * (1.0 - f1m[0]) / (skmm[0] * tq)
            if nd1 > 0.0:
                for k in range(2):
                    if rs[k] <= 0.0:
                        continue
                    t4 = 1.0 - (1.0 - f) / skm[k] if skm[k] > 0.0 else 1.0
                    t5 = 1.0
                    if nd1 > 1.0:
                        if tr * skmm[k] - 1.0 <= 0.0:  # fewer than two at risk: no variance
                            return -np.inf
                        t5 = 1.0 - (nd1 - 1.0) / (tr * skmm[k] - 1.0)
                    t3 = t5 * skmm[k] * nd1 / (tr * rs[k])
                    v3[k] += t4 * t4 * t3
                    t1 = a[0, k] - t4 * c[0, k]
                    v2[k] += t1 * t4 * t3
                    v += t1 * (a[0, k] - t4 * c[0, k]) * t3
            if nd2 > 0.0:
                for k in range(2):
                    if skm[k] <= 0.0 or d[2, k] <= 0.0:
                        continue
                    t4 = (1.0 - f) / skm[k]
                    t5 = 1.0
                    if d[2, k] > 1.0:
                        if rs[k] - 1.0 <= 0.0:
                            return -np.inf
                        t5 = 1.0 - (d[2, k] - 1.0) / (rs[k] - 1.0)
                    t3 = t5 * (skmm[k] * skmm[k] * d[2, k]) / (rs[k] * rs[k])
                    v3[k] += t4 * t4 * t3
                    t1 = t4 * c[0, k]
                    v2[k] -= t1 * t4 * t3
                    v += t1 * (t4 * c[0, k]) * t3
        if end >= count:
            break
        for j in range(start, end):
            rs[group[j]] -= weight[j]
        fm = f
        f1m[0], f1m[1] = f1[0], f1[1]
        skmm[0], skmm[1] = skm[0], skm[1]
        start = end
    for k in range(2):
        v += c[0, k] * c[0, k] * v3[k] + 2.0 * c[0, k] * v2[k]
    if not v > 0.0 or not np.isfinite(s):
        return -np.inf
    return s * s / v


GRAY_SIGNATURE = types.Tuple((i8, f8, f8, f8))(F1, F1, F1, F1, F2A, I1, F1, I1, i8, f8, i8)


@jit(GRAY_SIGNATURE)
def best_gray_split_of_node(
    cause_event,
    time,
    any_event,
    entry,
    X,
    rows,
    row_weights,
    features,
    min_samples_leaf,
    min_weight_leaf,
    n_cuts,
):
    """Best (feature, threshold, statistic, missing share) over ``features`` for the rows
    of a node by Gray's test of one cause: the cut of largest sqrt(chi-square), the first
    feature and the leftmost cut on ties; candidates as the module docstring says
    (``n_cuts`` 0: every admissible cut). A feature with missing values is judged on its
    known rows, its statistic scaled by their weight share (C4.5). Feature -1 when no cut
    scores; -2 when a row of the node entered late (``entry`` > 0: Gray's test has no
    delayed entry)."""
    n = rows.shape[0]
    for j in range(n):
        if entry[rows[j]] > 0.0:
            return -2, 0.0, -np.inf, 0.5
    node_time, by_time, rank_of, _ = time_ranks(time, rows)
    parent_weight = 0.0
    for j in range(n):
        parent_weight += row_weights[j]
    unsorted = np.empty(n)
    values = np.empty(n)
    weights = np.empty(n)
    ranks = np.empty(n, dtype=np.int64)
    position = np.empty(n, dtype=np.int64)  # node row -> place in feature order (or -1)
    sorted_time = np.empty(n)
    sorted_kind = np.empty(n, dtype=np.int64)
    sorted_group = np.empty(n, dtype=np.int64)
    sorted_weight = np.empty(n)
    cumulative = np.empty(n)
    best_feature, best_threshold, best_score, best_share = -1, 0.0, -np.inf, 0.5
    for f in features:
        known, known_weight, order = gather_ranked_feature(
            X, rows, row_weights, f, rank_of, unsorted, values, weights, ranks
        )
        if known < 2 or known_weight <= 0.0:
            continue
        if values[known - 1] <= values[0] + FEATURE_THRESHOLD:
            continue
        for j in range(n):
            position[j] = -1
        left_weight = 0.0
        for j in range(known):
            position[order[j]] = j
            left_weight += weights[j]
            cumulative[j] = left_weight
        admissible = 0
        for j in range(known - 1):
            if admissible_cut(
                values,
                j,
                known,
                cumulative[j],
                known_weight - cumulative[j],
                min_samples_leaf,
                min_weight_leaf,
            ):
                admissible += 1
        if admissible == 0:
            continue
        step = 1.0 if n_cuts <= 0 or admissible <= n_cuts else admissible / n_cuts
        feature_score, feature_position, seen, next_taken = -np.inf, -1, 0, 0.0
        for j in range(known - 1):
            if not admissible_cut(
                values,
                j,
                known,
                cumulative[j],
                known_weight - cumulative[j],
                min_samples_leaf,
                min_weight_leaf,
            ):
                continue
            seen += 1
            if seen - 1 < next_taken:
                continue
            next_taken += step
            # the known rows in time order, grouped by their side of this cut
            k = 0
            for t in range(n):
                row = by_time[t]
                place = position[row]
                if place < 0:
                    continue
                sorted_time[k] = node_time[row]
                event_row = rows[row]
                if cause_event[event_row] != 0.0:
                    sorted_kind[k] = 1
                elif any_event[event_row] != 0.0:
                    sorted_kind[k] = 2
                else:
                    sorted_kind[k] = 0
                sorted_group[k] = 0 if place <= j else 1
                sorted_weight[k] = weights[place]
                k += 1
            chi = gray_two_sample(sorted_time, sorted_kind, sorted_group, sorted_weight, k)
            if chi > 0.0 and np.sqrt(chi) > feature_score:
                feature_score, feature_position = np.sqrt(chi), j
        if feature_position < 0:
            continue
        if known < n:
            feature_score *= known_weight / parent_weight
        if feature_score > best_score:
            best_score = feature_score
            best_feature = f
            best_threshold = cut_threshold(values, feature_position)
            best_share = cumulative[feature_position] / known_weight
    return best_feature, best_threshold, best_score, best_share
