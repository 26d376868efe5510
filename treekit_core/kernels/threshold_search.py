"""The exhaustive threshold search: a feature's sorted values swept with running sums of
the statistics (:func:`scan_sorted_feature`, :func:`scan_within_bounds` under a monotonic
constraint), and one node's best cut over its candidate features from gathered buffers
(:func:`best_split_of_node`: missing values by C4.5's shares, the node-by-node loop;
:func:`best_split_missing_on_one_side`: scikit-learn's, every missing row to one side).

Written once for every criterion: the functions that take the criterion's compiled
impurity first carry no signature or cache of their own; :mod:`.growth` imports them, so the
modules :mod:`.specialised` generates per criterion from its source copy them with the
impurity a global, and :mod:`.split_search` and :mod:`.node_search` compile them with the
impurity a function value.
"""

import numpy as np

from treekit_core.kernels.compiling import STACK_STATS, generic_jit, stack_scratch
from treekit_core.numerics import FEATURE_THRESHOLD

#: The value limits of a threshold scan without a monotonic constraint (never read: the
#: sign is 0); a global, so read-only: only for kernels compiled without a signature.
UNBOUNDED = np.array([-np.inf, np.inf])


# -- the exhaustive threshold search --------------------------------------------


@generic_jit
def n_statistics(sums):
    """How many statistics ``sums`` holds: its length. Every loop of the threshold
    searches and the presorted grower over a node's statistics runs to this number, so
    that one definition can fix it: a module :mod:`.specialised` generates for a criterion
    whose impurity reads a fixed number of statistics (``Criterion.fixed_statistics``:
    squared error's two) replaces it with that number as a constant
    (:data:`.specialised.FIXED_STATISTICS`), and LLVM unrolls those loops (a fifth of a
    regression tree's fit went to running them for an unknown length)."""
    return sums.shape[0]


@generic_jit
def scan_sorted_feature(
    impurity,
    params,
    values,
    weighted_evidence,
    weights,
    parent_sums,
    parent_weight,
    parent_impurity,
    min_samples_leaf,
    min_weight_leaf,
    left_sums,
    right_sums,
):
    """Best cut of one feature whose node samples are sorted by value.

    ``weighted_evidence[j]`` is sample j's weight times its evidence row. Returns
    (impurity drop, threshold, number of samples on the left); the drop is -inf when no
    cut is admissible. ``left_sums`` and ``right_sums`` are scratch buffers of length K.
    """
    return scan_within_bounds(
        impurity,
        params,
        values,
        weighted_evidence,
        weights,
        parent_sums,
        parent_weight,
        parent_impurity,
        min_samples_leaf,
        min_weight_leaf,
        left_sums,
        right_sums,
        0.0,
        UNBOUNDED,
    )


@generic_jit
def scan_within_bounds(
    impurity,
    params,
    values,
    weighted_evidence,
    weights,
    parent_sums,
    parent_weight,
    parent_impurity,
    min_samples_leaf,
    min_weight_leaf,
    left_sums,
    right_sums,
    sign,
    limits,
):
    """:func:`scan_sorted_feature` for a feature under a monotonic constraint ``sign``
    (1, -1; 0: none) at a node whose value limits are ``limits``: a cut is admissible only
    where :func:`within_bounds` holds (scikit-learn's rule)."""
    n = values.shape[0]
    n_stats = n_statistics(parent_sums)
    best_drop = -np.inf
    best_threshold = 0.0
    best_position = -1
    if n < 2 or values[n - 1] <= values[0] + FEATURE_THRESHOLD:
        return best_drop, best_threshold, best_position
    for k in range(n_stats):
        left_sums[k] = 0.0
    left_weight = 0.0
    for j in range(n - 1):
        for k in range(n_stats):
            left_sums[k] += weighted_evidence[j, k]
        left_weight += weights[j]
        right_weight = parent_weight - left_weight
        if not admissible_cut(
            values, j, n, left_weight, right_weight, min_samples_leaf, min_weight_leaf
        ):
            continue
        n_left = j + 1
        bound = drop_bound(
            impurity, params, parent_sums, parent_weight, parent_impurity, left_sums, left_weight
        )
        if bound <= best_drop * parent_weight:
            continue  # cannot beat the best cut: its drop's divisions are not needed
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
            continue
        if drop > best_drop:
            best_drop = drop
            best_position = n_left
            best_threshold = cut_threshold(values, j)
    return best_drop, best_threshold, best_position


@generic_jit
def admissible_cut(values, j, count, left_weight, right_weight, min_samples_leaf, min_weight_leaf):
    """Whether a threshold search may cut ``count`` rows sorted by ``values`` after row j:
    the values on both sides differ (scikit-learn's FEATURE_THRESHOLD) and both sides keep
    min_samples_leaf rows and min_weight_leaf weight. The one rule every threshold search
    (running sums, absolute deviations, log-rank) applies."""
    if values[j + 1] <= values[j] + FEATURE_THRESHOLD:
        return False
    n_left = j + 1
    if n_left < min_samples_leaf or count - n_left < min_samples_leaf:
        return False
    return not (left_weight < min_weight_leaf or right_weight < min_weight_leaf)


@generic_jit
def bounded_value(limits, sums, weight):
    """The value monotonic constraints order, of a side with these statistics and weight:
    a ratio of linear functions of (weight, statistics) whose coefficients follow the two
    bounds in ``limits`` (``Constraints.limits``: lower, upper, the numerator's 1 + K
    coefficients, the denominator's 1 + K). A class share is count / weight, a mean is
    sum / weight, a rate events / time; the zero terms add exactly nothing, so the value
    has the bits of the plain quotient."""
    n_stats = sums.shape[0]
    numerator = limits[2] * weight
    denominator = limits[3 + n_stats] * weight
    for k in range(n_stats):
        numerator += limits[3 + k] * sums[k]
        denominator += limits[4 + n_stats + k] * sums[k]
    return numerator / denominator


@generic_jit
def within_bounds(sign, limits, left_sums, left_weight, right_sums, right_weight):
    """Whether a binary cut on a feature with monotonic constraint ``sign`` (1: the value
    rises with the feature, -1: falls) is admissible at a node whose values must lie in
    [``limits[0]``, ``limits[1]``]: both sides' unclipped values (:func:`bounded_value`) lie
    within the bounds and are ordered by the constraint (scikit-learn's
    ``_check_monotonicity``; the one rule every search under a constraint applies)."""
    left = bounded_value(limits, left_sums, left_weight)
    right = bounded_value(limits, right_sums, right_weight)
    lower, upper = limits[0], limits[1]
    return (
        left >= lower
        and right >= lower
        and left <= upper
        and right <= upper
        and (left - right) * sign <= 0.0
    )


@generic_jit
def cut_threshold(values, j):
    """The threshold of a cut after row j of sorted ``values``: the midpoint, or the left
    value where the midpoint rounds onto the right one or overflows (scikit-learn's)."""
    threshold = values[j] / 2.0 + values[j + 1] / 2.0
    if threshold == values[j + 1] or threshold == np.inf or threshold == -np.inf:
        threshold = values[j]
    return threshold


@generic_jit
def split_drop(
    impurity,
    params,
    parent_sums,
    parent_weight,
    parent_impurity,
    left_sums,
    left_weight,
    right_sums,
):
    """The impurity drop of a binary split, i(t) - (w_L i(L) + w_R i(R)) / w_t, given the
    left side's statistics and weight (the right side's sums are written into
    ``right_sums``): the one expression every threshold search evaluates, so searches over
    the same partition agree to the last bit."""
    for k in range(n_statistics(parent_sums)):
        right_sums[k] = parent_sums[k] - left_sums[k]
    right_weight = parent_weight - left_weight
    return (
        parent_impurity
        - (
            left_weight * impurity(left_sums, left_weight, params)
            + right_weight * impurity(right_sums, right_weight, params)
        )
        / parent_weight
    )


@generic_jit
def drop_bound(
    impurity,
    params,
    parent_sums,
    parent_weight,
    parent_impurity,
    left_sums,
    left_weight,
):
    """A number above ``parent_weight`` times the drop :func:`split_drop` computes for
    this cut (given by its left side's sums and weight, as there), which a threshold
    search compares with its best drop times ``parent_weight`` before it computes the
    drop: +inf here (every cut is scored). A kernel module specialised to a criterion with
    a ``drop_bound`` (:mod:`.specialised`, :data:`BOUNDED_DROP` there) replaces it with the
    criterion's bound, which skips the drop of every cut that cannot beat the best one
    found (squared error: two divisions instead of five)."""
    return np.inf


# -- one node at a time, on gathered buffers (missing values, nominal features) ---


@generic_jit
def gather_sorted_feature(
    X, evidence, rows, row_weights, feature, unsorted, values, weighted, weights
):
    """Copy the node's samples sorted by ``X[:, feature]`` into the buffers; samples with a
    missing value (NaN) go last. Returns the number of samples with a known value."""
    n = rows.shape[0]
    n_stats = evidence.shape[1]
    for j in range(n):
        unsorted[j] = X[rows[j], feature]
    order = np.argsort(unsorted, kind="mergesort")  # stable, NaN last
    known = 0
    for j in range(n):
        i = order[j]
        values[j] = unsorted[i]
        if not np.isnan(unsorted[i]):
            known += 1
        weights[j] = row_weights[i]
        r = rows[i]
        for k in range(n_stats):
            weighted[j, k] = row_weights[i] * evidence[r, k]
    return known


@generic_jit
def gather_ranked_feature(X, rows, row_weights, feature, rank_of, unsorted, values, weights, ranks):
    """The node's rows sorted by ``X[:, feature]`` (stable, missing values last) into
    ``values``, their weights and the ranks ``rank_of`` gives them (a search from rows:
    absolute deviations, log-rank). Returns (rows with a known value, their weight);
    ``unsorted[j]`` keeps row j's value, and the returned order maps positions to rows."""
    n = rows.shape[0]
    for j in range(n):
        unsorted[j] = X[rows[j], feature]
    order = np.argsort(unsorted[:n], kind="mergesort")  # stable, NaN last
    known = 0
    known_weight = 0.0
    for j in range(n):
        i = order[j]
        values[j] = unsorted[i]
        weights[j] = row_weights[i]
        ranks[j] = rank_of[i]
        if not np.isnan(unsorted[i]):
            known += 1
            known_weight += row_weights[i]
    return known, known_weight, order


@generic_jit
def sum_known(weighted, weights, known, sums):
    """Statistics (into ``sums``) and total weight of the first ``known`` sorted samples,
    those with a known value (gather_sorted_feature puts missing values last)."""
    n_stats = sums.shape[0]
    for k in range(n_stats):
        sums[k] = 0.0
    total = 0.0
    for j in range(known):
        total += weights[j]
        for k in range(n_stats):
            sums[k] += weighted[j, k]
    return total


@generic_jit
def best_split_of_node(
    impurity,
    params,
    X,
    evidence,
    rows,
    row_weights,
    parent_sums,
    parent_weight,
    features,
    min_samples_leaf,
    min_weight_leaf,
):
    """Best (feature, threshold, drop, missing share) over ``features`` for the rows of a node.

    ``row_weights`` are the samples' weights at this node (fractional under soft
    propagation). A feature with missing values is judged on its known values, its drop
    scaled by their weight fraction (C4.5); the missing share is the known weight sent left.
    Features are tried in the given order; the first strictly best wins. Returns feature -1
    when no admissible cut exists.
    """
    return best_split_within_bounds(
        impurity,
        params,
        X,
        evidence,
        rows,
        row_weights,
        parent_sums,
        parent_weight,
        features,
        min_samples_leaf,
        min_weight_leaf,
        np.zeros(X.shape[1]),
        np.array([-np.inf, np.inf]),  # a writable array: the entry point's type
    )


@generic_jit
def best_split_within_bounds(
    impurity,
    params,
    X,
    evidence,
    rows,
    row_weights,
    parent_sums,
    parent_weight,
    features,
    min_samples_leaf,
    min_weight_leaf,
    signs,
    limits,
):
    """:func:`best_split_of_node` under monotonic constraints: ``signs[f]`` is feature f's
    (1, -1; 0: none) and ``limits`` the node's value limits (:func:`within_bounds`). A
    feature with missing values is judged on its known rows, as without constraints."""
    n = rows.shape[0]
    n_stats = evidence.shape[1]
    values = np.empty(n)
    unsorted = np.empty(n)
    weighted = np.empty((n, n_stats))
    weights = np.empty(n)
    if n_stats <= STACK_STATS:  # the sums on the stack: stack_scratch says why
        left_sums, right_sums = stack_scratch(n_stats), stack_scratch(n_stats)
    else:
        left_sums, right_sums = np.empty(n_stats), np.empty(n_stats)
    known_sums = np.empty(n_stats)
    parent_impurity = impurity(parent_sums, parent_weight, params)
    best_feature = -1
    best_threshold = 0.0
    best_drop = -np.inf
    best_share = 0.5
    for f in features:
        known = gather_sorted_feature(
            X, evidence, rows, row_weights, f, unsorted, values, weighted, weights
        )
        if known == n:  # no missing value: the node's own statistics
            sums, weight, base = parent_sums, parent_weight, parent_impurity
        else:
            weight = sum_known(weighted, weights, known, known_sums)
            if weight <= 0.0:
                continue
            sums, base = known_sums, impurity(known_sums, weight, params)
        drop, threshold, position = scan_within_bounds(
            impurity,
            params,
            values[:known],
            weighted[:known],
            weights[:known],
            sums,
            weight,
            base,
            min_samples_leaf,
            min_weight_leaf,
            left_sums,
            right_sums,
            signs[f],
            limits,
        )
        if position < 0:
            continue
        if known < n:
            drop *= weight / parent_weight
        if drop > best_drop:
            best_drop = drop
            best_feature = f
            best_threshold = threshold
            left = 0.0
            for j in range(position):
                left += weights[j]
            best_share = left / weight
    return best_feature, best_threshold, best_drop, best_share


# -- missing values on one side (scikit-learn's, LightGBM's) ----------------------

#: The threshold of the cut that sends every known value left and the missing ones right
#: (scikit-learn's is +inf, which a model file does not take; every finite value is <= it).
ALL_KNOWN_LEFT = np.finfo(np.float64).max


@generic_jit
def best_side_cut(
    impurity,
    params,
    values,
    weighted,
    weights,
    known,
    parent_sums,
    parent_weight,
    parent_impurity,
    min_samples_leaf,
    min_weight_leaf,
    left_sums,
    right_sums,
    missing_sums,
    sign,
    limits,
):
    """scikit-learn's search of one feature at a node (``node_split_best`` since 1.3): the
    node's n rows sorted by value with the missing ones last (the first ``known`` have a
    value). Every cut between known values is tried with the missing rows all on the right,
    then all on the left, then the cut that sends every known row left and the missing ones
    right (threshold :data:`ALL_KNOWN_LEFT`); the first strictly best wins. A feature
    without missing rows sends a missing value at prediction to the side with more rows
    (ties: right), as scikit-learn does. Returns (drop, threshold, share of a missing value
    sent left: 1 or 0); drop -inf when no cut is admissible."""
    n = values.shape[0]
    n_stats = parent_sums.shape[0]
    best_drop = -np.inf
    best_threshold = 0.0
    best_share = 0.0
    n_missing = n - known
    missing_weight = 0.0
    for k in range(n_stats):
        missing_sums[k] = 0.0
    for j in range(known, n):
        missing_weight += weights[j]
        for k in range(n_stats):
            missing_sums[k] += weighted[j, k]
    for missing_left in range(2 if n_missing > 0 else 1):
        left_weight = missing_weight if missing_left == 1 else 0.0
        for k in range(n_stats):
            left_sums[k] = missing_sums[k] if missing_left == 1 else 0.0
        for j in range(known - 1):
            for k in range(n_stats):
                left_sums[k] += weighted[j, k]
            left_weight += weights[j]
            if values[j + 1] <= values[j] + FEATURE_THRESHOLD:
                continue
            n_left = j + 1 + (n_missing if missing_left == 1 else 0)
            right_weight = parent_weight - left_weight
            if n_left < min_samples_leaf or n - n_left < min_samples_leaf:
                continue
            if left_weight < min_weight_leaf or right_weight < min_weight_leaf:
                continue
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
                continue
            if drop > best_drop:
                best_drop = drop
                best_threshold = cut_threshold(values, j)
                if n_missing > 0:
                    best_share = 1.0 if missing_left == 1 else 0.0
                else:
                    best_share = 1.0 if n_left > n - n_left else 0.0
    if n_missing > 0 and known >= min_samples_leaf and n_missing >= min_samples_leaf:
        left_weight = parent_weight - missing_weight
        for k in range(n_stats):
            left_sums[k] = parent_sums[k] - missing_sums[k]
        if left_weight >= min_weight_leaf and missing_weight >= min_weight_leaf:
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
            admissible = sign == 0.0 or within_bounds(
                sign, limits, left_sums, left_weight, right_sums, missing_weight
            )
            if admissible and drop > best_drop:
                best_drop = drop
                best_threshold = ALL_KNOWN_LEFT
                best_share = 0.0
    return best_drop, best_threshold, best_share


@generic_jit
def best_split_missing_on_one_side(
    impurity,
    params,
    X,
    evidence,
    rows,
    row_weights,
    parent_sums,
    parent_weight,
    features,
    min_samples_leaf,
    min_weight_leaf,
    signs,
    limits,
):
    """:func:`best_split_within_bounds` with scikit-learn's missing values: a feature's
    missing rows go to one side together, chosen with the cut (:func:`best_side_cut`),
    and its drop is the whole node's. A feature whose known values are all equal (or
    that has none) is not split on, as scikit-learn deems it constant. Features in the
    given order, the first strictly best wins; (feature -1 when no cut is admissible,
    threshold, drop, share of a missing value sent left)."""
    n = rows.shape[0]
    n_stats = evidence.shape[1]
    values = np.empty(n)
    unsorted = np.empty(n)
    weighted = np.empty((n, n_stats))
    weights = np.empty(n)
    left_sums, right_sums = np.empty(n_stats), np.empty(n_stats)
    missing_sums = np.empty(n_stats)
    parent_impurity = impurity(parent_sums, parent_weight, params)
    best_feature = -1
    best_threshold = 0.0
    best_drop = -np.inf
    best_share = 0.0
    for f in features:
        known = gather_sorted_feature(
            X, evidence, rows, row_weights, f, unsorted, values, weighted, weights
        )
        if known == 0 or values[known - 1] <= values[0] + FEATURE_THRESHOLD:
            continue
        drop, threshold, share = best_side_cut(
            impurity,
            params,
            values,
            weighted,
            weights,
            known,
            parent_sums,
            parent_weight,
            parent_impurity,
            min_samples_leaf,
            min_weight_leaf,
            left_sums,
            right_sums,
            missing_sums,
            signs[f],
            limits,
        )
        if drop > best_drop:
            best_feature, best_threshold, best_drop, best_share = f, threshold, drop, share
    return best_feature, best_threshold, best_drop, best_share
