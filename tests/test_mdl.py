"""The MDL pruner equals a brute-force search over all pruned subtrees."""

import itertools

import numpy as np
import pytest

from treekit_core import TreeClassifier
from treekit_core.builtins.pruners.mdl import mdl_prune_mask
from treekit_core.datasets import load_dataset


def all_prunings(tree):
    """Every subtree obtained by making some internal nodes leaves (as collapse masks)."""
    internal = np.flatnonzero(tree.children_left >= 0)
    for choice in itertools.product([False, True], repeat=internal.size):
        mask = np.zeros(tree.n_nodes, dtype=bool)
        mask[internal[list(choice)]] = True
        yield mask


def objective(tree, mask, alpha, size, weighted):
    pruned = tree.collapse(mask)
    cost = pruned.impurity * (pruned.weight / pruned.weight[0] if weighted else 1.0)
    counted = pruned.n_leaves if size == "leaves" else pruned.n_nodes
    return alpha * counted + cost[pruned.is_leaf].sum(), pruned.n_nodes


@pytest.mark.parametrize("alpha", [0.0, 0.003, 0.01, 0.05, 0.5])
@pytest.mark.parametrize("size", ["leaves", "nodes"])
@pytest.mark.parametrize("weighted", [True, False])
def test_equals_brute_force(alpha, size, weighted):
    data = load_dataset("haberman")
    tree = TreeClassifier(max_depth=3, min_samples_leaf=10).fit(data.X, data.y).tree_
    assert 3 <= np.sum(tree.children_left >= 0) <= 12
    brute = min(objective(tree, mask, alpha, size, weighted)[0] for mask in all_prunings(tree))
    mask, best = mdl_prune_mask(tree, alpha, size, weighted)
    assert best == pytest.approx(brute, abs=1e-12)
    assert objective(tree, mask, alpha, size, weighted)[0] == pytest.approx(brute, abs=1e-12)


def test_pruner_in_a_composition_never_enlarges():
    data = load_dataset("pima")
    full = TreeClassifier(min_samples_leaf=5).fit(data.X, data.y)
    sizes = [
        TreeClassifier(min_samples_leaf=5, pruner="mdl", pruner_params={"alpha": a})
        .fit(data.X, data.y)
        .get_n_leaves()
        for a in (0.0, 0.001, 0.01, 0.1)
    ]
    assert (
        sizes[0] <= full.get_n_leaves() and sizes == sorted(sizes, reverse=True) and sizes[-1] >= 1
    )
