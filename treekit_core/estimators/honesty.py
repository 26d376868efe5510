"""Honest trees (issue 63; Athey & Imbens 2016, Wager & Athey 2018, grf's ``honesty``): a
tree's structure is grown on one part of its rows, every node's statistics, values and
impurity are then computed from the other part, and whatever reads the training rows after
growth (pruning, the evaluator's and the confidence's state, quantiles, survival curves,
calibration and rejection) reads that estimation part. A leaf's value is then not chosen
by the rows that chose its split, so it is unbiased for the mean of its region.

The split is drawn per tree from the rows the tree holds (a forest's bootstrap draw: a row
drawn several times goes wholly to one part), within each stratum of the target (its
classes; events and censored rows), ``honest_fraction`` of each stratum's rows (rounded
half up) to the structure. Leaves the estimation rows leave empty (or without a value:
``Target.defines_value``, a treatment effect without both arms) are pruned away
(``honest_prune_leaves=True``, grf's ``honesty.prune.leaves``: the parent of such a
child becomes a leaf); otherwise an empty node takes its parent's values (as every tree
labels a node no training weight reached)."""

from __future__ import annotations

import attrs
import numpy as np

from treekit_core.engine.tree import every_node_memberships
from treekit_core.estimators.memberships import leaf_mixtures


def honest_parts(weight, strata, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """Which rows of weight > 0 grow the structure (True) and which estimate (False; rows
    of weight 0 are neither and False): per stratum, a random ``fraction`` of its rows,
    rounded half up, drawn with ``rng``. Refused when either part would be empty."""
    weight = np.asarray(weight)
    strata = np.asarray(strata)
    drawn = np.flatnonzero(weight > 0)
    structure = np.zeros(weight.shape[0], dtype=bool)
    for stratum in np.unique(strata[drawn]):
        rows = rng.permutation(drawn[strata[drawn] == stratum])
        structure[rows[: int(np.floor(fraction * rows.size + 0.5))]] = True
    n_structure = int(structure.sum())
    if n_structure == 0 or n_structure == drawn.size:
        raise ValueError(
            f"honest=True splits the {drawn.size} rows a tree holds into a part that grows "
            f"it and a part that estimates it; honest_fraction={fraction} leaves one empty: "
            "give more rows or another honest_fraction"
        )
    return structure


@attrs.frozen(eq=False)
class HonestSplit:
    """One tree's honest parts: the composition grows the structure on
    :meth:`structure` and hands the grown tree to :meth:`estimate`, whose data the rest of
    the fit (pruning, the evaluator, the confidence) then reads."""

    structure_rows: np.ndarray  #: bool per row: grows the structure
    prune_leaves: bool

    def structure(self, data):
        """The training data with only the structure rows weighed."""
        return data.with_weight(np.where(self.structure_rows, data.weight, 0.0))

    def estimation(self, data):
        """The training data with only the estimation rows weighed."""
        return data.with_weight(np.where(self.structure_rows, 0.0, data.weight))

    def estimate(self, composition, grown, data) -> tuple:
        """(the grown tree with every node estimated from the estimation rows, the data
        the rest of the fit reads). Called by ``Composition.fit_keeping_grown`` after
        growth."""
        estimation = self.estimation(data)
        return estimated_tree(composition, grown, estimation, self.prune_leaves), estimation


def estimated_tree(composition, tree, data, prune_leaves: bool):
    """``tree`` (grown, labelled) with every node's statistics, weight, row count and
    impurity summed from the rows of ``data`` (those of weight > 0), routed as training
    rows are (hard routing; C4.5's shares for a missing value; rpart's surrogates where
    the evaluator routes by them), then labelled again. With ``prune_leaves`` every node
    with a child no estimation row reached becomes a leaf first."""
    statistics, weight, n_samples = node_sums(composition, tree, data)
    tree.statistics, tree.weight, tree.n_samples = statistics, weight, n_samples
    if prune_leaves:
        undefined = ~np.asarray(composition.target.defines_value(statistics, weight), dtype=bool)
        # a node with a child whose estimation rows define no value: per node, whether any
        # of its children is undefined (a leaf has none)
        parent = tree.parents()
        empty_child = np.zeros(tree.n_nodes, dtype=bool)
        below = np.flatnonzero(undefined & (parent >= 0))
        empty_child[parent[below]] = True
        if empty_child.any():
            tree = tree.collapse(empty_child)
    tree.impurity = node_impurities(composition, tree)
    tree.relabel(composition.target, composition.labeler)
    return tree


def node_sums(composition, tree, data) -> tuple:
    """(statistics, weight, n_samples) of every node of ``tree`` from the rows of ``data``
    with weight > 0: each row's target row times its weight times its share of the node,
    summed over the rows passing the node; a row counted once per node it passes."""
    rows, nodes, shares = leaf_mixtures(composition.evaluator, tree, data.X, training=True)
    shares = shares * data.weight[rows]
    kept = shares > 0
    rows, nodes, shares = rows[kept], nodes[kept], shares[kept]
    if rows.size < 2 or (np.diff(rows) > 0).all():  # every row in one leaf (rows sorted)
        return _summed_up_the_tree(tree, data.evidence[rows], nodes, shares)
    rows, nodes, shares = every_node_memberships(tree, rows, nodes, shares)
    n = tree.n_nodes
    statistics = np.zeros((n, tree.statistics.shape[1]))
    np.add.at(statistics, nodes, data.evidence[rows] * shares[:, None])
    weight = np.bincount(nodes, weights=shares, minlength=n)
    pairs = np.unique(nodes * np.int64(data.n_samples) + rows)  # a row once per node
    n_samples = np.bincount(pairs // data.n_samples, minlength=n)
    return statistics, weight, n_samples


def _summed_up_the_tree(tree, evidence, leaves, shares) -> tuple:
    """:func:`node_sums` where every row reaches one leaf (``leaves``, with its ``shares``
    times weight): the leaves' sums, then every node's the sum over its subtree (a row
    passes each ancestor of its leaf once)."""
    n, width = tree.n_nodes, evidence.shape[1]
    # the statistics, the weight and the row count side by side, summed up in one pass
    sums = np.zeros((n, width + 2))
    for column in range(width):
        sums[:, column] = np.bincount(leaves, weights=evidence[:, column] * shares, minlength=n)
    sums[:, width] = np.bincount(leaves, weights=shares, minlength=n)
    sums[:, width + 1] = np.bincount(leaves, minlength=n)
    sums = tree.subtree_sums(sums)
    return sums[:, :width], sums[:, width], sums[:, width + 1].astype(np.int64)


def node_impurities(composition, tree) -> np.ndarray:
    """Every node's impurity under the composition's criterion, from its statistics (0
    where no weight reached it)."""
    from treekit_core.kernels.tree_sums import node_impurities as compiled

    criterion = composition.criterion
    params = criterion.impurity_params(tree.statistics.shape[1])
    return compiled(
        criterion.compiled_impurity(),
        np.ascontiguousarray(tree.statistics, dtype=np.float64),
        np.ascontiguousarray(tree.weight, dtype=np.float64),
        np.ascontiguousarray(params, dtype=np.float64),
    )
