"""The presorted tree grower, written once for every criterion: it sweeps each feature with
the exhaustive threshold search (:mod:`.threshold_search`) and asks nominal features the
questions of :mod:`.nominal_questions`.

These functions take the criterion's compiled impurity as their first argument and carry no
signature or cache of their own. Two kinds of entry point compile them: with an explicit
signature receiving the impurity as a first-class function value (:mod:`.by_value`,
:mod:`.split_search`, :mod:`.node_search`: one machine-code copy for every criterion, an
indirect call per impurity), and modules generated per criterion from this file's source
with the impurity turned into a global, so numba inlines it (:mod:`.specialised`). Both
are cached on disk. ``ENTRY_SIGNATURES`` are the entry points' types after the impurity.

What makes the grower fast:

* every feature is sorted once (``presort``); a node keeps, per feature, its rows in sorted
  order in a slice ``[start, end)`` of ``order``, and their values in the same slice of
  ``values`` (the sorted columns); a split partitions those slices stably, moving each
  row's value with it, so no node sorts anything and no scan reads X at random rows;
* the scan of a feature gathers its rows' statistics in that order into contiguous
  buffers, then sweeps them and the feature's sorted values with running sums of
  statistics (:func:`scan_sorted_feature`), held in arrays on the stack
  (:func:`~.compiling.stack_scratch`), which LLVM knows no other array shares, so a store
  to them does not make it reload what the sweep reads;
* nodes are independent once their slice is known, so subtrees can grow in separate
  threads (the slices and the rows they hold are disjoint): :func:`grow_subtree` grows a
  whole subtree in one call and :mod:`.builder` hands large trees out as subtree tasks.
"""

import numpy as np
from numba import types

from treekit_core.kernels.compiling import (
    F1,
    F2A,
    F2C,
    I1,
    STACK_STATS,
    f8,
    generic_jit,
    i8,
    python_function,
    stack_scratch,
)
from treekit_core.kernels.nominal_questions import (
    NOMINAL_SEARCH_TYPE,
    ask_nominal_question,
    mark_subset,
    nominal_buffers,
    sorted_category_statistics,
    split_candidates,
)

# The threshold search the grower and the node search run. The modules generated per
# criterion from this file's source (:mod:`.specialised`) copy in the kernels imported here
# that take the impurity, so the names those copies call are imported here too.
from treekit_core.kernels.threshold_search import (  # noqa: F401
    UNBOUNDED,
    admissible_cut,
    best_split_of_node,
    best_split_within_bounds,
    bounded_value,
    cut_threshold,
    drop_bound,
    gather_ranked_feature,
    gather_sorted_feature,
    n_statistics,
    scan_sorted_feature,
    scan_within_bounds,
    split_drop,
    sum_known,
    within_bounds,
)
from treekit_core.numerics import EPSILON, FEATURE_THRESHOLD, PURE_TOLERANCE  # noqa: F401

# The entry points' signatures after the impurity argument. X (the node search's) is typed
# in any layout, so one compiled kernel serves C- and Fortran-ordered data (a fit on the
# user's array and on its cross-validation folds) instead of one per layout; the grower
# reads the sorted columns (features x rows, aligned with ``order``) instead of X.
I32_2 = types.int32[:, ::1]
GROW_ARGUMENTS = (
    *(F1, F2C, F2C, I32_2, i8, i8, i8, F1, i8, i8, types.uint8[::1], F1, F1),
    # nominal features: the nominal search, categories per feature, order column, limit,
    # multi-way questions (else subset questions)
    *(NOMINAL_SEARCH_TYPE, I1, i8, i8, types.boolean),
    F2C,  # the rows the node table may be written to (too few: the grower allocates it)
)
SCAN_ARGUMENTS = (F1, F2C, F2C, I32_2, I1, i8, i8, F1, f8, f8, F1, F1, F1, I1, F1, F2C)
NODE_ARGUMENTS = (F1, F2A, F2C, I1, F1, F1, f8, I1, i8, f8)
NODE_RESULT = types.Tuple((i8, f8, f8, f8))
#: best_split_within_bounds: best_split_of_node's, then each feature's monotonic
#: constraint and the node's value limits (:func:`within_bounds`)
BOUNDED_NODE_ARGUMENTS = (*NODE_ARGUMENTS, F1, F1)
ENTRY_SIGNATURES = {
    "grow_subtree": F2C(*GROW_ARGUMENTS),
    "scan_features": types.void(*SCAN_ARGUMENTS),
    "best_split_of_node": NODE_RESULT(*NODE_ARGUMENTS),
    "best_split_within_bounds": NODE_RESULT(*BOUNDED_NODE_ARGUMENTS),
}


#: The columns of the node table grow_subtree returns (one float64 row per node, the
#: statistics last; counts and ids are exact in float64). One array keeps the kernel small,
#: and numba's compile time grows with the code.
NODE_COLUMNS = (
    "left",
    "right",
    "feature",
    "threshold",
    "weight",
    "n_samples",
    "impurity",
    "depth",
    "improvement",
    "statistics",
)
LEFT, RIGHT, FEATURE, THRESHOLD, WEIGHT, N_SAMPLES, IMPURITY, DEPTH, IMPROVEMENT, SUMS = range(10)
#: The presorted grower's table of a tree with monotonic constraints or nominal features
#: (:func:`keeps_trailing`) ends, after the statistics, with every node's value interval
#: (lower, upper) of monotonic constraints, the category mask of a subset question and the
#: number of branches of a multi-way question (each NaN where the node asks no such
#: question): :func:`trailing_column`. Other tables end with the statistics: four columns
#: of a grown-out tree are a quarter of its table (64 MB at 1M rows, issue 38). A node's
#: ``left`` is its first child and ``right`` its last; a multi-way node's children are the
#: nodes one level deeper between them (nodes are numbered depth first, the first branch
#: first).
TRAILING_COLUMNS = ("value_lower", "value_upper", "category_mask", "branches")
CATEGORY_MASK = TRAILING_COLUMNS.index("category_mask")
BRANCHES = TRAILING_COLUMNS.index("branches")
#: A node's trailing columns before any question: unbounded, no mask, no branches.
TRAILING_DEFAULTS = (-np.inf, np.inf, np.nan, np.nan)


def trailing_column(n_stats, name):
    """The index of the presorted grower's table column ``name`` (one of
    :data:`TRAILING_COLUMNS`) for ``n_stats`` statistics."""
    return SUMS + n_stats + TRAILING_COLUMNS.index(name)


@generic_jit
def keeps_trailing(signs, n_categories):
    """Whether the presorted grower's table holds :data:`TRAILING_COLUMNS`: some feature
    is under a monotonic constraint (``signs``) or nominal (``n_categories``). The one
    rule the grower and the builder's tables follow."""
    for f in range(signs.shape[0]):
        if signs[f] != 0.0 or n_categories[f] > 0:
            return True
    return False


def table_width(n_stats, signs, n_categories):
    """The number of columns of the presorted grower's table for ``n_stats`` statistics
    (:func:`keeps_trailing` says whether it ends with :data:`TRAILING_COLUMNS`; its plain
    Python function here, as an inlined kernel has no cache and would compile in every
    process that called it from Python)."""
    keeps = python_function(keeps_trailing)(signs, n_categories)
    trailing = len(TRAILING_COLUMNS) if keeps else 0
    return SUMS + n_stats + trailing


# -- the presorted grower ------------------------------------------------------


@generic_jit
def node_statistics(rows, order, start, end, sums):
    """Statistics (into ``sums``) and weight of the rows in ``order[0, start:end]``."""
    n_stats = n_statistics(sums)
    for k in range(n_stats):
        sums[k] = 0.0
    weight = 0.0
    for j in range(start, end):
        s = order[0, j]
        weight += rows[s, 0]
        for k in range(n_stats):
            sums[k] += rows[s, 1 + k]
    return weight


@generic_jit
def may_split(count, weight, node_impurity, depth, rules):
    """The stopping rules (``rules``: see :func:`rule_vector`) of a node before any search:
    the one definition both growers use (the engine's grow loop calls the plain function)."""
    return not (
        depth >= rules[3]
        or count < rules[2]
        or count < 2 * rules[0]
        or weight < 2 * rules[1]
        or node_impurity <= rules[6]
    )


@generic_jit
def scan_features(
    impurity,
    params,
    values,
    rows,
    order,
    features,
    start,
    end,
    parent_sums,
    parent_weight,
    parent_impurity,
    rules,
    drops,
    thresholds,
    positions,
    weight_buffer,
    evidence_buffer,
):
    """The best cut of each of ``features`` for the node's rows (``order[feature,
    start:end]``, whose values are ``values[feature, start:end]``):
    :func:`scan_sorted_feature`'s results into ``drops``, ``thresholds`` and ``positions``,
    one entry per feature in the given order. Each feature's rows' statistics are first
    gathered in sorted order into the scratch buffers (at least end - start rows; the
    random reads of the row table are independent, so the processor overlaps them), then
    swept."""
    scan_features_within_bounds(
        impurity,
        params,
        values,
        rows,
        order,
        features,
        start,
        end,
        parent_sums,
        parent_weight,
        parent_impurity,
        rules,
        drops,
        thresholds,
        positions,
        weight_buffer,
        evidence_buffer,
        np.zeros(values.shape[0]),
        UNBOUNDED,
    )


@generic_jit
def scan_features_within_bounds(
    impurity,
    params,
    values,
    rows,
    order,
    features,
    start,
    end,
    parent_sums,
    parent_weight,
    parent_impurity,
    rules,
    drops,
    thresholds,
    positions,
    weight_buffer,
    evidence_buffer,
    signs,
    limits,
):
    """:func:`scan_features` under monotonic constraints (``signs`` per feature, the
    node's value ``limits``: :func:`within_bounds`)."""
    count = end - start
    n_stats = n_statistics(parent_sums)
    node_weights = weight_buffer[:count]
    weighted = evidence_buffer[:count]
    if n_stats <= STACK_STATS:  # the sums on the stack: stack_scratch says why
        left_sums, right_sums = stack_scratch(n_stats), stack_scratch(n_stats)
    else:
        left_sums, right_sums = np.empty(n_stats), np.empty(n_stats)
    min_samples_leaf = np.int64(rules[0])
    for c in range(features.shape[0]):
        feature = features[c]
        node_order = order[feature, start:end]
        for j in range(count):
            row = node_order[j]
            node_weights[j] = rows[row, 0]
            for k in range(n_stats):
                weighted[j, k] = rows[row, 1 + k]
        drops[c], thresholds[c], positions[c] = scan_within_bounds(
            impurity,
            params,
            values[feature, start:end],
            weighted,
            node_weights,
            parent_sums,
            parent_weight,
            parent_impurity,
            min_samples_leaf,
            rules[1],
            left_sums,
            right_sums,
            signs[feature],
            limits,
        )


@generic_jit
def choose_split(drops, positions, n_candidates, weight, rules):
    """The candidate whose drop is strictly best, the first one on ties; -1 when there is
    none or it fails min_impurity_decrease (``rules[4]``, scaled by the node's weight share
    with scikit-learn's epsilon slack) or min_gain (``rules[5]``, NaN: no threshold)."""
    chosen = first_best(drops, positions, n_candidates)
    if chosen < 0 or not accepts_split(drops[chosen], weight, rules):
        return -1
    return chosen


@generic_jit
def first_best(drops, positions, n_candidates):
    """The first of the candidates with a cut (position >= 0) whose drop is strictly best;
    -1 when none has a cut."""
    chosen = -1
    for c in range(n_candidates):
        if positions[c] >= 0 and (chosen < 0 or drops[c] > drops[chosen]):
            chosen = c
    return chosen


@generic_jit
def choose_question(drops, positions, numeric, n_numeric, picked, nominal, results, weight, rules):
    """(threshold candidate, nominal candidate, drop) a grower asks at a node, from its
    numeric candidates' best cuts (``drops``, ``positions``: -1 for none; features
    ``numeric``) and the nominal search's pick (``picked``, feature ``nominal[picked]``, its
    drop ``results[picked, 0]``; -1 for none): the strictly best question, the earlier
    feature on a tie (rpart's rule and the node-by-node loop's), then the stopping rules
    (:func:`accepts_split`) on the drop; at most one candidate is >= 0, neither when the
    node stays a leaf."""
    chosen = first_best(drops, positions, n_numeric)
    drop = drops[chosen] if chosen >= 0 else -np.inf
    if picked >= 0 and (
        results[picked, 0] > drop
        or (chosen >= 0 and results[picked, 0] == drop and nominal[picked] < numeric[chosen])
    ):
        chosen, drop = -1, results[picked, 0]
    else:
        picked = -1
    if (chosen < 0 and picked < 0) or not accepts_split(drop, weight, rules):
        return -1, -1, drop
    return chosen, picked, drop


@generic_jit
def accepts_split(drop, weight, rules):
    """The stopping rules (``rules``: see :func:`rule_vector`) of the best split found: its
    drop passes min_impurity_decrease (``rules[4]``, scaled by the node's weight share with
    scikit-learn's epsilon slack) and min_gain (``rules[5]``, NaN: no threshold). The one
    definition both growers use (the engine's grow loop calls the plain function)."""
    if weight / rules[7] * drop + EPSILON < rules[4]:
        return False
    return np.isnan(rules[5]) or drop > rules[5]


@generic_jit
def mark_left(order, feature, start, end, n_left, goes_left):
    """goes_left[row] = 1 for the first ``n_left`` rows of the node in ``feature``'s order."""
    for j in range(start, end):
        goes_left[order[feature, j]] = 1 if j < start + n_left else 0


@generic_jit
def partition_features(order, features, skip, start, end, goes_left, scratch):
    """Stable partition of each of ``features``'s slices (except ``skip``, already
    partitioned by its own sort): left rows first, each side keeping its sorted order."""
    partition_sorted(
        order, np.empty((0, 0)), features, skip, start, end, goes_left, scratch, np.empty(0)
    )


@generic_jit
def partition_sorted(order, values, features, skip, start, end, goes_left, scratch, value_scratch):
    """:func:`partition_features`, moving each row's value in ``values`` (aligned with
    ``order``; no values moved when it has no rows) with it. Without a branch per row:
    every row is written to both sides' next places and only its side's count moves on
    (the side is a coin flip the processor mispredicts half the time; with an ``if`` a
    forest's fit spent most of its partitions waiting on those). Each feature's slice is
    taken as a 1-D view first: indexing the 2-D arrays by (feature, position) in the loop
    held more of its registers than it had, and the partitions ran 12% slower."""
    carry = values.shape[0] > 0
    count = end - start
    for c in range(features.shape[0]):
        feature = features[c]
        if feature == skip:
            continue
        n_left = 0
        n_right = 0
        node_order = order[feature, start:end]
        if carry:
            node_values = values[feature, start:end]
            for j in range(count):
                s = node_order[j]
                value = node_values[j]
                left = np.int64(goes_left[s])
                node_order[n_left] = s
                node_values[n_left] = value
                scratch[n_right] = s
                value_scratch[n_right] = value
                n_left += left
                n_right += 1 - left
            for j in range(n_right):
                node_order[n_left + j] = scratch[j]
                node_values[n_left + j] = value_scratch[j]
        else:
            for j in range(count):
                s = node_order[j]
                left = np.int64(goes_left[s])
                node_order[n_left] = s
                scratch[n_right] = s
                n_left += left
                n_right += 1 - left
            for j in range(n_right):
                node_order[n_left + j] = scratch[j]


@generic_jit
def grow_array(array, size):
    """A copy of a 2-D array with ``size`` rows (written with loops: numba compiles a
    slice assignment of 2-D arrays for seconds)."""
    bigger = np.empty((size, array.shape[1]), dtype=array.dtype)
    for i in range(array.shape[0]):
        for j in range(array.shape[1]):
            bigger[i, j] = array[i, j]
    return bigger


@generic_jit
def grow_subtree(
    impurity,
    params,
    values,
    rows,
    order,
    start,
    end,
    root_depth,
    rules,
    max_features,
    seed,
    goes_left,
    signs,
    limits,
    question_search,
    n_categories,
    order_column,
    exact_limit,
    multiway,
    out,
):
    """Grow the subtree whose root holds the rows of ``order[:, start:end]``, depth first,
    first branch first, nodes numbered as they are taken from the stack (scikit-learn's
    order); returns its node table (:data:`NODE_COLUMNS`; children numbered within the
    subtree, -1 for none).

    ``values`` holds each feature's values in ``order``'s order (:func:`.builder.sorted_values`),
    ``rows`` is :func:`row_table`'s array, ``rules`` :func:`rule_vector`'s. ``max_features``
    < d draws that many candidate features per node (partial Fisher-Yates, numba's
    generator seeded with ``seed``). Touches only the slice [start, end) of ``order`` and
    ``values`` and the entries of ``goes_left`` of the rows it holds, so disjoint subtrees
    may grow at the same time.

    The table (:func:`table_width` columns) is written to ``out`` when it has that width and
    rows for the most nodes the rows can make with binary questions (2 x rows - 1: every
    leaf holds a row; the threaded builder gives each subtree such a block of one table),
    else allocated so once, and returned as a view of its nodes: the memory of nodes never
    made is never touched, and no table is copied as it grows (only a multi-way question's
    empty branches can outgrow it: then it doubles).

    Monotonic constraints: ``signs`` per feature (0: free) and ``limits`` the root's value
    limits (:func:`within_bounds`); every node's interval goes to the table's
    value_lower and value_upper columns (:data:`TRAILING_COLUMNS`), the children of a cut
    on a constrained feature sharing the middle of its sides' values (sides summed in the
    feature's sorted order, as scikit-learn's running sums reach them).

    Nominal features: ``n_categories[f]`` > 0 makes feature f nominal (its values category
    codes), asked by the subset question (with ``multiway``, the multi-way question)
    ``question_search`` finds (:func:`best_nominal_question` compiled for the criterion:
    categories ordered by statistic ``order_column``'s share of their weight, or every
    subset up to ``exact_limit`` categories for -1), which wins only where it drops
    impurity strictly more than every threshold question, as the node-by-node loop decides
    (threshold -2, the loop's). A subset question's mask goes to the category_mask column;
    a multi-way question has one branch per category of the feature (an empty leaf for a
    category absent from the node, as in the loop), their number in the branches column.
    Not with monotonic constraints on the nominal features (the loop keeps those).

    Terminates: every split sends at least one row each way (a cut exists only between
    distinct values; a subset question keeps min_samples_leaf >= 1 rows on each side, a
    multi-way question holds two categories or more), so every child holds fewer rows than
    its parent, and an empty child is a leaf.
    """
    d = values.shape[0]
    n_stats = rows.shape[1] - 1
    np.random.seed(seed)
    scratch = np.empty(end - start, dtype=np.int32)
    value_scratch, weight_buffer = np.empty(end - start), np.empty(end - start)
    evidence_buffer = np.empty((end - start, n_stats))
    candidates = np.empty(d, dtype=np.int64)
    for f in range(d):
        candidates[f] = f
    drops = np.empty(d)
    thresholds = np.empty(d)
    positions = np.empty(d, dtype=np.int64)
    numeric, nominal, category_sums, category_weights, category_counts, categories, results = (
        nominal_buffers(n_categories, n_stats)
    )
    width = SUMS + n_stats
    trailing = keeps_trailing(signs, n_categories)
    most = max(2 * (end - start) - 1, 1)
    table = out
    columns = width + len(TRAILING_COLUMNS) if trailing else width
    if out.shape[0] < most or out.shape[1] != columns:
        table = np.empty((most, columns))
    stack = np.empty((64, 5), dtype=np.int64)  # start, end, depth, parent, branch
    stack[0, 0], stack[0, 1], stack[0, 2], stack[0, 3], stack[0, 4] = start, end, root_depth, -1, 0
    intervals = np.empty((64, 2))  # the value interval of each node on the stack
    intervals[0, 0], intervals[0, 1] = limits[0], limits[1]
    node_limits = limits.copy()
    top = 1
    node = -1
    sums = np.empty(n_stats)
    side_sums = np.empty(n_stats)
    while top > 0:
        top -= 1
        node_start, node_end, node_depth = stack[top, 0], stack[top, 1], stack[top, 2]
        parent, branch = stack[top, 3], stack[top, 4]
        lower, upper = intervals[top, 0], intervals[top, 1]
        node += 1
        if node == table.shape[0]:  # only a multi-way question's empty branches get here
            table = grow_array(table, 2 * table.shape[0])
        link_child(table, parent, branch, node)
        weight = node_statistics(rows, order, node_start, node_end, sums)
        # an empty branch weighs nothing, and its impurity is 0 (as in the loop)
        imp = impurity(sums, weight, params) if weight > 0.0 else 0.0
        count = node_end - node_start
        fill_node(table[node], sums, weight, count, imp, node_depth)
        if trailing:
            for c in range(len(TRAILING_DEFAULTS)):
                table[node, width + c] = TRAILING_DEFAULTS[c]
            table[node, width], table[node, width + 1] = lower, upper
        if not may_split(count, weight, imp, node_depth, rules):
            continue
        node_limits[0], node_limits[1] = lower, upper
        n_candidates = d
        if max_features < d:
            for i in range(max_features):  # partial Fisher-Yates draw
                j = np.random.randint(i, d)
                candidates[i], candidates[j] = candidates[j], candidates[i]
            n_candidates = max_features
        n_numeric, n_nominal = split_candidates(
            candidates, n_candidates, n_categories, numeric, nominal
        )
        scan_features_within_bounds(
            impurity,
            params,
            values,
            rows,
            order,
            numeric[:n_numeric],
            node_start,
            node_end,
            sums,
            weight,
            imp,
            rules,
            drops,
            thresholds,
            positions,
            weight_buffer,
            evidence_buffer,
            signs,
            node_limits,
        )
        picked = -1
        if n_nominal > 0:
            sorted_category_statistics(
                rows,
                order,
                values,
                nominal[:n_nominal],
                node_start,
                node_end,
                category_sums,
                category_weights,
                category_counts,
            )
            picked = ask_nominal_question(
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
                multiway,
                weight,
                sums,
                count,
                rules,
            )
        chosen, picked, drop = choose_question(
            drops, positions, numeric, n_numeric, picked, nominal, results, weight, rules
        )
        if chosen < 0 and picked < 0:
            continue
        table[node, IMPROVEMENT] = drop
        if picked >= 0 and multiway:
            f = nominal[picked]
            table[node, FEATURE], table[node, THRESHOLD] = f, -2.0
            table[node, width + BRANCHES] = n_categories[f]
            stack, top, intervals = push_branches(
                order,
                values,
                candidates,
                f,
                node_start,
                node_end,
                node_depth,
                node,
                n_categories[f],
                goes_left,
                scratch,
                value_scratch,
                stack,
                top,
                intervals,
                lower,
                upper,
            )
            continue
        if picked >= 0:
            f = nominal[picked]
            mask = results[picked, 1]
            table[node, FEATURE], table[node, THRESHOLD] = f, -2.0
            table[node, width + CATEGORY_MASK] = mask
            n_left = mark_subset(order, values, f, node_start, node_end, np.int64(mask), goes_left)
            skip = -1  # the feature's own slice is sorted by code, not split by the question
        else:
            f = numeric[chosen]
            n_left = positions[chosen]
            table[node, FEATURE], table[node, THRESHOLD] = f, thresholds[chosen]
            mark_left(order, f, node_start, node_end, n_left, goes_left)
            skip = f
        partition_sorted(
            order, values, candidates, skip, node_start, node_end, goes_left, scratch, value_scratch
        )
        stack, top = push_children(
            stack, top, node, node_start, node_start + n_left, node_end, node_depth
        )
        if top > intervals.shape[0]:
            intervals = grow_array(intervals, 2 * intervals.shape[0])
        # the children's intervals (top - 1: the left child, top - 2: the right one)
        left_lower, left_upper, right_lower, right_upper = lower, upper, lower, upper
        if signs[f] != 0.0:
            middle = middle_value(
                rows,
                order,
                f,
                node_start,
                node_start + n_left,
                sums,
                weight,
                node_limits,
                side_sums,
            )
            if signs[f] > 0:
                left_upper, right_lower = middle, middle
            else:
                left_lower, right_upper = middle, middle
        intervals[top - 1, 0], intervals[top - 1, 1] = left_lower, left_upper
        intervals[top - 2, 0], intervals[top - 2, 1] = right_lower, right_upper
    return table[: node + 1]


@generic_jit
def middle_value(rows, order, feature, start, middle, sums, weight, limits, side_sums):
    """The bound the children of a cut on a constrained feature share: the mean of the
    sides' unclipped values (scikit-learn's middle value), held within the node's limits;
    the left side ``order[feature, start:middle]`` summed in its sorted order, the right
    side the node's sums minus it (as a running sum reaches them)."""
    n_stats = n_statistics(sums)
    for k in range(n_stats):
        side_sums[k] = 0.0
    left_weight = 0.0
    for j in range(start, middle):
        s = order[feature, j]
        left_weight += rows[s, 0]
        for k in range(n_stats):
            side_sums[k] += rows[s, 1 + k]
    left_value = bounded_value(limits, side_sums, left_weight)
    for k in range(n_stats):
        side_sums[k] = sums[k] - side_sums[k]
    right_value = bounded_value(limits, side_sums, weight - left_weight)
    return min(max(left_value / 2.0 + right_value / 2.0, limits[0]), limits[1])


@generic_jit
def push_children(stack, top, node, start, middle, end, depth):
    """Push the children of ``node`` (rows [start, middle) left, [middle, end) right) on a
    depth-first grower's stack of (start, end, depth, parent, branch), the right one first
    so the left one grows first (scikit-learn's numbering); returns (stack, new top)."""
    if top + 2 > stack.shape[0]:
        stack = grow_array(stack, 2 * stack.shape[0])
    stack[top, 0], stack[top, 1], stack[top, 2] = middle, end, depth + 1
    stack[top, 3], stack[top, 4] = node, 1
    stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = start, middle, depth + 1
    stack[top + 1, 3], stack[top + 1, 4] = node, 0
    return stack, top + 2


@generic_jit
def link_child(table, parent, branch, node):
    """Record ``node``, taken from the stack as child ``branch`` of ``parent`` (-1: the
    root), in the parent's row: its first child is ``left``, its last ``right`` (children
    are taken in branch order, so the last one taken so far is the last)."""
    if parent < 0:
        return
    if branch == 0:
        table[parent, LEFT] = node
    table[parent, RIGHT] = node


@generic_jit
def push_branches(
    order,
    values,
    candidates,
    feature,
    start,
    end,
    depth,
    node,
    m,
    branch_of,
    scratch,
    value_scratch,
    stack,
    top,
    intervals,
    lower,
    upper,
):
    """Split the node's rows [start, end) by the category of nominal ``feature`` (codes
    0 .. m - 1 in ``values``), one branch per category: every other feature's slice is
    partitioned stably into the m groups, in code order (the feature's own slice is sorted
    by code already), and the m children are pushed on the stack, the last first so the
    first grows first, each with the node's value interval. ``branch_of`` (per row) and
    the scratch buffers are the grower's. Returns (stack, top, intervals)."""
    ends = np.zeros(m + 1, dtype=np.int64)  # the branches' bounds within the node
    for j in range(start, end):
        c = np.int64(values[feature, j])
        branch_of[order[feature, j]] = c
        ends[c + 1] += 1
    for c in range(m):
        ends[c + 1] += ends[c]
    filled = np.empty(m, dtype=np.int64)
    for c in range(candidates.shape[0]):
        f = candidates[c]
        if f == feature:
            continue
        for b in range(m):
            filled[b] = ends[b]
        for j in range(start, end):
            b = branch_of[order[f, j]]
            scratch[filled[b]] = order[f, j]
            value_scratch[filled[b]] = values[f, j]
            filled[b] += 1
        for j in range(end - start):
            order[f, start + j] = scratch[j]
            values[f, start + j] = value_scratch[j]
    while top + m > stack.shape[0]:
        stack = grow_array(stack, 2 * stack.shape[0])
    while top + m > intervals.shape[0]:
        intervals = grow_array(intervals, 2 * intervals.shape[0])
    for b in range(m - 1, -1, -1):
        stack[top, 0], stack[top, 1], stack[top, 2] = (
            start + ends[b],
            start + ends[b + 1],
            depth + 1,
        )
        stack[top, 3], stack[top, 4] = node, b
        intervals[top, 0], intervals[top, 1] = lower, upper
        top += 1
    return stack, top, intervals


@generic_jit
def fill_node(record, sums, weight, count, node_impurity, depth):
    """A new node's table row: a leaf (no children, feature -1, threshold -2, improvement
    NaN) with its statistics."""
    record[LEFT], record[RIGHT], record[FEATURE], record[THRESHOLD] = -1.0, -1.0, -1.0, -2.0
    record[WEIGHT], record[N_SAMPLES], record[IMPURITY] = weight, count, node_impurity
    record[DEPTH], record[IMPROVEMENT] = depth, np.nan
    for k in range(n_statistics(sums)):
        record[SUMS + k] = sums[k]


def row_table(evidence, weight, out=None) -> np.ndarray:
    """The per-sample table the grower reads (``rows``): each sample's weight, then its
    weight times its evidence row, n x (1 + K). One random read of a row fetches both (the
    gather of a node's rows is what the grower spends most of its time on). ``out``: a
    C-ordered float64 array of that shape to write it into (a splitter's buffer kept from
    one tree to the next: a fresh 24 MB table at 1M rows cost 10 ms a boosting round, its
    pages faulted in, against 4 written into a buffer)."""
    shape = (weight.shape[0], 1 + evidence.shape[1])
    usable = out is not None and out.shape == shape and out.dtype == np.float64
    table = out if usable and out.flags.c_contiguous else np.empty(shape)
    # numpy, not a compiled pass (2.3 against 4.4 ms at 1M rows, K = 2): every first fit
    # of a tree would compile it, a kernel family more to wait for (tests/test_cli.py)
    table[:, 0] = weight
    if evidence.shape[1] <= 3:  # a column at a time: 3.7 against 9.2 ms at 1M rows, K = 2
        for k in range(evidence.shape[1]):
            np.multiply(evidence[:, k], weight, out=table[:, 1 + k])
    else:  # no temporary n x K (column by column took 2.5x as long from K = 6)
        np.multiply(evidence, weight[:, None], out=table[:, 1:])
    return table


def rule_vector(rules, pure_tolerance=PURE_TOLERANCE) -> np.ndarray:
    """The stopping rules as the float64 array the kernels read: min_samples_leaf,
    min_weight_leaf, min_samples_split, max_depth, min_impurity_decrease, min_gain (NaN:
    none), pure tolerance, total weight. Counts are capped at 2^53 (exact in float64: the
    estimators accept any Python int and mean "unlimited" by a huge one)."""
    cap = float(2**53)
    return np.array(
        [
            min(float(rules.min_samples_leaf), cap),
            float(rules.min_weight_leaf),
            min(float(rules.min_samples_split), cap),
            min(float(rules.max_depth), cap),
            float(rules.min_impurity_decrease),
            np.nan if rules.min_gain is None else float(rules.min_gain),
            float(pure_tolerance),
            float(rules.total_weight),
        ]
    )
