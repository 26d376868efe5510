"""The best subset question "x in S" for a nominal feature at one node.

Where the target knows an order of the categories that holds the best subset among its
prefixes (``Target.category_order``: for two classes their proportion of the second, for
any concave impurity, Breiman et al., Theorem 4.5; for a mean response the mean, for
squared error), every prefix is tried: exact with m - 1 evaluations. Otherwise (more
classes) all 2^(m-1) - 1 subsets when m <= ``EXACT_LIMIT``; beyond that the ordering by
the proportion of the node's majority class (a heuristic, documented as such). Categories
absent from the node go to the heavier side, so a category unseen here follows the bulk of
the training data.

Splitters search with :func:`best_nominal_split`, which runs the same searches compiled
(:mod:`treekit_core.kernels.nominal_search`: the same candidates, order and sums, so the
same questions; a test grows both ways); the Python functions here are their readable
definition and the reference (``compiled=False``).
"""

from __future__ import annotations

import itertools
import types

import numpy as np

from treekit_core.builtins.targets import ClassLabels
from treekit_core.components import Split

EXACT_LIMIT = 10
#: The target whose order data without one (a splitter's own tests) is searched by.
_CLASS_LABELS = ClassLabels()


def category_statistics(codes, weights, evidence, m):
    sums = np.zeros((m, evidence.shape[1]))
    np.add.at(sums, codes, weights[:, None] * evidence)
    return sums, np.bincount(codes, weights=weights, minlength=m), np.bincount(codes, minlength=m)


def known_category_statistics(X, evidence, rows, row_weights, feature, m):
    """Per category of ``feature`` among the node's rows with a known value: weighted
    evidence sums (m x K), weight and row count."""
    x = X[rows, feature]
    known = ~np.isnan(x)
    codes = x[known].astype(np.int64)
    return category_statistics(codes, row_weights[known], evidence[rows[known]], m)


def candidate_subsets(sums, weight, present, target=None):
    """Subsets (as lists of category codes) worth evaluating; ``target`` orders the
    categories (None: the class labels' rule, :meth:`treekit_core.Target.category_order`)."""
    categories = np.flatnonzero(present)
    m = categories.size
    target = target if target is not None else _CLASS_LABELS
    score = target.category_order(sums[categories], weight[categories])
    if score is None and m > EXACT_LIMIT:
        majority = int(np.argmax(sums.sum(axis=0)))
        score = sums[categories, majority] / weight[categories]
    if score is not None:
        return order_prefixes(categories, score)
    return subsets_keeping_first(categories)


def order_prefixes(categories, score) -> list:
    """The m - 1 proper prefixes of ``categories`` ordered by ``score`` (ties kept in
    code order): the candidates where an order holds the best subset among its prefixes."""
    order = categories[np.argsort(np.asarray(score, dtype=np.float64), kind="mergesort")]
    return [list(order[: i + 1]) for i in range(categories.size - 1)]


def subsets_keeping_first(categories) -> list:
    """Every proper subset containing the first category (2^(m-1) - 1 of them): each
    two-way partition once, without its mirror."""
    first, rest = categories[0], categories[1:]
    subsets = []
    for size in range(0, categories.size - 1):
        for chosen in itertools.combinations(rest, size):
            subsets.append([first, *chosen])
    return subsets


def best_subset(
    impurity,
    params,
    sums,
    weight,
    counts,
    parent_impurity,
    min_samples_leaf,
    min_weight_leaf,
    target=None,
    totals=None,
):
    """(drop, left category codes) of the best admissible subset, or (-inf, None).
    ``totals``: (sums, weight) of the known rows (default: the categories' sums)."""
    present = counts > 0
    if present.sum() < 2:
        return -np.inf, None
    total_sums, total_weight = totals or (sums.sum(axis=0), weight.sum())
    total_count = counts.sum()
    best, best_subset_ = -np.inf, None
    for subset in candidate_subsets(sums, weight, present, target):
        left_sums = np.ascontiguousarray(sums[subset].sum(axis=0))
        left_weight, left_count = weight[subset].sum(), counts[subset].sum()
        right_sums = np.ascontiguousarray(total_sums - left_sums)
        right_weight, right_count = total_weight - left_weight, total_count - left_count
        if min(left_count, right_count) < min_samples_leaf or min(left_weight, right_weight) < max(
            min_weight_leaf, 1e-300
        ):
            continue
        drop = (
            parent_impurity
            - (
                left_weight * impurity(left_sums, left_weight, params)
                + right_weight * impurity(right_sums, right_weight, params)
            )
            / total_weight
        )
        if drop > best:
            best, best_subset_ = drop, subset
    return best, best_subset_


def subset_split(
    impurity,
    params,
    X,
    evidence,
    rows,
    row_weights,
    feature,
    m,
    node_weight,
    min_samples_leaf,
    min_weight_leaf,
    target=None,
    node_sums=None,
):
    """(drop scaled by the known fraction, bit mask, share of the known weight in the subset,
    known weight) for one nominal feature; ``node_sums``: the node's statistics (the
    totals where the feature misses no value, as the compiled search takes them)."""
    sums, weight, counts = known_category_statistics(X, evidence, rows, row_weights, feature, m)
    total_sums, known_weight = known_totals(sums, weight, counts, node_sums, node_weight, rows.size)
    if counts.sum() < 2 or known_weight <= 0:
        return -np.inf, 0, 0.5, 0.0
    parent = impurity(np.ascontiguousarray(total_sums), known_weight, params)
    drop, subset = best_subset(
        impurity,
        params,
        sums,
        weight,
        counts,
        parent,
        min_samples_leaf,
        min_weight_leaf,
        target,
        (total_sums, known_weight),
    )
    if subset is None:
        return -np.inf, 0, 0.5, 0.0
    left_weight = weight[subset].sum()
    mask = 0
    for code in subset:
        mask |= 1 << int(code)
    if left_weight >= known_weight - left_weight:  # absent categories follow the heavier side
        for code in np.flatnonzero(counts == 0):
            mask |= 1 << int(code)
    return drop * (known_weight / node_weight), mask, left_weight / known_weight, known_weight


def known_totals(sums, weight, counts, node_sums, node_weight, node_count) -> tuple:
    """(sums, weight) of a nominal feature's known rows at a node: the node's own where it
    misses no value there (``node_sums`` given; what the threshold search reads, so equal
    partitions drop equally and ties go to the earlier feature), else its categories'."""
    if node_sums is not None and counts.sum() == node_count:
        return np.asarray(node_sums, dtype=np.float64), node_weight
    return sums.sum(axis=0), weight.sum()


def multiway_split(
    impurity,
    params,
    X,
    evidence,
    rows,
    row_weights,
    feature,
    m,
    node_weight,
    min_samples_leaf,
    min_weight_leaf,
    node_sums=None,
):
    """(drop scaled by the known fraction, branch shares, known weight per branch) of the
    split with one branch per category (all m of them; a category absent here gets an
    empty branch). Admissible when two or more categories are present and each present
    one has min_samples_leaf rows and min_weight_leaf weight; else the drop is -inf."""
    sums, weight, counts = known_category_statistics(X, evidence, rows, row_weights, feature, m)
    totals = known_totals(sums, weight, counts, node_sums, node_weight, rows.size)
    known_weight = totals[1]
    present = counts > 0
    if (
        present.sum() < 2
        or known_weight <= 0
        or counts[present].min() < min_samples_leaf
        or weight[present].min() < max(min_weight_leaf, 1e-300)
    ):
        return -np.inf, None, None
    drop = partition_drop(impurity, params, sums, weight, node_weight, totals)
    return drop, tuple(weight / known_weight), weight


def partition_drop(impurity, params, sums, weight, node_weight, totals=None) -> float:
    """The impurity drop of a partition of the node's known rows into branches with class
    sums ``sums`` (b x K) and weights ``weight`` (b), scaled by the known fraction of the
    node's weight (C4.5's gain with the entropy). The known weight must be positive.
    ``totals``: (sums, weight) of the known rows (default: the branches' sums)."""
    total_sums, known = totals or (sums.sum(axis=0), weight.sum())
    parent = impurity(np.ascontiguousarray(total_sums), known, params)
    children = sum(
        weight[b] * impurity(np.ascontiguousarray(sums[b]), weight[b], params)
        for b in np.flatnonzero(weight > 0)
    )
    return float((known / node_weight) * (parent - children / known))


def split_information(branch_weights, node_weight) -> float:
    """-sum p log2 p over the branches' weights, the weight no branch took (missing values)
    counted as one more part, as C4.5 does (the handout's SplitInfo)."""
    parts = np.append(branch_weights, max(node_weight - np.sum(branch_weights), 0.0))
    p = parts[parts > 0] / node_weight
    return float(-(p * np.log2(p)).sum())


def python_nominal_questions(state, node, rules, features, mode):
    """Per feature of ``features``: (drop, branch shares, weight per branch, category mask)
    by the Python searches above (the readable definition the compiled search is tested
    against); drop -inf where no question is admissible."""
    impurity, params, data = state
    found = []
    for f in features:
        args = (
            impurity,
            params,
            data.X,
            data.evidence,
            node.rows,
            node.row_weights,
            int(f),
            int(data.n_categories[f]),
            node.weight,
            rules.min_samples_leaf,
            rules.min_weight_leaf,
        )
        if mode == "multiway":
            drop, shares, branch_weight = multiway_split(*args, node.statistics)
            found.append((drop, shares, branch_weight, 0) if shares is not None else (-np.inf,) * 4)
            continue
        target = getattr(data, "target", None)
        drop, mask, share, known = subset_split(*args, target, node.statistics)
        shares = (float(share), 1.0 - float(share))
        found.append((drop, shares, np.array(shares) * known, mask))
    return found


class CompiledNominalQuestions:
    """The same as :func:`python_nominal_questions`, searched by the compiled kernels of
    :mod:`treekit_core.kernels.nominal_search` (the target orders the categories of every
    feature in one call); per feature lazily, as the choice reads them."""

    def __init__(self, state, node, rules, features, mode):
        impurity, params, data = state
        kernels = _nominal_kernels(impurity)
        layout = data.cache.get("nominal_layout")
        if layout is None:  # per fit: the categories as int64, and the most of any feature
            counts_of = data.n_categories.astype(np.int64)
            layout = data.cache["nominal_layout"] = (counts_of, int(counts_of.max()))
        n_categories = layout[0][features]
        shape = (features.size, layout[1])
        sums = np.empty((*shape, data.evidence.shape[1]))
        weights, counts = np.empty(shape), np.empty(shape, dtype=np.int64)
        kernels.statistics(
            data.X, data.evidence, node.rows, node.row_weights, features, sums, weights, counts
        )
        self.results = nominal_questions(
            impurity,
            params,
            data.target,
            sums,
            weights,
            counts,
            n_categories,
            node.weight,
            rules,
            mode,
            node.statistics,
            node.rows.size,
        )
        self.drops, self.weights, self.n_categories = self.results[:, 0], weights, n_categories
        self.multiway = mode == "multiway"

    def __getitem__(self, a):
        """(drop, branch shares, weight per branch, category mask) of the a-th feature."""
        drop, mask, share, known = self.results[a]
        if self.multiway:
            branch_weight = self.weights[a, : self.n_categories[a]].copy()
            return drop, tuple(branch_weight / known) if known > 0 else None, branch_weight, 0
        shares = (float(share), 1.0 - float(share))
        return drop, shares, np.array(shares) * known, int(mask)


def nominal_questions(
    impurity,
    params,
    target,
    sums,
    weights,
    counts,
    n_categories,
    node_weight,
    rules,
    mode,
    node_sums=None,
    node_count=-1,
) -> np.ndarray:
    """Per nominal feature, from its categories' statistics at a node (``sums``: features x
    categories x S, ``weights`` and ``counts``: features x categories, padded past each
    feature's ``n_categories``): (drop, category mask, share of the known weight on the
    left, known weight) of its best subset question (``mode="subset"``, categories
    ordered by ``target.category_order`` where it knows an order) or its multi-way
    question; drop -inf where none is admissible. The compiled search every nominal
    search runs (a distributed grower gives it summed statistics). ``node_sums`` and
    ``node_count``: the node's statistics and rows, whose totals a feature missing no value
    there is scored with (the threshold search's, so equal partitions drop equally); None
    and -1 where unknown."""
    kernels = _nominal_kernels(impurity)
    multiway = mode == "multiway"
    scores, ordered, order_column = _EMPTY_SCORES, False, -1
    if not multiway:
        target = target if target is not None else _CLASS_LABELS
        column = target.category_order_column(sums.shape[2])
        if column is not None:  # the kernel orders the categories, or none (no call per node)
            ordered, order_column = column >= 0, int(column)
        else:
            present = counts > 0
            score = target.category_order(sums[present], weights[present])
            if score is not None:
                scores = np.zeros(counts.shape)
                scores[present], ordered = score, True
    results = np.empty((counts.shape[0], 4))
    kernels.best_nominal_questions(
        params,
        sums,
        weights,
        counts,
        n_categories,
        scores,
        ordered,
        order_column,
        node_weight,
        np.zeros(sums.shape[2]) if node_sums is None else np.ascontiguousarray(node_sums, float),
        int(node_count),
        min(rules.min_samples_leaf, 2**62),
        float(rules.min_weight_leaf),
        multiway,
        EXACT_LIMIT,
        results,
    )
    return results


def nominal_search_kernel(criterion):
    """The compiled growers' nominal search for ``criterion``
    (:func:`treekit_core.kernels.nominal_questions.best_nominal_question`: subset or multi-way
    questions), specialised to it and compiled once per machine with the node-by-node
    loop's search, as the function value a grower takes; None where the criterion's
    kernels are not specialised (a function value cannot carry the impurity)."""
    from treekit_core.kernels import nominal_search
    from treekit_core.kernels.specialised import function_kernels

    search = function_kernels(
        type(criterion).impurity,
        nominal_search,
        nominal_search.ENTRY_SIGNATURES,
        (),
        "nominal search kernels",
    )
    return search.best_nominal_question.function_value() if search.specialised else None


def compiled_nominal_search(composition, data, multiway=False):
    """What a compiled grower needs to ask the nominal features' questions itself: (the
    criterion's compiled search, :func:`nominal_search_kernel`; categories per feature;
    the statistic column ordering the categories, or -1 for none; the exhaustive subset
    search's limit), for subset questions or, with ``multiway``, multi-way ones (no order
    read). None where only the node-by-node loop can ask them: a criterion with a split
    score or searched from rows, a target whose category order only Python knows
    (:meth:`treekit_core.Target.category_order_column` None), kernels not specialised to
    the criterion (an impurity without a source file, ``TREEKIT_SPECIALISE=0``). The one
    rule both compiled growers (the presorted builder, the histogram splitter's) apply."""
    criterion = composition.criterion
    if type(criterion).split_score is not None or type(criterion).row_search is not None:
        return None
    column = -1 if multiway else composition.target.category_order_column(data.n_statistics)
    search = None if column is None else nominal_search_kernel(criterion)
    if search is None:
        return None
    return search, np.asarray(data.n_categories, dtype=np.int64), int(column), EXACT_LIMIT


#: The question kinds a compiled grower asks, by the code :func:`nominal_question_fields`
#: gives each internal node.
GROWN_KINDS = ("threshold", "subset", "multiway")


def nominal_question_fields(masks, branches, internal, registry):
    """(question kinds, each node's index into them, node fields) of a tree a compiled
    grower asked nominal questions in: ``masks`` per node (the category mask of a subset
    question, NaN elsewhere), ``branches`` per node (the branches of a multi-way question,
    NaN elsewhere; None: the grower asks none), ``internal`` per node; kinds numbered in
    the order the nodes first ask them, as the node-by-node loop numbers them. (None, None,
    None) when every internal node asks a threshold (the default)."""
    subset = ~np.isnan(masks)
    multiway = ~np.isnan(branches) if branches is not None else np.zeros_like(subset)
    if not (subset.any() or multiway.any()):
        return None, None, None
    asked = (subset + 2 * multiway)[internal].astype(np.int64)  # a GROWN_KINDS index
    first_asked = list(dict.fromkeys(asked.tolist()))
    kinds = tuple(registry.question(GROWN_KINDS[kind]) for kind in first_asked)
    index = np.zeros(len(GROWN_KINDS), dtype=np.int64)
    index[first_asked] = np.arange(len(first_asked))
    question = np.full(masks.shape[0], -1, dtype=np.int64)
    question[internal] = index[asked]
    fields = {"category_mask": np.ascontiguousarray(masks)} if subset.any() else {}
    return kinds, question, fields


def _nominal_kernels(impurity):
    """The compiled nominal searches for this impurity (specialised to it where it can be,
    compiled once per machine) and the categories' statistics, looked up once per process."""
    kernels = _NOMINAL_KERNELS.get(impurity)
    if kernels is None:
        from treekit_core.kernels import nominal_search
        from treekit_core.kernels.nominal_statistics import nominal_category_statistics
        from treekit_core.kernels.specialised import function_kernels

        search = function_kernels(
            impurity, nominal_search, nominal_search.ENTRY_SIGNATURES, (), "nominal search kernels"
        )
        kernels = types.SimpleNamespace(
            statistics=nominal_category_statistics,
            best_nominal_questions=search.best_nominal_questions,
        )
        _NOMINAL_KERNELS[impurity] = kernels
    return kernels


_NOMINAL_KERNELS: dict = {}
#: Scores of an unordered search (the kernel reads none).
_EMPTY_SCORES = np.zeros((0, 0))


def nominal_question_wins(split, score, best, best_score) -> bool:
    """Whether a nominal feature's question (``split``, ``score``; None: none) replaces the
    best threshold question found (``best``, ``best_score``; None: none): where it scores
    strictly more, or equally on an earlier feature (rpart's rule, and the compiled
    growers': :func:`treekit_core.kernels.growth.choose_question`)."""
    if split is None:
        return False
    if best is None or score > best_score:
        return score > best_score
    return score == best_score and split.feature < best.feature


def best_nominal_split(
    state, node, rules, features, mode="subset", gain_ratio=False, compiled=True
):
    """The best split of ``node`` on the nominal ``features``: a subset question (CART) or
    a multi-way question (one branch per category), scored by impurity drop or gain ratio
    (the first strictly best feature wins). ``state`` is (compiled impurity, params, data);
    ``compiled=False`` searches in Python (the reference). Returns (Split or None, score)."""
    if compiled:
        found = CompiledNominalQuestions(state, node, rules, features, mode)
        drops = found.drops
        if not gain_ratio:  # only the best feature's question is needed
            if not (drops > -np.inf).any():
                return None, -np.inf
            candidates = [int(np.argmax(drops))]
        else:
            candidates = range(len(features))
    else:
        found = python_nominal_questions(state, node, rules, features, mode)
        candidates = range(len(features))
    best, best_score = None, -np.inf
    for a in candidates:
        drop, shares, branch_weight, mask = found[a]
        if not drop > -np.inf:
            continue
        score = drop
        if gain_ratio:
            info = split_information(branch_weight, node.weight)
            score = drop / info if info > 1e-12 else -np.inf
        if score <= best_score:
            continue
        best_score = score
        f = int(features[a])
        if mode == "multiway":
            m = int(state[2].n_categories[f])
            best = Split(f, -2.0, float(drop), question="multiway", n_branches=m)
        else:
            best = Split(f, -2.0, float(drop), {"category_mask": float(mask)}, "subset")
        best.branch_shares = shares
        if gain_ratio:
            best.node_fields["gain_ratio"] = score
    return best, best_score
