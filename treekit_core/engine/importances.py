"""Feature importances: the mean decrease in impurity (scikit-learn's definition).

A node's decrease is what the criterion credits it (:meth:`Criterion.node_decreases`: by
default ``weight * impurity`` minus the same sum over its children; a log-rank tree's, its
weight times the cut's log-rank statistic), credited
to the feature(s) its question tests (:meth:`Question.tested_features`: an oblique
question splits it by |coefficient|), summed per feature, divided by the root's weight and
normalised to sum 1. A forest averages its trees' normalised importances (trees that are a
single leaf left out) and normalises again, as scikit-learn's forests do.
"""

from __future__ import annotations

import numpy as np


def impurity_decrease(tree, criterion) -> np.ndarray:
    """Unnormalised importances of one tree (fractions of the root's weighted impurity, or
    of whatever the criterion credits its nodes with)."""
    total = np.zeros(tree.n_features)
    decreases = criterion.node_decreases(tree)
    for node in np.flatnonzero(~tree.is_leaf):
        decrease = decreases[node]
        features, shares = tree.question_of(node).tested_features(
            int(tree.feature[node]), tree.question_params(node), tree.n_features
        )
        np.add.at(total, features, decrease * shares)
    return total / tree.weight[0] if tree.weight[0] > 0 else total


def _normalised(values: np.ndarray) -> np.ndarray:
    total = values.sum()
    return values / total if total > 0 else values


def tree_importances(tree, criterion) -> np.ndarray:
    return _normalised(impurity_decrease(tree, criterion))


def forest_importances(trees, n_features: int, criterion) -> np.ndarray:
    split = [tree_importances(tree, criterion) for tree in trees if tree.n_nodes > 1]
    if not split:
        return np.zeros(n_features)
    return _normalised(np.mean(split, axis=0))
