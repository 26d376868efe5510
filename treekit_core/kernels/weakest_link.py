"""Breiman's weakest-link pruning sequence, compiled: repeatedly collapse the internal node
of smallest g(t) = (R(t) - R(T_t)) / (|leaves(T_t)| - 1), the first node id on ties
(scikit-learn's ``_cost_complexity_prune``), with a binary heap of (g, node).

Collapsing the weakest link t changes g of t's ancestors only, and only upwards: an
ancestor a had g(a) >= g(t) = (R(t) - R(T_t)) / (|T_t| - 1), and removing from a's ratio a
part whose own ratio is no larger leaves one at least as large (the mediant). So the heap
may keep an ancestor's old key as a lower bound: when such a key reaches the top, the
node's g is recomputed and pushed again if it grew; it is collapsed only when its key is
its g. A node's key is lowered at once in the rare case rounding makes its new g smaller.
The node popped with its true g is then a smallest g (every key is at most its node's g),
the first id among equal ones (ties are ordered by id), as the quadratic definition picks
it; the arithmetic is the vectorised form's, term for term, so the sequence is the same to
the last bit. A collapse still walks its ancestors (O(depth) updates); heap operations are
O(log n) each and few beyond one per node.
"""

from __future__ import annotations

import numpy as np
from numba import types

from treekit_core.kernels.compiling import F1, I1, jit

B1 = types.Array(types.boolean, 1, "C")
SIGNATURE = types.Tuple((I1, F1, F1, F1, I1))(I1, F1, F1, F1, I1, B1, I1, I1)


@jit
def _before(g, node, other_g, other_node):
    return g < other_g or (g == other_g and node < other_node)


@jit
def _push(heap_g, heap_node, count, g, node):
    at = count
    heap_g[at], heap_node[at] = g, node
    while at > 0:
        parent = (at - 1) // 2
        if not _before(heap_g[at], heap_node[at], heap_g[parent], heap_node[parent]):
            break
        heap_g[at], heap_g[parent] = heap_g[parent], heap_g[at]
        heap_node[at], heap_node[parent] = heap_node[parent], heap_node[at]
        at = parent
    return count + 1


@jit
def _pop(heap_g, heap_node, count):
    g, node = heap_g[0], heap_node[0]
    count -= 1
    heap_g[0], heap_node[0] = heap_g[count], heap_node[count]
    at = 0
    while True:
        left, right, best = 2 * at + 1, 2 * at + 2, at
        if left < count and _before(heap_g[left], heap_node[left], heap_g[best], heap_node[best]):
            best = left
        if right < count and _before(
            heap_g[right], heap_node[right], heap_g[best], heap_node[best]
        ):
            best = right
        if best == at:
            break
        heap_g[at], heap_g[best] = heap_g[best], heap_g[at]
        heap_node[at], heap_node[best] = heap_node[best], heap_node[at]
        at = best
    return g, node, count


@jit
def _grown(heap_g, heap_node, count):
    grown_g, grown_node = np.empty(2 * count), np.empty(2 * count, dtype=np.int64)
    grown_g[:count], grown_node[:count] = heap_g[:count], heap_node[:count]
    return grown_g, grown_node


@jit(SIGNATURE)
def weakest_link_steps(parent, r_node, r_branch, n_leaves, n_internal, internal, position, size):
    """(pruned node per step, its alpha, total risk, leaves and internal nodes before the
    first step and after each) of the weakest-link sequence; ``r_branch``, ``n_leaves`` and
    ``n_internal`` (every branch's risk, leaves, internal nodes) are updated in place.
    ``position`` and ``size``: each node's place in the depth-first order and its subtree's
    size (a subtree is one run of that order)."""
    n = parent.shape[0]
    alive = np.zeros(n, dtype=np.bool_)  # by depth-first position
    key = np.full(n, np.nan)  # the key of the node's live heap entry
    capacity = 2 * n + 16
    heap_g, heap_node = np.empty(capacity), np.empty(capacity, dtype=np.int64)
    count = 0
    for node in range(n):
        if internal[node]:
            alive[position[node]] = True
            key[node] = (r_node[node] - r_branch[node]) / (n_leaves[node] - 1.0)
            count = _push(heap_g, heap_node, count, key[node], node)
    steps = int(internal.sum())
    pruned = np.empty(steps, dtype=np.int64)
    alphas = np.empty(steps)
    risks, leaves = np.empty(steps + 1), np.empty(steps + 1)
    internals = np.empty(steps + 1, dtype=np.int64)
    risks[0], leaves[0], internals[0] = r_branch[0], n_leaves[0], n_internal[0]
    taken = 0
    while count > 0 and alive[position[0]]:
        g, node, count = _pop(heap_g, heap_node, count)
        if not alive[position[node]] or g != key[node]:
            continue  # collapsed, under a collapsed node, or an entry since replaced
        now = (r_node[node] - r_branch[node]) / (n_leaves[node] - 1.0)
        if now != g:  # a lower bound: its g grew since; back in at its g
            key[node] = now
            if count == heap_g.shape[0]:
                heap_g, heap_node = _grown(heap_g, heap_node, count)
            count = _push(heap_g, heap_node, count, now, node)
            continue
        for k in range(position[node], position[node] + size[node]):
            alive[k] = False
        removed_leaves = n_leaves[node] - 1.0
        r_diff = r_node[node] - r_branch[node]
        removed_internal = n_internal[node]
        n_leaves[node], r_branch[node], n_internal[node] = 1.0, r_node[node], 0
        ancestor = parent[node]
        while ancestor >= 0:
            n_leaves[ancestor] -= removed_leaves
            r_branch[ancestor] += r_diff
            n_internal[ancestor] -= removed_internal
            updated = (r_node[ancestor] - r_branch[ancestor]) / (n_leaves[ancestor] - 1.0)
            if updated < key[ancestor]:  # smaller only by rounding: its key must not lag
                key[ancestor] = updated
                if count == heap_g.shape[0]:
                    heap_g, heap_node = _grown(heap_g, heap_node, count)
                count = _push(heap_g, heap_node, count, updated, ancestor)
            ancestor = parent[ancestor]
        pruned[taken], alphas[taken] = node, g
        taken += 1
        risks[taken], leaves[taken], internals[taken] = r_branch[0], n_leaves[0], n_internal[0]
    return (
        pruned[:taken],
        alphas[:taken],
        risks[: taken + 1],
        leaves[: taken + 1],
        internals[: taken + 1],
    )


__all__ = ["weakest_link_steps"]
