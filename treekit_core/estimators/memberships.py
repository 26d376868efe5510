"""Where training and new rows land in a tree: the leaves each row reaches and with what
share (hard routing, C4.5's shares for a missing value, an evaluator's own mixture), for
training rows from the growth itself where the splitter can say. Read by the estimators
(their ``_mixtures``), honest estimation, quantiles and gradient boosting."""

from __future__ import annotations

import attrs
import numpy as np

from treekit_core.builtins.evaluators import hard_distribution
from treekit_core.engine.questions import tree_leaves
from treekit_core.engine.validation import has_missing

#: Rows whose leaf mixtures are computed at once (memory: rows x leaves floats).
MIXTURE_CHUNK = 64


def grown_leaf_mixtures(composition, tree, data):
    """:func:`leaf_mixtures` of the training rows of ``data`` (``training``), from the
    splitter's ``training_leaves`` where it says every row's leaf from the growth (no walk
    of X) and the evaluator sends no sample to a node of its own (``stopping_nodes`` None:
    a training row is counted where hard routing sends it); the walk otherwise. Shares
    None: every row, share 1."""
    leaves = composition.splitter.training_leaves(tree, data)  # what the growth kept, taken
    if leaves is not None and composition.evaluator.stopping_nodes(tree, data.X[:0]) is None:
        leaves = np.asarray(leaves)
        if leaves.dtype not in (np.int32, np.int64):  # int32 kept as it is (4 MB at 1M rows)
            leaves = leaves.astype(np.int64)
        return _every_row(data), leaves, None
    return leaf_mixtures(composition.evaluator, tree, data.X, training=True)


def _every_row(data) -> np.ndarray:
    """0 .. n - 1, read-only, kept in ``data.cache``: gradient boosting asks for it every
    round (8 MB written at 1M rows each time)."""
    rows = data.cache.get("every_row")
    if rows is None or rows.size != data.n_samples:
        rows = np.arange(data.n_samples)
        rows.flags.writeable = False
        data.cache["every_row"] = rows
    return rows


def leaf_mixtures(evaluator, tree, X, training: bool = False):
    """:meth:`ComposedEstimator._mixtures` for ``evaluator`` (the composition's)."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    nodes = evaluator.stopping_nodes(tree, X)
    if nodes is not None:
        return np.arange(n), np.asarray(nodes, dtype=np.int64), np.ones(n)
    mix = hard_distribution
    if not training and "hard_routing" not in evaluator.provides:
        mix = evaluator.predict_distribution
    parts = []
    if mix is hard_distribution:  # a complete row reaches one leaf
        incomplete = np.isnan(X).any(axis=1) if has_missing(X) else np.zeros(n, bool)
        complete = np.flatnonzero(~incomplete)
        if complete.size:
            # every row complete (the usual case): X as it is, not a copy of it (at
            # 100 000 x 20 the copy was the fit's largest allocation after the growth)
            rows_X = X if complete.size == n else X[complete]
            # the training rows' walk (at fit) keeps no records for a prediction that
            # may never come
            leaves = tree_leaves(
                tree, np.ascontiguousarray(rows_X), complete=True, remember=not training
            )
            parts.append((complete, leaves, np.ones(complete.size)))
        mixed = np.flatnonzero(incomplete)
    else:
        mixed = np.arange(n)
    if mixed.size:
        leaves = np.flatnonzero(tree.is_leaf)
        indicator = np.zeros((tree.n_nodes, leaves.size))
        indicator[leaves, np.arange(leaves.size)] = 1.0
        proxy = attrs.evolve(tree, value=indicator)
        for start in range(0, mixed.size, MIXTURE_CHUNK):
            rows = mixed[start : start + MIXTURE_CHUNK]
            shares = np.asarray(mix(proxy, np.ascontiguousarray(X[rows])))
            at, leaf = np.nonzero(shares > 0)
            parts.append((rows[at], leaves[leaf], shares[at, leaf]))
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    if len(parts) == 1:  # rows in order already
        rows, nodes, shares = parts[0]
        return rows, np.asarray(nodes, dtype=np.int64), shares
    rows, nodes, shares = (np.concatenate(p) for p in zip(*parts, strict=True))
    order = np.argsort(rows, kind="stable")
    return rows[order], nodes[order].astype(np.int64), shares[order]
