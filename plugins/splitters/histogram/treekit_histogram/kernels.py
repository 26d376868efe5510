"""The histogram split search and grower, written once for every criterion.

Every function that evaluates the impurity takes it as its first parameter; treekit's
:func:`treekit_core.kernels.specialised.impurity_kernels` turns this module into one
specialised to a criterion (the impurity inlined, compiled once per machine), as it does
for the core's exhaustive search. ``ENTRY_SIGNATURES`` are the entry points' types after
the impurity.

A histogram ``hist[f, b]`` holds, for the rows of a node whose bin of feature f is b, the
row count, the weight and the weighted evidence sums (``CHANNELS`` + K values; those of
the criterion's drop-free statistics are 0, each node's own sums kept beside). Bin
``missing_bin`` (the last) holds the rows whose value is missing. A cut "after bin a"
sends bins 0..a left; the rows with a missing value go, as a whole, to the side that gives
the larger drop (LightGBM's and scikit-learn's HistGradientBoosting rule).

What makes it fast: a node's histogram costs one pass over its rows (not a sort), the
search one pass over at most ``max_bins`` bins per feature, and a split builds the
histogram of its smaller child only: the larger child's is the parent's minus the smaller
one's (the sibling-subtraction trick), so each level of the tree reads at most half of the
rows.
"""

import numpy as np
from numba import types

from treekit_core.kernels import (
    NODE_COLUMNS,
    NOMINAL_SEARCH_TYPE,
    add_lanes,
    ask_nominal_question,
    choose_question,
    fill_node,
    generic_jit,
    grow_array,
    may_split,
    nominal_buffers,
    prefetch,
    split_candidates,
    split_drop,
    within_bounds,
)

LEFT, RIGHT, FEATURE, THRESHOLD, IMPROVEMENT = (
    NODE_COLUMNS.index(name) for name in ("left", "right", "feature", "threshold", "improvement")
)
#: The first class-sum column of a node table.
SUMS = NODE_COLUMNS.index("statistics")

#: Per bin: the row count, the weight, then the K weighted evidence sums.
COUNT, WEIGHT, CLASS_SUMS = 0, 1, 2
CHANNELS = 2

f8, i8 = types.float64, types.int64
F1, I1 = types.float64[::1], types.int64[::1]
F2A = types.Array(types.float64, 2, "A")
U1_2C = types.uint8[:, ::1]
F2C = types.float64[:, ::1]
F3C = types.float64[:, :, ::1]
GROW_ARGUMENTS = (
    *(F1, U1_2C, F2C, F2A, I1, types.int32[::1], i8, i8, i8, F1, i8, i8, F3C, F1, I1),
    # nominal features: the criterion's subset search, categories per feature, the
    # statistic ordering categories (-1: none), the exhaustive search's limit
    *(NOMINAL_SEARCH_TYPE, I1, i8, i8),
)
SCAN_ARGUMENTS = (F1, F3C, I1, I1, F1, f8, f8, f8, F1, F1, I1, types.uint8[::1], F1, F1)
ENTRY_SIGNATURES = {
    "grow_subtree": F2C(*GROW_ARGUMENTS),
    "scan_histograms": types.void(*SCAN_ARGUMENTS),
    "scored_parent": f8(F1, F1, f8, I1, F1),
}
#: The grower's node table: growth.NODE_COLUMNS, the K class sums, then where a sample with
#: a missing tested value goes (1 left, 0 right, NaN: by the training weight's shares) and
#: the category mask of a subset question (NaN: a threshold question, or a leaf).
EXTRA_COLUMNS = 2


#: A node's rows' table entries are gathered this many at a time (the buffer stays small
#: and in the caches); every block's rows are added to the same sums, so a (feature, bin)
#: adds its rows in the node's order whatever the number of threads (threads take ranges
#: of features). Also the size of a node worth the threads (best_first.py).
HISTOGRAM_BLOCK_ROWS = 16_384


#: Features whose histograms one pass over a node's rows sums together (their bins, four
#: histograms of 4 KB, stay in the first-level cache; the pass reads the node's row index
#: and gathered entries once for all four). Rows of weight 1 with one summed statistic
#: (boosting's trees) have passes of :data:`WIDE_PASS` features where they fit
#: (:func:`pass_width`): 20 features as four passes of five took 7% less than five of four
#: (1M rows, the builds below a boosting round's root), and two threads sum them as two
#: passes each (passes of four split them 12 and 8).
FEATURES_PER_PASS = 4
WIDE_PASS = 5

#: A node holding at most 1 / SPARSE_NODE of the rows has its rows' table entries and
#: codes prefetched :data:`PREFETCH_AHEAD` rows ahead (:func:`treekit_core.kernels.prefetch`):
#: its rows lie too far apart for the processor's own prefetcher. A boosting fit at 1M x 20
#: (40 rounds, one thread, 1 200 builds timed apart): the builds 3.2-3.7 s without, 2.8-3.1 s
#: with (ahead 16: 32 gained less; at most an 8th or half of the rows: a little less);
#: where every row is read, prefetching cost a fifth more. With the passes' flat bins and
#: passes of five features, 32 ahead took 6% off the builds below the root against 16.
SPARSE_NODE = 4
PREFETCH_AHEAD = 32


@generic_jit
def build_histogram(binned, rows, index, start, end, hist, summed, side_sums):
    """``hist`` (features x bins x channels) of the rows ``index[start:end]``, and the sums
    of the statistics the bins leave out into ``side_sums``: see
    :func:`build_feature_histograms`."""
    build_feature_histograms(
        binned, rows, index, start, end, hist, 0, hist.shape[0], summed, side_sums
    )


@generic_jit
def build_feature_histograms(binned, rows, index, start, end, hist, first, last, summed, side_sums):
    """``hist[first:last]`` of the rows ``index[start:end]`` (a thread's share of a
    threaded build takes a range of features: :mod:`treekit_histogram.threads`): per bin
    the row count, the weight and the weighted evidence sums of the statistics k in
    ``summed`` (``rows``: :func:`table_weighs_rows`); the other statistics' channels
    are 0 (a criterion's drop-free statistics:
    :meth:`treekit_core.Criterion.drop_free_statistics`, a regression tree's sum of y^2:
    a quarter less time), and those statistics' sums over the rows, in the rows' order
    (:func:`sum_left_out`'s bits), go to ``side_sums`` (its other entries untouched): the
    gathering reads them beside the others. The other features' histograms are not
    touched.

    Column-wise, as LightGBM's histograms: ``binned`` is features x rows; the rows' table
    entries are gathered in the node's order (:data:`HISTOGRAM_BLOCK_ROWS` at a time),
    then each pass sums :data:`FEATURES_PER_PASS` features' bins over them into compact
    sums (a bin's weight and summed statistics side by side: 16 bytes a bin of a boosting
    round's tree), laid out as ``hist`` at the end. Each (feature, bin) adds its rows in
    the node's order, so the bits are the same whichever features a call sums.

    Where every row of a block weighs exactly 1 (unweighted data, boosting's rounds) a
    bin's count is its weight, exactly (integers below 2^53): its rows add 1 to one
    channel, which serves as both. A block with other weights adds count and weight apart
    (``weighted``); a bin's count and weight are then the unit rows' plus those.
    Measured at 1M x 20 (one thread, a boosting round's rows): 0.89 ns a value where the
    node holds every row, 1.55 ns where it holds 5% of them (against 1.55 and 3.33 ns when
    each block was summed from zero into a full-width histogram and added)."""
    n_bins, width = hist.shape[1], hist.shape[2]
    n_summed = summed.shape[0]
    n_local = last - first
    # the unit rows' count, then the sums (two padded to four lanes: :func:`add_unit_pair`)
    unit_sums = np.zeros((n_local, n_bins, 4 if n_summed == 2 else 1 + n_summed))
    weighted = np.zeros((0, n_bins, 2))  # the other rows' count and weight, once needed
    gathered = np.empty((min(end - start, HISTOGRAM_BLOCK_ROWS), 1 + n_summed))
    left_out = left_out_statistics(summed, width - CHANNELS)
    totals = np.zeros(left_out.shape[0])
    sparse = (end - start) * SPARSE_NODE <= binned.shape[1]
    # the row at position j is j - start (a boosting round's root): the passes read codes
    # in place, without the index (a fifth less time at 1M rows)
    in_order = rows_in_order(index, start, end, binned.shape[1])
    for block_start in range(start, end, HISTOGRAM_BLOCK_ROWS):
        m = min(end, block_start + HISTOGRAM_BLOCK_ROWS) - block_start
        unit = gather_rows(rows, index, block_start, m, summed, gathered, left_out, totals, sparse)
        if not unit and weighted.shape[0] == 0:
            weighted = np.zeros((n_local, n_bins, 2))
        f = first
        while f < last:
            group = pass_width(last - f, n_summed if unit else 0)
            if group == WIDE_PASS and n_summed == 1 and in_order:
                sum_five_unit_singles_in_order(
                    binned, block_start - start, m, gathered, unit_sums, f - first, f
                )
            elif group == WIDE_PASS and n_summed == 1:
                sum_five_unit_singles(
                    binned, index, block_start, m, gathered, unit_sums, f - first, f, sparse
                )
            elif group == WIDE_PASS and in_order:
                sum_five_unit_pairs_in_order(
                    binned, block_start - start, m, gathered, unit_sums, f - first, f
                )
            elif group == WIDE_PASS:
                sum_five_unit_pairs(
                    binned, index, block_start, m, gathered, unit_sums, f - first, f, sparse
                )
            elif group == FEATURES_PER_PASS and n_summed == 1 and in_order:
                sum_four_unit_singles_in_order(
                    binned, block_start - start, m, gathered, unit_sums, f - first, f
                )
            elif group == FEATURES_PER_PASS and n_summed == 1:
                sum_four_unit_singles(
                    binned, index, block_start, m, gathered, unit_sums, f - first, f, sparse
                )
            elif group == FEATURES_PER_PASS:
                sum_four_unit_pairs(
                    binned, index, block_start, m, gathered, unit_sums, f - first, f, sparse
                )
            else:
                sum_feature(
                    binned[f], index, block_start, m, gathered, unit_sums, weighted, f - first, unit
                )
            f += group
    for a in range(n_local):
        f = first + a
        for b in range(n_bins):
            count, weight = unit_sums[a, b, 0], unit_sums[a, b, 0]
            if weighted.shape[0] > 0:
                count += weighted[a, b, 0]
                weight += weighted[a, b, 1]
            hist[f, b, COUNT], hist[f, b, WEIGHT] = count, weight
            for c in range(CLASS_SUMS, width):
                hist[f, b, c] = 0.0
            for k in range(n_summed):
                hist[f, b, CLASS_SUMS + summed[k]] = unit_sums[a, b, 1 + k]
    for i in range(left_out.shape[0]):
        side_sums[left_out[i]] = totals[i]


@generic_jit
def left_out_statistics(summed, n_stats):
    """The statistics (of ``n_stats``) not in ``summed``, in increasing order."""
    left_out = np.empty(n_stats - summed.shape[0], dtype=np.int64)
    i = 0
    for k in range(n_stats):
        found = False
        for a in range(summed.shape[0]):
            found = found or summed[a] == k
        if not found:
            left_out[i] = k
            i += 1
    return left_out


@generic_jit
def table_weighs_rows(rows, n_stats):
    """Whether the row table ``rows`` holds each row's weight, then its weighted evidence
    (n x (1 + ``n_stats``): :func:`treekit_core.kernels.growth.row_table`'s), or every
    row weighs exactly 1 and the table is the evidence itself (n x ``n_stats``: a
    boosting round's unweighted rows, no table written; 16 bytes a row gathered, not
    24). The sums are the same bits either way (1 times a value is the value)."""
    return rows.shape[1] == 1 + n_stats


@generic_jit
def gather_rows(rows, index, start, m, summed, gathered, left_out, totals, sparse):
    """The weights and summed statistics of the rows ``index[start:start + m]`` into
    ``gathered`` in that order, the ``left_out`` statistics added to ``totals``; whether
    every row weighs exactly 1 (a table without weights, :func:`table_weighs_rows`: its
    rows' weights are not written). A boosting round's and a regression tree's rows (one
    statistic summed, one left out) and two classes' unrolled: a loop over the
    statistics let a row's loads wait on the last row's stores (2.4 against 1.9 ns a value
    for a node of 5% of 1M rows). ``sparse``: the node's rows lie far apart
    (:data:`SPARSE_NODE`): their table entries are prefetched."""
    unit = True
    n_summed = summed.shape[0]
    weighs = table_weighs_rows(rows, n_summed + left_out.shape[0])
    shift = 1 if weighs else 0  # a statistic's column: after the weight's
    # the table as one flat run, a row's entries at an unsigned offset (as flat_bins: no
    # negative-index checks, one multiplication a row; 8% of a build at 1M x 20)
    table, width = rows.reshape(-1), np.uint64(rows.shape[1])
    node_rows, weights, firsts = index[start : start + m], gathered[:, 0], gathered[:, 1]
    if n_summed == 1 and left_out.shape[0] == 1 and not weighs:
        first, other = np.uint64(summed[0]), np.uint64(left_out[0])
        total = totals[0]
        for j in range(m):
            if sparse and j + PREFETCH_AHEAD < m:
                prefetch(table, np.uint64(node_rows[j + PREFETCH_AHEAD]) * width)
            at = np.uint64(node_rows[j]) * width
            firsts[j] = table[at + first]
            total += table[at + other]
        totals[0] = total
    elif n_summed == 1 and left_out.shape[0] == 1:
        first, other = np.uint64(1 + summed[0]), np.uint64(1 + left_out[0])
        total = totals[0]
        for j in range(m):
            if sparse and j + PREFETCH_AHEAD < m:
                prefetch(table, np.uint64(node_rows[j + PREFETCH_AHEAD]) * width)
            at = np.uint64(node_rows[j]) * width
            weight = table[at]
            unit = unit & (weight == 1.0)
            weights[j], firsts[j] = weight, table[at + first]
            total += table[at + other]
        totals[0] = total
    elif n_summed == 2 and left_out.shape[0] == 1 and not weighs:  # the Newton gain's rows
        first, second = np.uint64(summed[0]), np.uint64(summed[1])
        other, seconds, total = np.uint64(left_out[0]), gathered[:, 2], totals[0]
        for j in range(m):
            if sparse and j + PREFETCH_AHEAD < m:
                prefetch(table, np.uint64(node_rows[j + PREFETCH_AHEAD]) * width)
            at = np.uint64(node_rows[j]) * width
            firsts[j], seconds[j] = table[at + first], table[at + second]
            total += table[at + other]
        totals[0] = total
    elif n_summed == 2 and left_out.shape[0] == 0 and not weighs:
        first, second = np.uint64(summed[0]), np.uint64(summed[1])
        seconds = gathered[:, 2]
        for j in range(m):
            if sparse and j + PREFETCH_AHEAD < m:
                prefetch(table, np.uint64(node_rows[j + PREFETCH_AHEAD]) * width)
            at = np.uint64(node_rows[j]) * width
            firsts[j], seconds[j] = table[at + first], table[at + second]
    elif n_summed == 2 and left_out.shape[0] == 0:
        first, second = np.uint64(1 + summed[0]), np.uint64(1 + summed[1])
        seconds = gathered[:, 2]
        for j in range(m):
            if sparse and j + PREFETCH_AHEAD < m:
                prefetch(table, np.uint64(node_rows[j + PREFETCH_AHEAD]) * width)
            at = np.uint64(node_rows[j]) * width
            weight = table[at]
            unit = unit & (weight == 1.0)
            weights[j], firsts[j] = weight, table[at + first]
            seconds[j] = table[at + second]
    else:
        for j in range(m):
            r = index[start + j]
            weight = rows[r, 0] if weighs else 1.0
            unit = unit & (weight == 1.0)
            gathered[j, 0] = weight
            for k in range(n_summed):
                gathered[j, 1 + k] = rows[r, shift + summed[k]]
            for i in range(left_out.shape[0]):
                totals[i] += rows[r, shift + left_out[i]]
    return unit


@generic_jit
def sum_feature(codes, index, start, m, gathered, unit_sums, weighted, a, unit):
    """One feature's bins (the ``a``-th of the call's) over the gathered rows
    (:func:`build_feature_histograms`): rows of weight 1 add 1 to the unit count, others
    their count and weight to ``weighted``; the summed statistics to ``unit_sums``. Each
    case a loop of its own, one statistic unrolled (with the cases' branches in one loop
    a feature cost four features' pass)."""
    n_summed = gathered.shape[1] - 1
    sums = unit_sums[a]
    if unit and n_summed == 1:
        for j in range(start, start + m):
            b = codes[index[j]]
            sums[b, 0] += 1.0
            sums[b, 1] += gathered[j - start, 1]
    elif unit:
        for j in range(start, start + m):
            b = codes[index[j]]
            sums[b, 0] += 1.0
            for k in range(n_summed):
                sums[b, 1 + k] += gathered[j - start, 1 + k]
    else:
        counts = weighted[a]
        for j in range(start, start + m):
            b = codes[index[j]]
            counts[b, 0] += 1.0
            counts[b, 1] += gathered[j - start, 0]
            for k in range(n_summed):
                sums[b, 1 + k] += gathered[j - start, 1 + k]


@generic_jit
def rows_in_order(index, start, end, n_rows):
    """Whether ``index[start:end]`` is every one of ``n_rows`` rows in increasing order
    (the row at position j is then j - start)."""
    if end - start != n_rows:
        return False
    for j in range(start, end):
        if index[j] != j - start:
            return False
    return True


@generic_jit
def flat_bins(unit_sums, a):
    """Histogram ``a`` of ``unit_sums`` (bins x L, C order: L = 1 + S, four for S = 2) as
    one flat run: bin b's count at L b, its S sums after it. Read at an unsigned offset of
    a constant multiple of the code, a bin's address needs no negative-index check and no runtime
    stride (the 2-D view's row stride is a runtime value: a multiplication a read;
    together a tenth of a build's time at 1M x 20)."""
    return unit_sums[a].reshape(-1)


@generic_jit
def add_unit_single(bins, code, value):
    """One row of weight 1 and summed statistic ``value`` into the bin ``code`` of
    :func:`flat_bins`' run: the count and the sum as one vector add (:func:`add_lanes`)."""
    add_lanes(bins, np.uint64(code) * np.uint64(2), (1.0, value))


@generic_jit
def pass_width(remaining, unit_summed):
    """How many of the ``remaining`` features of a range the next pass sums: rows of
    weight 1 and one or two summed statistics (``unit_summed``: how many, 0 for rows of
    other weights) take
    :data:`WIDE_PASS` where what is left after it is still covered by passes of four and
    five (else four: 8 as 4 + 4, 20 as four passes of five, 10 as two); one feature
    otherwise (or where no pass fits). The bits do not depend on it (each (feature, bin)
    adds its rows in the node's order). Pairs in passes of five (a pass's bins 40 KB,
    more than a first-level cache) took as long a value as in passes of four, and let
    two threads take 10 and 10 of 20 features instead of 12 and 8."""
    unit_rows = unit_summed == 1 or unit_summed == 2  # the passes written out
    if unit_rows and remaining >= WIDE_PASS:
        if covered_by_passes(remaining - WIDE_PASS) or not covered_by_passes(
            remaining - FEATURES_PER_PASS
        ):
            return WIDE_PASS
    if unit_rows and remaining >= FEATURES_PER_PASS:
        return FEATURES_PER_PASS
    return 1


@generic_jit
def covered_by_passes(n_features):
    """Whether ``n_features`` is a sum of fours and fives (0 included)."""
    return n_features in (0, 4, 5, 8, 9, 10) or n_features >= 12


# The passes of four and five features, indexed and in order, are four loops on purpose:
# one function taking the width and the order as flags (branches LLVM could lift out of
# the loop) took 40% longer at a boosting round's root and 10% longer below it.


@generic_jit
def sum_five_unit_singles(binned, index, start, m, gathered, unit_sums, a, f, sparse):
    """:func:`sum_four_unit_singles` for features f..f+4."""
    c0, c1, c2, c3, c4 = binned[f], binned[f + 1], binned[f + 2], binned[f + 3], binned[f + 4]
    h0, h1, h2 = flat_bins(unit_sums, a), flat_bins(unit_sums, a + 1), flat_bins(unit_sums, a + 2)
    h3, h4 = flat_bins(unit_sums, a + 3), flat_bins(unit_sums, a + 4)
    node_rows, values = index[start : start + m], gathered[:, 1]
    for j in range(m):
        if sparse and j + PREFETCH_AHEAD < m:
            ahead = node_rows[j + PREFETCH_AHEAD]
            prefetch_codes(c0, c1, c2, c3, ahead)
            prefetch(c4, ahead)
        r, value = np.uint64(node_rows[j]), values[j]
        add_unit_single(h0, c0[r], value)
        add_unit_single(h1, c1[r], value)
        add_unit_single(h2, c2[r], value)
        add_unit_single(h3, c3[r], value)
        add_unit_single(h4, c4[r], value)


@generic_jit
def sum_five_unit_singles_in_order(binned, first_row, m, gathered, unit_sums, a, f):
    """:func:`sum_four_unit_singles_in_order` for features f..f+4."""
    last_row = first_row + m
    c0, c1 = binned[f, first_row:last_row], binned[f + 1, first_row:last_row]
    c2, c3 = binned[f + 2, first_row:last_row], binned[f + 3, first_row:last_row]
    c4 = binned[f + 4, first_row:last_row]
    h0, h1, h2 = flat_bins(unit_sums, a), flat_bins(unit_sums, a + 1), flat_bins(unit_sums, a + 2)
    h3, h4 = flat_bins(unit_sums, a + 3), flat_bins(unit_sums, a + 4)
    values = gathered[:, 1]
    for j in range(m):
        r, value = np.uint64(j), values[j]
        add_unit_single(h0, c0[r], value)
        add_unit_single(h1, c1[r], value)
        add_unit_single(h2, c2[r], value)
        add_unit_single(h3, c3[r], value)
        add_unit_single(h4, c4[r], value)


@generic_jit
def sum_four_unit_singles(binned, index, start, m, gathered, unit_sums, a, f, sparse):
    """Features f..f+3's bins (``unit_sums[a:a + 4]``) in one pass over the gathered rows
    ``index[start:start + m]`` of weight 1 and one summed statistic (a regression tree's
    y, its y^2 left out; boosting's trees): the common case, unrolled (a loop over the
    features or statistics cost a fifth more). ``sparse``: the node's rows lie far apart
    (:data:`SPARSE_NODE`): their codes are prefetched."""
    c0, c1, c2, c3 = binned[f], binned[f + 1], binned[f + 2], binned[f + 3]
    h0, h1, h2 = flat_bins(unit_sums, a), flat_bins(unit_sums, a + 1), flat_bins(unit_sums, a + 2)
    h3 = flat_bins(unit_sums, a + 3)
    node_rows, values = index[start : start + m], gathered[:, 1]
    for j in range(m):
        if sparse and j + PREFETCH_AHEAD < m:
            prefetch_codes(c0, c1, c2, c3, node_rows[j + PREFETCH_AHEAD])
        r, value = np.uint64(node_rows[j]), values[j]
        add_unit_single(h0, c0[r], value)
        add_unit_single(h1, c1[r], value)
        add_unit_single(h2, c2[r], value)
        add_unit_single(h3, c3[r], value)


@generic_jit
def sum_four_unit_singles_in_order(binned, first_row, m, gathered, unit_sums, a, f):
    """:func:`sum_four_unit_singles` over the rows first_row..first_row + m - 1 in order
    (:func:`rows_in_order`): the codes read in place."""
    last_row = first_row + m
    c0, c1 = binned[f, first_row:last_row], binned[f + 1, first_row:last_row]
    c2, c3 = binned[f + 2, first_row:last_row], binned[f + 3, first_row:last_row]
    h0, h1, h2 = flat_bins(unit_sums, a), flat_bins(unit_sums, a + 1), flat_bins(unit_sums, a + 2)
    h3 = flat_bins(unit_sums, a + 3)
    values = gathered[:, 1]
    for j in range(m):
        r, value = np.uint64(j), values[j]
        add_unit_single(h0, c0[r], value)
        add_unit_single(h1, c1[r], value)
        add_unit_single(h2, c2[r], value)
        add_unit_single(h3, c3[r], value)


@generic_jit
def add_unit_pair(bins, code, first_value, second_value):
    """:func:`add_unit_single` for two summed statistics: a bin is four lanes (the count,
    the two sums, a lane that stays 0), added as one 32-byte vector (three lanes would
    take two adds)."""
    add_lanes(bins, np.uint64(code) * np.uint64(4), (1.0, first_value, second_value, 0.0))


@generic_jit
def sum_four_unit_pairs(binned, index, start, m, gathered, unit_sums, a, f, sparse):
    """:func:`sum_four_unit_singles` for two summed statistics (two classes)."""
    c0, c1, c2, c3 = binned[f], binned[f + 1], binned[f + 2], binned[f + 3]
    h0, h1, h2 = flat_bins(unit_sums, a), flat_bins(unit_sums, a + 1), flat_bins(unit_sums, a + 2)
    h3 = flat_bins(unit_sums, a + 3)
    node_rows, firsts, seconds = index[start : start + m], gathered[:, 1], gathered[:, 2]
    for j in range(m):
        if sparse and j + PREFETCH_AHEAD < m:
            prefetch_codes(c0, c1, c2, c3, node_rows[j + PREFETCH_AHEAD])
        r, first_value, second_value = np.uint64(node_rows[j]), firsts[j], seconds[j]
        add_unit_pair(h0, c0[r], first_value, second_value)
        add_unit_pair(h1, c1[r], first_value, second_value)
        add_unit_pair(h2, c2[r], first_value, second_value)
        add_unit_pair(h3, c3[r], first_value, second_value)


@generic_jit
def sum_five_unit_pairs(binned, index, start, m, gathered, unit_sums, a, f, sparse):
    """:func:`sum_four_unit_pairs` for features f..f+4."""
    c0, c1, c2, c3, c4 = binned[f], binned[f + 1], binned[f + 2], binned[f + 3], binned[f + 4]
    h0, h1, h2 = flat_bins(unit_sums, a), flat_bins(unit_sums, a + 1), flat_bins(unit_sums, a + 2)
    h3, h4 = flat_bins(unit_sums, a + 3), flat_bins(unit_sums, a + 4)
    node_rows, firsts, seconds = index[start : start + m], gathered[:, 1], gathered[:, 2]
    for j in range(m):
        if sparse and j + PREFETCH_AHEAD < m:
            ahead = node_rows[j + PREFETCH_AHEAD]
            prefetch_codes(c0, c1, c2, c3, ahead)
            prefetch(c4, ahead)
        r, first_value, second_value = np.uint64(node_rows[j]), firsts[j], seconds[j]
        add_unit_pair(h0, c0[r], first_value, second_value)
        add_unit_pair(h1, c1[r], first_value, second_value)
        add_unit_pair(h2, c2[r], first_value, second_value)
        add_unit_pair(h3, c3[r], first_value, second_value)
        add_unit_pair(h4, c4[r], first_value, second_value)


@generic_jit
def sum_five_unit_pairs_in_order(binned, first_row, m, gathered, unit_sums, a, f):
    """:func:`sum_five_unit_pairs` over the rows first_row..first_row + m - 1 in order
    (:func:`rows_in_order`): the codes read in place."""
    last_row = first_row + m
    c0, c1 = binned[f, first_row:last_row], binned[f + 1, first_row:last_row]
    c2, c3 = binned[f + 2, first_row:last_row], binned[f + 3, first_row:last_row]
    c4 = binned[f + 4, first_row:last_row]
    h0, h1, h2 = flat_bins(unit_sums, a), flat_bins(unit_sums, a + 1), flat_bins(unit_sums, a + 2)
    h3, h4 = flat_bins(unit_sums, a + 3), flat_bins(unit_sums, a + 4)
    firsts, seconds = gathered[:, 1], gathered[:, 2]
    for j in range(m):
        r, first_value, second_value = np.uint64(j), firsts[j], seconds[j]
        add_unit_pair(h0, c0[r], first_value, second_value)
        add_unit_pair(h1, c1[r], first_value, second_value)
        add_unit_pair(h2, c2[r], first_value, second_value)
        add_unit_pair(h3, c3[r], first_value, second_value)
        add_unit_pair(h4, c4[r], first_value, second_value)


@generic_jit
def prefetch_codes(c0, c1, c2, c3, row):
    """Prefetch four features' codes of ``row`` (a pass of :func:`sum_four_unit_singles`)."""
    prefetch(c0, row)
    prefetch(c1, row)
    prefetch(c2, row)
    prefetch(c3, row)


@generic_jit
def scored_parent(impurity, params, sums, weight, summed, scored_sums):
    """A node's statistics and impurity as its histograms' cuts are scored: the statistics
    ``summed`` as they are, the others at 0 (``scored_sums``), as they are on both sides of
    every cut. Their sums cancel out of the drop
    (:meth:`treekit_core.Criterion.drop_free_statistics`), so it is the drop, and a cut
    and its mirror image (the same rows on the other side) score the same bits, as with
    every statistic summed: the first feature of tied cuts wins either way. Returns the
    impurity; with every statistic summed, the node's own."""
    for k in range(sums.shape[0]):
        scored_sums[k] = 0.0
    for a in range(summed.shape[0]):
        scored_sums[summed[a]] = sums[summed[a]]
    return impurity(scored_sums, weight, params)


@generic_jit
def sum_left_out(rows, index, start, end, summed, side_sums):
    """The sums of the statistics not in ``summed`` over the rows ``index[start:end]``, in
    their order, into ``side_sums`` (its other entries untouched): a split side's, where
    no histogram of its rows is built (which sums them as it gathers the rows, the same
    bits)."""
    left_out = left_out_statistics(summed, side_sums.shape[0])
    shift = 1 if table_weighs_rows(rows, side_sums.shape[0]) else 0
    for i in range(left_out.shape[0]):
        total = 0.0
        for j in range(start, end):
            total += rows[index[j], shift + left_out[i]]
        side_sums[left_out[i]] = total


@generic_jit
def other_side(summed, parent_sums, side_sums, other_sums):
    """The statistics not in ``summed`` of a split's other side: its parent's minus this
    side's (as its histogram is its parent's minus this side's)."""
    left_out = left_out_statistics(summed, parent_sums.shape[0])
    for i in range(left_out.shape[0]):
        k = left_out[i]
        other_sums[k] = parent_sums[k] - side_sums[k]


@generic_jit
def subtract_histogram(parent, child):
    """parent -= child: the sibling's histogram, in place of the parent's."""
    subtract_features(parent, child, 0, parent.shape[0])


@generic_jit
def subtract_features(parent, child, first, last):
    """parent[first:last] -= child[first:last]: a range of features of the sibling's
    histogram (a thread's share), in place of the parent's."""
    n_bins, width = parent.shape[1], parent.shape[2]
    for f in range(first, last):
        for b in range(n_bins):
            for c in range(width):
                parent[f, b, c] -= child[f, b, c]


@generic_jit
def scan_histogram(
    impurity,
    params,
    hist,
    feature,
    n_value_bins,
    parent_sums,
    parent_weight,
    parent_count,
    parent_impurity,
    min_samples_leaf,
    min_weight_leaf,
    left_sums,
    right_sums,
    sign,
    limits,
):
    """Best cut of one feature from its histogram: (drop, last bin on the left, missing
    left); the bin is -1 when no cut is admissible. Under a monotonic constraint ``sign``
    (0: none) a cut must keep it within the node's value ``limits`` (treekit's
    ``within_bounds``, with the missing rows on the side they are tried on).

    Cuts lie between bins holding rows (consecutive distinct values, as the exhaustive
    search's, when every distinct value has a bin of its own); the drop is the exhaustive
    search's expression, so on such data both pick the same cut. With missing values at
    the node, each cut is tried with them on the right, then on the left; ties keep the
    first (leftmost cut, missing right)."""
    n_classes = parent_sums.shape[0]
    missing = hist.shape[1] - 1
    best_drop, best_bin, best_missing_left = -np.inf, -1, False
    passes = 2 if hist[feature, missing, COUNT] > 0 else 1
    for attempt in range(passes):
        missing_left = attempt == 1
        if missing_left:
            left_count = hist[feature, missing, COUNT]
            left_weight = hist[feature, missing, WEIGHT]
            for k in range(n_classes):
                left_sums[k] = hist[feature, missing, CLASS_SUMS + k]
        else:
            left_count, left_weight = 0.0, 0.0
            for k in range(n_classes):
                left_sums[k] = 0.0
        previous = -1
        for b in range(n_value_bins):
            if hist[feature, b, COUNT] == 0.0:
                continue
            if previous >= 0:  # a cut after bin ``previous``, before bin b
                right_count = parent_count - left_count
                right_weight = parent_weight - left_weight
                if (
                    left_count >= min_samples_leaf
                    and right_count >= min_samples_leaf
                    and left_weight >= min_weight_leaf
                    and right_weight >= min_weight_leaf
                ):
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
                    if sign != 0.0 and not within_bounds(
                        sign, limits, left_sums, left_weight, right_sums, right_weight
                    ):
                        drop = -np.inf
                    if drop > best_drop:
                        best_drop, best_bin, best_missing_left = drop, previous, missing_left
            left_count += hist[feature, b, COUNT]
            left_weight += hist[feature, b, WEIGHT]
            for k in range(n_classes):
                left_sums[k] += hist[feature, b, CLASS_SUMS + k]
            previous = b
    return best_drop, best_bin, best_missing_left


@generic_jit
def scan_histograms(
    impurity,
    params,
    hist,
    n_value_bins,
    features,
    parent_sums,
    parent_weight,
    parent_count,
    parent_impurity,
    rules,
    drops,
    bins,
    missing_left,
    signs,
    limits,
):
    """:func:`scan_histogram` for each of ``features``: drops, last left bins (-1: no cut)
    and missing sides (1: left) into the output arrays, one entry per feature; ``signs``
    (per feature of X) and ``limits`` are the monotonic constraints and the node's value
    limits (signs of 0: none)."""
    n_classes = parent_sums.shape[0]
    left_sums = np.empty(n_classes)
    right_sums = np.empty(n_classes)
    for c in range(features.shape[0]):
        f = features[c]
        drops[c], bins[c], side = scan_histogram(
            impurity,
            params,
            hist,
            f,
            n_value_bins[f],
            parent_sums,
            parent_weight,
            parent_count,
            parent_impurity,
            rules[0],
            rules[1],
            left_sums,
            right_sums,
            signs[f],
            limits,
        )
        missing_left[c] = 1 if side else 0


@generic_jit
def partition_rows(binned, index, start, end, feature, bin_left, scratch):
    """Reorder ``index[start:end]`` so the rows going left come first (those whose bin of
    ``feature`` has ``bin_left`` set: :func:`mark_bins`); returns how many go left. Stable:
    each side keeps the rows' order (``scratch``: room for the right side's rows), so an
    index that starts in increasing row order stays so in every node, and the histogram's
    and the partition's reads of a node's rows go forward through the row tables (an
    in-place swap mixed them: at 200 000 rows the partitions took twice as long and the
    histograms a third longer, from cache misses). The feature's codes and the node's rows
    are taken as 1-D views first (indexing the 2-D codes by (feature, row) in the loop
    cost registers and a negative-index check per read)."""
    codes, node_rows = binned[feature], index[start:end]
    # unsigned positions and rows (as flat_bins): no negative-index check a read or write,
    # a third less time (0.88 against 1.29 ns a row at 1M rows)
    n_left, n_right, one = np.uint64(0), np.uint64(0), np.uint64(1)
    for j in range(end - start):  # without a branch: the side is a coin flip the processor
        r = node_rows[j]  # mispredicts half the time (2.6x slower with an if)
        goes_left = np.uint64(bin_left[codes[np.uint64(r)]])
        node_rows[n_left] = r
        scratch[n_right] = r
        n_left += goes_left
        n_right += one - goes_left
    for j in range(n_right):
        node_rows[n_left + np.uint64(j)] = scratch[j]
    return np.int64(n_left)


@generic_jit
def mark_bins(bin_left, last_left_bin, missing_left, mask, m):
    """``bin_left[b]`` = 1 for the bins a split sends left: a subset question's categories
    (``m`` > 0: bit c of ``mask`` for bin c < m; its feature misses no value), else a cut
    after bin ``last_left_bin`` with the missing bin (the last) left when
    ``missing_left``. The one rule :func:`side_statistics` and :func:`partition_rows`
    read."""
    missing = bin_left.shape[0] - 1
    for b in range(missing):
        if m > 0:
            bin_left[b] = (mask >> b) & 1 if b < m else 0
        else:
            bin_left[b] = 1 if b <= last_left_bin else 0
    bin_left[missing] = 1 if m == 0 and missing_left else 0


@generic_jit
def rows_statistics(rows, index, start, end, sums):
    """Class sums (into ``sums``) and weight of the rows ``index[start:end]``, each added
    in the rows' order (rows of weight 1 without a weight column,
    :func:`table_weighs_rows`: their count, the same number). Two or three statistics (a
    regression tree's, boosting's, the Newton rows) in local sums: a sum kept in ``sums``
    was stored and loaded again every row (a boosting round's root: 1.1 against 3.3 ms at
    1M rows); the table read as gather_rows reads it."""
    n_classes = sums.shape[0]
    for k in range(n_classes):
        sums[k] = 0.0
    weighs = table_weighs_rows(rows, n_classes)
    shift = np.uint64(1 if weighs else 0)
    weight = 0.0 if weighs else float(end - start)
    table, width = rows.reshape(-1), np.uint64(rows.shape[1])
    node_rows = index[start:end]
    if n_classes == 2 or n_classes == 3:  # the Newton rows (-g, h, g^2 / h): 5.7 -> 2 ms
        first, second, third, three = 0.0, 0.0, 0.0, n_classes == 3
        for j in range(end - start):
            at = np.uint64(node_rows[j]) * width
            if weighs:
                weight += table[at]
            first += table[at + shift]
            second += table[at + shift + np.uint64(1)]
            if three:
                third += table[at + shift + np.uint64(2)]
        sums[0], sums[1] = first, second
        if three:
            sums[2] = third
        return weight
    for j in range(end - start):
        at = np.uint64(node_rows[j]) * width
        if weighs:
            weight += table[at]
        for k in range(n_classes):
            sums[k] += table[at + shift + np.uint64(k)]
    return weight


@generic_jit
def side_statistics(hist, feature, bin_left, left, sums):
    """Class sums (into ``sums``), weight and row count of one side of a split of
    ``feature`` (its bins' sides: ``bin_left``, :func:`mark_bins`), summed from the node's
    bins (a class absent from the side sums to exactly zero, so a pure child is recognised
    as pure)."""
    n_classes = sums.shape[0]
    for k in range(n_classes):
        sums[k] = 0.0
    weight, count = 0.0, 0.0
    for b in range(hist.shape[1]):
        if (bin_left[b] == 1) == left:
            count += hist[feature, b, COUNT]
            weight += hist[feature, b, WEIGHT]
            for k in range(n_classes):
                sums[k] += hist[feature, b, CLASS_SUMS + k]
    return weight, count


@generic_jit
def category_statistics(hist, features, n_features, n_categories, sums, weights, counts):
    """The first ``n_features`` nominal ``features``' statistics per category from a node's
    histograms (bin c holds code c), for the subset search: ``sums[a, c]``, ``weights[a,
    c]`` and ``counts[a, c]``, zero past each feature's categories."""
    n_classes = sums.shape[2]
    for a in range(n_features):
        f = features[a]
        for c in range(sums.shape[1]):
            inside = c < n_categories[f]
            weights[a, c] = hist[f, c, WEIGHT] if inside else 0.0
            counts[a, c] = np.int64(hist[f, c, COUNT]) if inside else 0
            for k in range(n_classes):
                sums[a, c, k] = hist[f, c, CLASS_SUMS + k] if inside else 0.0


@generic_jit
def _grow_pool(pool, size):
    """A copy of the histogram pool with room for ``size`` histograms."""
    bigger = np.empty((size,) + pool.shape[1:])
    for s in range(pool.shape[0]):
        for f in range(pool.shape[1]):
            for b in range(pool.shape[2]):
                for c in range(pool.shape[3]):
                    bigger[s, f, b, c] = pool[s, f, b, c]
    return bigger


@generic_jit
def grow_subtree(
    impurity,
    params,
    binned,
    rows,
    edges,
    n_value_bins,
    index,
    start,
    end,
    root_depth,
    rules,
    max_features,
    seed,
    root_hist,
    root_statistics,
    summed,
    question_search,
    n_categories,
    order_column,
    exact_limit,
):
    """Grow the subtree whose root holds the rows ``index[start:end]`` (and whose
    histogram is ``root_hist``; its weight and statistics ``root_statistics``, or, where
    ``root_statistics[0]`` is NaN, summed from its rows; its bins sum the statistics
    ``summed``, the others of each child summed from its rows), depth first, first branch first,
    nodes numbered as taken from the stack (the exhaustive grower's order); returns its node table
    (growth.NODE_COLUMNS, the class sums, then the missing side: see ``EXTRA_COLUMNS``).

    ``binned`` holds the bin codes, features x rows (the last bin of ``root_hist``:
    missing), ``edges[f,
    a]`` the threshold of a cut after bin a, ``rows`` the row table
    (:func:`table_weighs_rows`), ``rules``
    :func:`~treekit_core.kernels.growth.rule_vector`'s. ``max_features`` < d draws that
    many candidate features per node, with the exhaustive grower's generator and order.

    Nominal features (``n_categories[f]`` > 0, binned by category code, no missing value)
    are asked by the subset question ``question_search`` finds from their bins (the
    criterion's compiled search:
    :func:`treekit_core.kernels.nominal_questions.best_nominal_question`), which wins only
    where it drops impurity strictly more than every cut, as the node-by-node loop decides;
    its mask goes to the table's last column.

    Terminates: a cut lies between two bins that both hold rows of the node, and a subset
    question keeps at least min_samples_leaf >= 1 rows on each side, so every child holds
    fewer rows than its parent.
    """
    d = binned.shape[0]
    n_classes = root_hist.shape[2] - CHANNELS
    missing_column = SUMS + n_classes
    np.random.seed(seed)
    candidates = np.empty(d, dtype=np.int64)
    for f in range(d):
        candidates[f] = f
    drops = np.empty(d)
    bins = np.empty(d, dtype=np.int64)
    sides = np.empty(d, dtype=np.uint8)
    numeric, nominal, category_sums, category_weights, category_counts, categories, results = (
        nominal_buffers(n_categories, n_classes)
    )
    bin_left = np.empty(root_hist.shape[1], dtype=np.uint8)  # the chosen split's sides
    scratch = np.empty(end - start, dtype=index.dtype)  # partition_rows' right sides
    # the whole-tree grower runs without monotonic constraints
    unconstrained, unbounded = np.zeros(d), np.array([-np.inf, np.inf])
    # Histograms live in a pool of slots: a node waiting on the stack owns one (-1: it
    # will not be split, so it needs none); a split hands its slot to one child.
    pool = np.empty((4,) + root_hist.shape)
    free = np.empty(4, dtype=np.int64)
    for s in range(4):
        free[s] = 3 - s
    n_free = 3
    root_slot = free[n_free]
    for f in range(d):
        for b in range(root_hist.shape[1]):
            for c in range(root_hist.shape[2]):
                pool[root_slot, f, b, c] = root_hist[f, b, c]
    table = np.empty((64, SUMS + n_classes + EXTRA_COLUMNS))
    # The stack of nodes to grow: start, end, depth, parent, is_left, histogram slot; and
    # their weight and class sums (found when their parent was split).
    stack = np.empty((64, 6), dtype=np.int64)
    stack_stats = np.empty((64, 1 + n_classes))
    stack[0, 0], stack[0, 1], stack[0, 2] = start, end, root_depth
    stack[0, 3], stack[0, 4], stack[0, 5] = -1, 0, root_slot
    if np.isnan(root_statistics[0]):
        stack_stats[0, 0] = rows_statistics(rows, index, start, end, stack_stats[0, 1:])
    else:  # a subtree of a threaded fit: as its parent found them (side_statistics)
        for k in range(1 + n_classes):
            stack_stats[0, k] = root_statistics[k]
    top = 1
    node = -1
    sums = np.empty(n_classes)
    scored_sums = np.empty(n_classes)  # as the cuts are scored: scored_parent
    while top > 0:
        top -= 1
        node_start, node_end, node_depth = stack[top, 0], stack[top, 1], stack[top, 2]
        parent, is_left, slot = stack[top, 3], stack[top, 4], stack[top, 5]
        weight = stack_stats[top, 0]
        for k in range(n_classes):
            sums[k] = stack_stats[top, 1 + k]
        node += 1
        if node == table.shape[0]:
            table = grow_array(table, 2 * table.shape[0])
        if parent >= 0:
            table[parent, LEFT if is_left else RIGHT] = node
        imp = impurity(sums, weight, params)
        count = node_end - node_start
        fill_node(table[node], sums, weight, count, imp, node_depth)
        table[node, missing_column] = np.nan
        table[node, missing_column + 1] = np.nan
        chosen, subset, drop = -1, -1, -np.inf
        if slot >= 0 and may_split(count, weight, imp, node_depth, rules):
            n_candidates = d
            if max_features < d:
                for i in range(max_features):  # partial Fisher-Yates draw
                    j = np.random.randint(i, d)
                    candidates[i], candidates[j] = candidates[j], candidates[i]
                n_candidates = max_features
            n_numeric, n_nominal = split_candidates(
                candidates, n_candidates, n_categories, numeric, nominal
            )
            scored_impurity = scored_parent(impurity, params, sums, weight, summed, scored_sums)
            scan_histograms(
                impurity,
                params,
                pool[slot],
                n_value_bins,
                numeric[:n_numeric],
                scored_sums,
                weight,
                float(count),
                scored_impurity,
                rules,
                drops,
                bins,
                sides,
                unconstrained,
                unbounded,
            )
            if n_nominal > 0:
                category_statistics(
                    pool[slot],
                    nominal,
                    n_nominal,
                    n_categories,
                    category_sums,
                    category_weights,
                    category_counts,
                )
                subset = ask_nominal_question(
                    question_search,
                    params,
                    nominal,
                    n_nominal,
                    n_categories,
                    category_sums,
                    category_weights,
                    category_counts,
                    categories,
                    results,
                    order_column,
                    exact_limit,
                    False,  # subset questions only
                    weight,
                    sums,
                    count,
                    rules,
                )
            chosen, subset, drop = choose_question(
                drops, bins, numeric, n_numeric, subset, nominal, results, weight, rules
            )
        if chosen < 0 and subset < 0:
            if slot >= 0:
                free[n_free] = slot
                n_free += 1
            continue
        table[node, IMPROVEMENT] = drop
        if subset >= 0:
            f = nominal[subset]
            table[node, FEATURE], table[node, THRESHOLD] = f, -2.0
            table[node, missing_column + 1] = results[subset, 1]
            mark_bins(bin_left, -1, False, np.int64(results[subset, 1]), n_categories[f])
        else:
            f = numeric[chosen]
            last_left_bin = bins[chosen]
            missing_left = sides[chosen] == 1
            table[node, FEATURE], table[node, THRESHOLD] = f, edges[f, last_left_bin]
            if pool[slot, f, pool.shape[2] - 1, COUNT] > 0:
                table[node, missing_column] = 1.0 if missing_left else 0.0
            mark_bins(bin_left, last_left_bin, missing_left, np.int64(0), 0)
        if top + 2 > stack.shape[0]:
            stack = grow_array(stack, 2 * stack.shape[0])
            stack_stats = grow_array(stack_stats, 2 * stack_stats.shape[0])
        # The children's statistics, from the chosen feature's bins: right on the stack
        # first, so the left child is grown first.
        right_weight, right_count = side_statistics(
            pool[slot], f, bin_left, False, stack_stats[top, 1:]
        )
        left_weight, left_count = side_statistics(
            pool[slot], f, bin_left, True, stack_stats[top + 1, 1:]
        )
        stack_stats[top, 0], stack_stats[top + 1, 0] = right_weight, left_weight
        n_left = partition_rows(binned, index, node_start, node_end, f, bin_left, scratch)
        middle = node_start + n_left
        left_is_small = n_left <= node_end - middle
        small_start, small_end = (node_start, middle) if left_is_small else (middle, node_end)
        small_row, large_row = (top + 1, top) if left_is_small else (top, top + 1)
        child_depth = node_depth + 1
        # The smaller child's histogram where a child may split by its rows alone (its
        # impurity needs the statistics the bins leave out, which the build sums)
        small_slot = -1
        if may_split(right_count, right_weight, np.inf, child_depth, rules) or may_split(
            left_count, left_weight, np.inf, child_depth, rules
        ):
            if n_free == 0:  # every slot is taken: twice as many, the new ones free
                size = pool.shape[0]
                free = np.empty(2 * size, dtype=np.int64)
                for s in range(size):
                    free[s] = 2 * size - 1 - s
                n_free = size
                pool = _grow_pool(pool, 2 * size)
            n_free -= 1
            small_slot = free[n_free]
            build_histogram(
                binned,
                rows,
                index,
                small_start,
                small_end,
                pool[small_slot],
                summed,
                stack_stats[small_row, 1:],
            )
        else:
            sum_left_out(rows, index, small_start, small_end, summed, stack_stats[small_row, 1:])
        other_side(summed, sums, stack_stats[small_row, 1:], stack_stats[large_row, 1:])
        right_splits = may_split(
            right_count,
            right_weight,
            impurity(stack_stats[top, 1:], right_weight, params),
            child_depth,
            rules,
        )
        left_splits = may_split(
            left_count,
            left_weight,
            impurity(stack_stats[top + 1, 1:], left_weight, params),
            child_depth,
            rules,
        )
        left_slot, right_slot = -1, -1
        if small_slot >= 0 and (left_splits or right_splits):
            subtract_histogram(pool[slot], pool[small_slot])
            left_slot, right_slot = (small_slot, slot) if left_is_small else (slot, small_slot)
            if not left_splits:
                free[n_free] = left_slot
                n_free += 1
                left_slot = -1
            if not right_splits:
                free[n_free] = right_slot
                n_free += 1
                right_slot = -1
        else:
            if small_slot >= 0:  # both children pure: the histogram was not needed
                free[n_free] = small_slot
                n_free += 1
            free[n_free] = slot
            n_free += 1
        stack[top, 0], stack[top, 1], stack[top, 2] = middle, node_end, child_depth
        stack[top, 3], stack[top, 4], stack[top, 5] = node, 0, right_slot
        stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = node_start, middle, child_depth
        stack[top + 1, 3], stack[top + 1, 4], stack[top + 1, 5] = node, 1, left_slot
        top += 2
    return table[: node + 1].copy()
