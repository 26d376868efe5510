"""What runs on the workers: a partition's rows loaded once (bin codes, the row table and
the open node of every row), its histograms per level, and its rows moved to the nodes
they reach. Nothing here returns rows to the client: summaries, histograms and sums only.
"""

from __future__ import annotations

import attrs
import numpy as np
from treekit_histogram.binning import code_features

from treekit_core import encode_categories, fit_categories
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
    in the same passes: the tree on every row (tree 0) and, for cross-validated pruning,
    one per fold k (tree k + 1) on the rows of the other folds."""

    codes: np.ndarray  #: uint8, rows x features: bin codes (category codes for nominal)
    rows: np.ndarray  #: float64, rows x (1 + S): weight, then weight x the target's row
    #: int64, rows x trees: the open node holding the row in each tree (-1: a leaf holds
    #: it; for a row held out of a fold's tree, -2 - the node it stopped at)
    node: np.ndarray
    fold: np.ndarray  #: int64 per row: its fold (-1: no cross-validation)
    evidence: np.ndarray | None = None  #: the target's rows, kept for held-out losses
    strata: np.ndarray | None = None  #: int64 per row: its class (class_weight reads it)


#: Multiplier of the hash that deals rows to folds (Knuth's, 64-bit golden ratio).
FOLD_HASH = np.uint64(0x9E3779B97F4A7C15)


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
):
    """The partition as the grower keeps it: X binned with the global ``edges`` (nominal
    columns by their global ``categories``), y encoded by the composition's ``target``
    (class labels against the global ``classes``), rows of weight 0 left out (a removed
    row, as in memory); with ``n_folds``, each row's fold (:func:`folds_of`, the partition
    starting at row ``first_row`` of the data) and its target row; with a ``labeler``, each
    row's class (the target's strata)."""
    X = as_frame_or_array(X)
    n = len(X)
    codes = code_features(numeric_columns(X, set(categories)), edges, max_bins)
    if categories:
        coded = np.asarray(encode_categories(X, categories))
        for j in categories:
            column = coded[:, j]
            if np.isnan(column).any():
                raise ValueError(
                    f"X column {j} (nominal) has a missing value: the Dask estimators send "
                    "no row down both branches; make the missing value a category of its own"
                )
            codes[:, j] = column.astype(np.uint8)
    y = np.asarray(y)
    if y.shape[0] != n:
        raise ValueError(f"a partition of y has {y.shape[0]} rows, its X partition {n}")
    if classes is not None:  # every class first, so the encoding's columns are global
        encoded = target.encode(np.concatenate([classes, y]), n + len(classes))
        if encoded.labels is None or list(encoded.labels) != list(classes):
            raise ValueError("y holds a label that is not among the classes found in y")
        evidence = encoded.rows[len(classes) :]
    else:
        evidence = target.encode(y, n).rows
    if weight is None:
        weight = np.ones(n)
    weight = np.asarray(weight, dtype=np.float64).reshape(-1)
    if weight.shape[0] != n or not np.isfinite(weight).all() or (weight < 0).any():
        raise ValueError(
            f"sample_weight must hold {n} finite numbers >= 0 in this partition, as its X"
        )
    kept = weight > 0
    evidence = np.ascontiguousarray(evidence[kept], dtype=np.float64)
    table = row_table(evidence, weight[kept])
    fold = folds_of(first_row, n, n_folds)[kept]
    node = np.zeros((int(kept.sum()), 1 + max(n_folds, 0)), dtype=np.int64)
    for k in range(n_folds):  # fold k's tree (k + 1) holds the other folds' rows at its root
        node[:, k + 1] = np.where(fold == k, -2 - (k + 1), k + 1)
    strata = None if labeler is None else np.asarray(target.strata(evidence, labeler))
    return Partition(
        np.ascontiguousarray(codes[kept]),
        table,
        node,
        fold,
        evidence if n_folds else None,
        strata,
    )


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
def _node_histograms(codes, rows, node, slot_of_node, hist):
    """hist[slot] (features x bins x (count, weight, K sums)) of the rows of every node
    with a slot (``slot_of_node[node] >= 0``), in one pass over the partition."""
    hist[:] = 0.0
    n_stats = rows.shape[1] - 1
    for r in range(codes.shape[0]):
        for t in range(node.shape[1]):
            at = node[r, t]
            if at < 0:  # in a leaf, or held out of this tree
                continue
            slot = slot_of_node[at]
            if slot < 0:
                continue
            weight = rows[r, 0]
            for f in range(codes.shape[1]):
                b = codes[r, f]
                hist[slot, f, b, 0] += 1.0
                hist[slot, f, b, 1] += weight
                for k in range(n_stats):
                    hist[slot, f, b, 2 + k] += rows[r, 1 + k]


def histograms(part: Partition, slot_of_node: np.ndarray, n_slots: int, n_bins: int):
    """The histograms of the partition's rows at the nodes given a slot."""
    hist = np.empty((n_slots, part.codes.shape[1], n_bins, 1 + part.rows.shape[1]))
    _node_histograms(part.codes, part.rows, part.node, slot_of_node, hist)
    return hist


@jit()
def _route(codes, node, feature, goes_left, left, right):
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
            child = left[at] if goes_left[at, codes[r, f]] else right[at]
            node[r, t] = -2 - child if held_out else child


def route(part: Partition, feature, goes_left, left, right) -> Partition:
    """The partition with every row moved from its node to the child its code answers
    (``feature[node]`` < 0: the node is a leaf, and its rows leave the growth; a row held
    out of a tree stays there, marked)."""
    node = part.node.copy()
    _route(part.codes, node, feature, goes_left, left, right)
    return attrs.evolve(part, node=node)


def held_out_losses(part: Partition, values, decisions, target, labeler) -> np.ndarray:
    """Per level of the pruning path: (sum of w x loss, sum of w x loss^2) of the rows held
    out of the fold trees, each predicted by the node ``values[level, node]`` /
    ``decisions[level, node]`` gives for the node it stopped at in its fold's tree (the
    pruned tree's leaf above it), the loss the target's ``sample_loss`` counts."""
    totals = np.zeros((values.shape[0], 2))
    if part.evidence is None:
        return totals
    # rows a class weight of 0 removed (weight 0) are in no tree
    rows = np.flatnonzero((part.fold >= 0) & (part.rows[:, 0] > 0))
    tree = part.fold[rows] + 1
    stopped = -2 - part.node[rows, tree]
    weight = part.rows[rows, 0]
    for level in range(values.shape[0]):
        loss = target.sample_loss(
            part.evidence[rows], values[level, stopped], decisions[level, stopped], labeler
        )
        totals[level] = (weight * loss).sum(), (weight * loss * loss).sum()
    return totals


def add(*arrays):
    """The sum of histograms (or sums) from several partitions: a step of the reduction."""
    total = np.array(arrays[0], dtype=np.float64, copy=True)
    for other in arrays[1:]:
        total += other
    return total
