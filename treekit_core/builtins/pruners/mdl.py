"""Pruning by the handout's MDL-style criterion: minimise alpha * size + sum over leaves of
impurity, exactly, bottom-up.

The objective is a sum over the final tree's leaves (plus alpha per counted node), so the
best subtree below a node is either the node as a leaf or its children's best subtrees:
one bottom-up pass finds the global optimum. ``size`` counts leaves (CART's |T|) or all
nodes; each leaf's impurity is weighted by its share of the training weight (``weighted``)
or taken as is (the handout's literal sum).
"""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.components import Pruner, state_array


def _non_negative(instance, attribute, value):
    if not (isinstance(value, (int, float)) and value >= 0):
        raise ValueError(f"alpha must be a number >= 0, got {value!r}")


def mdl_prune_mask(tree, alpha: float, size: str, weighted: bool) -> tuple[np.ndarray, float]:
    """(nodes to make leaves, optimal objective)."""
    leaf_cost = tree.impurity * (tree.weight / tree.weight[0] if weighted else 1.0)
    per_node = alpha
    best = np.empty(tree.n_nodes)
    collapse = np.zeros(tree.n_nodes, dtype=bool)
    for node in range(tree.n_nodes - 1, -1, -1):  # children have larger ids
        as_leaf = leaf_cost[node] + per_node
        kids = tree.children(node)
        if kids.size == 0:
            best[node] = as_leaf
            continue
        below = best[kids].sum()
        if size == "nodes":
            below += per_node
        if as_leaf <= below:
            best[node] = as_leaf
            collapse[node] = True
        else:
            best[node] = below
    return collapse, float(best[0])


@attrs.define(slots=False)
class MDL(Pruner):
    """Parameters: ``alpha`` (cost per counted node), ``size`` ("leaves" or "nodes") and
    ``weighted`` (leaf impurity weighted by the leaf's share of the training weight)."""

    name: ClassVar[str] = "mdl"
    description: ClassVar[str] = "minimise alpha * size + sum of leaf impurities (exact, bottom-up)"
    alpha: float = attrs.field(default=0.01, validator=_non_negative)
    size: str = attrs.field(default="leaves", validator=attrs.validators.in_(("leaves", "nodes")))
    weighted: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))

    def check_state(self, state, tree):
        if state:
            state_array(state, "objective", (), "pruner")

    def prune(self, tree, context):
        collapse, objective = mdl_prune_mask(tree, float(self.alpha), self.size, self.weighted)
        pruned = tree.collapse(collapse)
        pruned.component_state = dict(tree.component_state, pruner={"objective": objective})
        return pruned
