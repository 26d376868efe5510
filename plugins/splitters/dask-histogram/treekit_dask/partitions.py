"""What runs on the workers: a partition's rows loaded once (bin codes, the row table and
the open node of every row), its histograms per level, and its rows moved to the nodes
they reach. Nothing here returns rows to the client: summaries, histograms and sums only.

A row missing the category a subset question asks goes to both children, weighted by the
split's shares of the known weight (C4.5's rule, which the in-memory propagator follows):
the partition then holds the row twice, as two *entries*, each with its share of the row
in that tree (``Partition.scale``) and the row it is part of (``Partition.origin``).
"""

from __future__ import annotations

import attrs
import numpy as np
from treekit_histogram.binning import code_features

from treekit_core import (
    check_sample_weight,
    encode_categories,
    encode_target_rows,
    fit_categories,
    pair_masses,
)
from treekit_core.kernels import jit, row_table

#: A feature with more distinct values than this in a partition is summarised by this many
#: evenly spaced order statistics instead of its distinct values and their counts.
EXACT_VALUES = 4096
#: A partition's column of more rows than this is first looked at through every k-th row
#: (k = rows // this): when those already hold EXACT_VALUES distinct values, their order
#: statistics are its summary (a deterministic sample, as the in-memory binning of more
#: than 200 000 rows samples too); only columns with few values are sorted whole.
SKETCH_SAMPLE = 65_536


@attrs.define(eq=False)
class Partition:
    """One partition's rows as the grower keeps them on its worker. Several trees may grow
    in the same passes (:func:`tree_specs`): the tree on every row (tree 0), for
    cross-validated pruning one per fold on the rows of the other folds, and for rejection
    and calibration by cross-validation a copy per outer fold (with its own pruning folds)."""

    codes: np.ndarray  #: uint8, rows x features: bin codes (category codes for nominal)
    rows: np.ndarray  #: float64, rows x (1 + S): weight, then weight x the target's row
    #: int64, rows x trees: the open node holding the row in each tree (-1: a leaf holds
    #: it; for a row held out of a fold's tree, -2 - the node it stopped at)
    node: np.ndarray
    fold: np.ndarray  #: int64 per row: its fold (-1: no cross-validation)
    evidence: np.ndarray | None = None  #: the target's rows, kept for held-out losses
    strata: np.ndarray | None = None  #: int64 per row: its class (class_weight reads it)
    #: float64, entries x trees: each entry's share of its row in each tree (the product of
    #: the shares of the divisions on its path); 0 x 0 while no row has been divided
    scale: np.ndarray = attrs.field(factory=lambda: np.ones((0, 0)))
    #: int64 per entry: the row (its first entry) it is a part of; None while no row has
    #: been divided (every entry is its own row)
    origin: np.ndarray | None = None
    #: whether a nominal feature of the partition has a missing value (training rows may
    #: divide)
    may_divide: bool = False
    #: whether any value of the partition is missing (held-out rows may divide too)
    has_missing: bool = False


#: Multiplier of the hash that deals rows to folds (Knuth's, 64-bit golden ratio).
FOLD_HASH = np.uint64(0x9E3779B97F4A7C15)


#: A tree's spec: (outer fold family, outer fold left out, pruning fold held out); -1: none.
MAIN_TREE = (-1, -1, -1)


def tree_specs(n_folds: int, outer=()) -> np.ndarray:
    """The trees one fit grows in the same passes, as rows (family, outer fold left out,
    pruning fold held out): the tree on every row, then one per pruning fold (its rows held
    out and followed), then, per family of outer folds (``outer``: (folds, seed) pairs),
    per outer fold a copy on the other folds' rows, each followed by its own pruning
    folds. A copy's rows are the cross-validation copies of rejection and calibration."""
    specs = [MAIN_TREE, *[(-1, -1, k) for k in range(n_folds)]]
    for family, (n_outer, _) in enumerate(outer):
        for c in range(n_outer):
            specs.append((family, c, -1))
            specs.extend((family, c, k) for k in range(n_folds))
    return np.array(specs, dtype=np.int64).reshape(-1, 3)


def outer_folds_of(first_row: int, n: int, n_folds: int, seed: int) -> np.ndarray:
    """The outer fold (rejection and calibration copies) of the rows numbered first_row ..
    first_row + n - 1: splitmix64 of the row number and ``seed``, modulo ``n_folds``
    (independent of :func:`folds_of`'s multiplicative hash, and of the partitioning)."""
    with np.errstate(over="ignore"):
        z = np.arange(first_row, first_row + n, dtype=np.uint64)
        z = z + np.uint64(seed + 1) * FOLD_HASH
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z % np.uint64(n_folds)).astype(np.int64)


def folds_of(first_row: int, n: int, n_folds: int) -> np.ndarray:
    """The fold of the rows numbered first_row .. first_row + n - 1 in the whole data (in
    partition order): a hash of the row number, so the folds do not depend on how the data
    are partitioned (not stratified: documented)."""
    if n_folds <= 1:
        return np.full(n, -1, dtype=np.int64)
    number = np.arange(first_row, first_row + n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        mixed = (number * FOLD_HASH) >> np.uint64(33)
    return (mixed % np.uint64(n_folds)).astype(np.int64)


def as_frame_or_array(X):
    """A pandas frame stays one (its category columns matter); anything else becomes a
    float64 array."""
    return X if hasattr(X, "iloc") else np.asarray(X)


def numeric_columns(X, nominal) -> np.ndarray:
    """X's numeric columns as float64 (nominal ones zeroed: they are coded apart)."""
    if hasattr(X, "iloc"):
        columns = [
            np.zeros(len(X)) if j in nominal else X.iloc[:, j].to_numpy(dtype=np.float64)
            for j in range(X.shape[1])
        ]
        return np.column_stack(columns) if columns else np.zeros((len(X), 0))
    if not nominal:
        return np.asarray(X, dtype=np.float64)
    values = np.zeros(np.shape(X))
    for j in range(values.shape[1]):
        if j not in nominal:  # a nominal column may hold labels that are no numbers
            values[:, j] = np.asarray(X[:, j], dtype=np.float64)
    return values


def summarise(X, nominal, names):
    """Per feature, what binning needs from this partition: ("values", distinct known
    values, their counts) when there are at most EXACT_VALUES, else ("sketch", evenly
    spaced order statistics, the rows each stands for); and the present categories of the
    nominal features. Refuses infinite values naming the column."""
    X = as_frame_or_array(X)
    values = numeric_columns(X, nominal)
    if np.isinf(values).any():
        j = int(np.flatnonzero(np.isinf(values).any(axis=0))[0])
        raise ValueError(f"X column {j} holds an infinite value; finite numbers or NaN expected")
    summaries = []
    for j in range(values.shape[1]):
        if j in nominal:
            summaries.append(None)
            continue
        column = values[:, j]
        column = column[~np.isnan(column)]
        if column.size > SKETCH_SAMPLE:  # many rows: are there many values? (no full sort)
            sample = np.sort(column[:: column.size // SKETCH_SAMPLE])
            if np.count_nonzero(sample[1:] != sample[:-1]) >= EXACT_VALUES:
                at = np.linspace(0, sample.size - 1, EXACT_VALUES).round().astype(np.int64)
                summaries.append(("sketch", sample[at], np.full(at.size, column.size / at.size)))
                continue
        known = np.sort(column)
        # the distinct values of the sorted column and their counts (np.unique would sort
        # it again)
        starts = np.flatnonzero(np.concatenate(([known.size > 0], known[1:] != known[:-1])))
        if starts.size <= EXACT_VALUES:
            counts = np.diff(np.append(starts, known.size)).astype(np.float64)
            summaries.append(("values", known[starts], counts))
        else:
            at = np.linspace(0, known.size - 1, EXACT_VALUES).round().astype(np.int64)
            summaries.append(("sketch", known[at], np.full(at.size, known.size / at.size)))
    categories = fit_categories(X, sorted(nominal), names) if nominal else {}
    return summaries, categories, int(values.shape[0])


def load(
    X,
    y,
    weight,
    edges,
    max_bins,
    categories,
    target,
    classes,
    first_row=0,
    n_folds=0,
    labeler=None,
    outer=(),
):
    """The partition as the grower keeps it: X binned with the global ``edges`` (nominal
    columns by their global ``categories``), y encoded by the composition's ``target``
    (class labels against the global ``classes``), rows of weight 0 left out (a removed
    row, as in memory); with ``n_folds``, each row's fold (:func:`folds_of`, the partition
    starting at row ``first_row`` of the data) and its target row; with a ``labeler``, each
    row's class (the target's strata); with ``outer`` families of outer folds, the rows of
    every tree of :func:`tree_specs`."""
    X = as_frame_or_array(X)
    n = len(X)
    # rows x features here: a worker's passes go row by row (code_features gives features x rows)
    codes = code_features(numeric_columns(X, set(categories)), edges, max_bins).T
    if categories:
        coded = np.asarray(encode_categories(X, categories))
        for j in categories:
            column = coded[:, j]
            # a missing category codes as a missing value does: the bin past the last one
            codes[:, j] = np.where(np.isnan(column), max_bins, np.nan_to_num(column)).astype(
                np.uint8
            )
    y = np.asarray(y)
    if y.shape[0] != n:
        raise ValueError(f"a partition of y has {y.shape[0]} rows, its X partition {n}")
    # with classes, the encoding's columns are the global ones
    evidence = encode_target_rows(target, y, classes, "the classes found in y")
    if weight is None:
        weight = np.ones(n)
    weight = np.asarray(weight, dtype=np.float64).reshape(-1)
    if weight.shape[0] != n or not np.isfinite(weight).all() or (weight < 0).any():
        raise ValueError(
            f"sample_weight must hold {n} finite numbers >= 0 in this partition, as its X"
        )
    if (weight > 0).any():  # the in-memory fit's bounds (its sum, subnormal weights)
        weight = check_sample_weight(weight, n)
    kept = weight > 0
    evidence = np.ascontiguousarray(evidence[kept], dtype=np.float64)
    table = row_table(evidence, weight[kept])
    fold = folds_of(first_row, n, n_folds)[kept]
    outer_fold = [outer_folds_of(first_row, n, k, seed)[kept] for k, seed in outer]
    specs = tree_specs(n_folds, outer)
    node = np.empty((int(kept.sum()), specs.shape[0]), dtype=np.int64)
    for t, (family, left_out, held_out) in enumerate(specs):
        # a tree's root is node t; its held-out rows are followed (-2 - node), the rows of
        # the outer fold it leaves out are in no node of it (-1)
        node[:, t] = t
        if held_out >= 0:
            node[fold == held_out, t] = -2 - t
        if family >= 0:
            node[outer_fold[family] == left_out, t] = -1
    strata = None if labeler is None else np.asarray(target.strata(evidence, labeler))
    codes = np.ascontiguousarray(codes[kept])
    nominal = sorted(categories)
    return Partition(
        codes,
        table,
        node,
        fold,
        evidence if n_folds else None,
        strata,
        may_divide=bool((codes[:, nominal] == max_bins).any()) if nominal else False,
        has_missing=bool((codes == max_bins).any()),
    )


def may_divide(part: Partition) -> bool:
    """Whether a row of the partition may go down both branches of a subset question."""
    return part.may_divide


def class_counts(part: Partition, n_classes: int) -> np.ndarray:
    """How many of the partition's rows (of positive weight) each class has."""
    return np.bincount(part.strata, minlength=n_classes).astype(np.float64)


def reweight(part: Partition, class_weight: np.ndarray) -> Partition:
    """The partition with every row's weight (and weighted target row) multiplied by its
    class's weight (scikit-learn's class_weight); a row whose class weighs 0 becomes a
    removed row, in every tree, as in memory."""
    factor = class_weight[part.strata]
    rows = part.rows * factor[:, None]
    node = part.node.copy()
    node[factor <= 0] = -1
    return attrs.evolve(part, rows=rows, node=node)


def root_statistics(part: Partition) -> np.ndarray:
    """Per tree, (rows, weight, the K weighted sums) of the partition's rows at its root,
    summed in row order."""
    totals = np.zeros((part.node.shape[1], 1 + part.rows.shape[1]))
    _sum_rows(part.rows, part.node, totals)
    return totals


@jit()
def _sum_rows(rows, node, totals):
    for t in range(node.shape[1]):
        for r in range(rows.shape[0]):
            if node[r, t] < 0:  # held out of this tree
                continue
            totals[t, 0] += 1.0
            for c in range(rows.shape[1]):
                totals[t, 1 + c] += rows[r, c]


@jit()
def _node_histograms(codes, rows, node, scale, slot_of_node, hist, with_shares):
    """hist[slot] (features x bins x (count, weight, K sums[, shares])) of the entries of
    every node with a slot (``slot_of_node[node] >= 0``), in one pass over the partition;
    an entry counts once, weighs its ``scale`` share of its row, and ``with_shares`` adds
    that share to a last channel."""
    hist[:] = 0.0
    n_stats = rows.shape[1] - 1
    last = hist.shape[3] - 1
    scaled = scale.shape[0] > 0
    for r in range(codes.shape[0]):
        for t in range(node.shape[1]):
            at = node[r, t]
            if at < 0:  # in a leaf, or held out of this tree
                continue
            slot = slot_of_node[at]
            if slot < 0:
                continue
            share = scale[r, t] if scaled else 1.0
            weight = rows[r, 0] * share
            for f in range(codes.shape[1]):
                b = codes[r, f]
                hist[slot, f, b, 0] += 1.0
                hist[slot, f, b, 1] += weight
                for k in range(n_stats):
                    hist[slot, f, b, 2 + k] += rows[r, 1 + k] * share
                if with_shares:
                    hist[slot, f, b, last] += share


def histograms(
    part: Partition, slot_of_node: np.ndarray, n_slots: int, n_bins: int, with_shares=False
):
    """The histograms of the partition's rows at the nodes given a slot (``with_shares``:
    and every bin's rows counted by their shares, in a last channel)."""
    width = 1 + part.rows.shape[1] + bool(with_shares)
    hist = np.empty((n_slots, part.codes.shape[1], n_bins, width))
    _node_histograms(
        part.codes, part.rows, part.node, part.scale, slot_of_node, hist, bool(with_shares)
    )
    return hist


@jit()
def _divides(code, share, missing_code) -> bool:
    """Whether an entry answering ``code`` goes to both children of a split whose left
    share of the known weight is ``share`` (NaN: the split sends missing values one way)."""
    return code == missing_code and share > 0.0 and share < 1.0


@jit()
def _count_divided(codes, node, feature, divide, missing_code):
    """How many entries :func:`_route` will divide."""
    count = 0
    for r in range(codes.shape[0]):
        for t in range(node.shape[1]):
            at = node[r, t]
            if at <= -2:
                at = -2 - at
            elif at < 0:
                continue
            f = feature[at]
            if f >= 0 and _divides(codes[r, f], divide[at], missing_code):
                count += 1
    return count


@jit()
def _route(
    codes, node, scale, feature, goes_left, left, right, divide, missing_code, divided, shares
):
    """Every entry to the child its code answers; an entry that :func:`_divides` keeps the
    left child with its share and writes (entry, tree, right child) and the right share
    into ``divided`` and ``shares`` (as many rows as :func:`_count_divided` counted)."""
    written = 0
    scaled = scale.shape[0] > 0
    for r in range(codes.shape[0]):
        for t in range(node.shape[1]):
            at = node[r, t]
            held_out = at <= -2
            if held_out:  # a held-out row follows its fold's tree to where it stops
                at = -2 - at
            elif at < 0:
                continue
            f = feature[at]
            if f < 0:  # the node stays a leaf
                if not held_out:
                    node[r, t] = -1
                continue
            code = codes[r, f]
            if _divides(code, divide[at], missing_code):
                current = scale[r, t] if scaled else 1.0
                divided[written, 0], divided[written, 1] = r, t
                divided[written, 2] = -2 - right[at] if held_out else right[at]
                shares[written] = current * (1.0 - divide[at])
                written += 1
                scale[r, t] = current * divide[at]
                child = left[at]
            else:
                child = left[at] if goes_left[at, code] else right[at]
            node[r, t] = -2 - child if held_out else child


def route(part: Partition, feature, goes_left, left, right, divide, missing_code) -> Partition:
    """The partition with every row moved from its node to the child its code answers
    (``feature[node]`` < 0: the node is a leaf, and its rows leave the growth; a row held
    out of a tree stays there, marked). A row missing the category of a subset question
    whose left share ``divide[node]`` is strictly between 0 and 1 goes to both children:
    its entry keeps the left child and that share of its scale, a new entry takes the
    right one with the rest, in that tree only."""
    node = part.node.copy()
    # only a missing value divides a row (no pass over the rows to count where none is)
    n_divided = (
        _count_divided(part.codes, node, feature, divide, missing_code) if part.has_missing else 0
    )
    scale = part.scale
    if n_divided and scale.shape[0] == 0:
        scale = np.ones(node.shape)
    elif n_divided:
        scale = scale.copy()
    divided = np.empty((n_divided, 3), dtype=np.int64)
    shares = np.empty(n_divided)
    _route(
        part.codes, node, scale, feature, goes_left, left, right, divide, missing_code,
        divided, shares,
    )  # fmt: skip
    if not n_divided:
        return attrs.evolve(part, node=node)
    entry, tree = divided[:, 0], divided[:, 1]
    new_node = np.full((n_divided, node.shape[1]), -1, dtype=np.int64)
    new_node[np.arange(n_divided), tree] = divided[:, 2]
    new_scale = np.ones((n_divided, node.shape[1]))
    new_scale[np.arange(n_divided), tree] = shares
    origin = part.origin if part.origin is not None else np.arange(node.shape[0])

    def extend(array):
        return None if array is None else np.concatenate([array, array[entry]])

    return attrs.evolve(
        part,
        codes=extend(part.codes),
        rows=extend(part.rows),
        node=np.concatenate([node, new_node]),
        scale=np.concatenate([scale, new_scale]),
        fold=extend(part.fold),
        evidence=extend(part.evidence),
        strata=extend(part.strata),
        origin=extend(origin),
    )


def held_out_losses(part: Partition, trees, values, decisions, target, labeler) -> np.ndarray:
    """Per level of the pruning path: (sum of w x loss, sum of w x loss^2) of the rows held
    out of the fold trees ``trees`` (one pruning group's), each predicted by the node
    ``values[level, node]`` / ``decisions[level, node]`` gives for the node it stopped at in
    its fold's tree (the pruned tree's leaf above it), the loss the target's
    ``sample_loss`` counts."""
    totals = np.zeros((values.shape[0], 2))
    if part.evidence is None:
        return totals
    trees = np.asarray(trees, dtype=np.int64)
    held = part.node[:, trees] <= -2  # an entry is held out of one tree of a group at most
    # rows a class weight of 0 removed (weight 0) are in no tree
    held &= (part.rows[:, 0] > 0)[:, None]
    entries, which = np.nonzero(held)
    tree = trees[which]
    stopped = -2 - part.node[entries, tree]
    if part.origin is None:  # every held-out row stopped at one node
        weight = part.rows[entries, 0]
        for level in range(values.shape[0]):
            loss = target.sample_loss(
                part.evidence[entries], values[level, stopped], decisions[level, stopped], labeler
            )
            totals[level] = (weight * loss).sum(), (weight * loss * loss).sum()
        return totals
    # a row divided on its way is predicted by its entries' nodes mixed by their shares, as
    # the evaluator mixes the leaves a sample missing a tested value reaches
    share = part.scale[entries, tree] if part.scale.shape[0] else np.ones(entries.size)
    rows, first, inverse = np.unique(part.origin[entries], return_index=True, return_inverse=True)
    first = entries[first]
    weight = part.rows[first, 0]
    for level in range(values.shape[0]):
        mixed = np.zeros((rows.size, values.shape[2]))
        np.add.at(mixed, inverse, values[level, stopped] * share[:, None])
        loss = target.sample_loss(
            part.evidence[first], mixed, target.decide(mixed, labeler), labeler
        )
        totals[level] = (weight * loss).sum(), (weight * loss * loss).sum()
    return totals


def add(*arrays):
    """The sum of histograms (or sums) from several partitions: a step of the reduction."""
    total = np.array(arrays[0], dtype=np.float64, copy=True)
    for other in arrays[1:]:
        total += other
    return total


def score_masses(scores, correct, weight) -> tuple:
    """(distinct scores, correct, summed weights): every distinct (score, correct) pair once
    with its rows' weight, which is all the reject rules and calibration read."""
    return pair_masses(scores, np.asarray(correct, dtype=bool), weight)


def decision_scores(X, y, weight, model, copies, outer, first_row) -> dict:
    """The score masses (:func:`score_masses`) of the partition's rows of positive weight:
    ``"model"``, by the fitted model; and per family f of outer folds (``outer``) and fold
    c, by its copy ``copies[f][c]``, ``(f, c, "held_out")`` of the fold's rows and ``(f, c,
    "own")`` of the copy's own training rows. Only masses leave the worker."""
    X = as_frame_or_array(X)
    n = len(X)
    y = np.asarray(y)
    weight = np.ones(n) if weight is None else np.asarray(weight, dtype=np.float64).reshape(-1)
    kept = np.flatnonzero(weight > 0)
    X = X.iloc[kept] if hasattr(X, "iloc") else X[kept]
    y, weight = y[kept], weight[kept]
    found = {}
    if model is not None:
        found["model"] = score_masses(*model.decision_scores(X, y, weight))
    for family, (n_outer, seed) in enumerate(outer):
        fold = outer_folds_of(first_row, n, n_outer, seed)[kept]
        for c in range(n_outer):
            scores, correct, w = copies[family][c].decision_scores(X, y, weight)
            held = fold == c
            found[(family, c, "held_out")] = score_masses(scores[held], correct[held], w[held])
            found[(family, c, "own")] = score_masses(scores[~held], correct[~held], w[~held])
    return found
