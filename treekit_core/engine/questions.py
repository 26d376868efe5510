"""Routing through the questions of a tree: the one contract every consumer goes through.

The hard evaluator, the hard propagator, the pruners, the exports and the soft components
(for every question that is not a threshold) ask these functions which branch a sample
takes; they run the compiled kernels of :mod:`treekit_core.kernels.question_routing`,
specialised to the question kinds a tree uses. A tree whose questions are all thresholds
takes a dedicated kernel (no dispatch at all).
"""

from __future__ import annotations

import numpy as np

#: Category codes must fit the bits of a float64 mantissa (a subset is a bit mask).
MAX_CATEGORIES = 53


def _kernels(question_classes):
    from treekit_core.kernels.question_routing import routing_kernels

    return routing_kernels(tuple(question_classes))


def _pack(tree):
    from treekit_core.kernels.question_routing import pack_tree

    return tree.derived("packed for routing", lambda: pack_tree(tree))


def only_thresholds(tree) -> bool:
    """True when every internal node asks a two-branch threshold question."""

    def compute():
        if all(kind.compares_threshold for kind in tree.questions):
            return True  # whichever a node asks (no pass over the nodes)
        used = np.unique(tree.question[tree.question >= 0])
        return all(tree.questions[k].compares_threshold for k in used)

    return tree.derived("only thresholds", compute)


def packed_thresholds(tree) -> tuple:
    """The arrays the threshold walk reads of a tree asking threshold questions only
    (:func:`treekit_core.kernels.routing.pack_nodes`); remembered per tree as
    ``"packed thresholds"``."""
    from treekit_core.kernels.routing import pack_nodes

    return pack_nodes(tree.children_left, tree.children_right, tree.feature, tree.threshold)


def tree_leaves(tree, X: np.ndarray, complete: bool = False, remember: bool = True) -> np.ndarray:
    """Leaf reached by every row of X (a row that cannot answer a question follows the
    branch that took the most training weight). ``complete``: the caller knows X has no
    missing value, which lets threshold-only trees take the kernel without dispatch.
    ``remember`` False: the threshold walk's records are made for this call only (a walk
    of the training rows at fit: a forest's records kept from it were 16 bytes a node
    alive beside the trees until the first prediction, issue 59's peak)."""
    from treekit_core.kernels.row_chunks import for_row_chunks

    if complete and only_thresholds(tree):
        from treekit_core.kernels.routing import walk_thresholds

        if remember:
            nodes = tree.derived("packed thresholds", lambda: packed_thresholds(tree))
        else:
            nodes = packed_thresholds(tree)
        # A C- or Fortran-ordered X is walked as it is (one compiled kernel per order): a
        # Fortran-ordered X walks as fast as its C-ordered copy would (benchmarks/README.md),
        # and the copy's allocation costs more than the walk at small sizes.
        if not (X.flags.c_contiguous or X.flags.f_contiguous):
            X = np.ascontiguousarray(X)
        kernel, arguments = walk_thresholds, nodes
    else:
        nodes, child_ids, _, params, _ = _pack(tree)
        kernel = _kernels(type(q) for q in tree.questions).leaves
        arguments = (nodes, child_ids, params)
    out = np.empty(X.shape[0], dtype=np.int64)
    for_row_chunks(kernel, X.shape[0], X, *arguments, out)
    return out


#: C4.5's mixture costs about four threshold-walk rows per row (53 against 13 ms for
#: 100 000 rows, 5% missing): it takes threads from a quarter of the walk's row count.
MIXTURE_COST = 4.0


def tree_distribution(tree, X: np.ndarray) -> np.ndarray:
    """Class distribution of every row: its leaf's value, or a mixture over the branches
    of every question it cannot answer, by the branches' training shares (C4.5)."""
    from treekit_core.kernels.row_chunks import for_row_chunks

    nodes, child_ids, shares, params, stack_size = _pack(tree)
    value = np.ascontiguousarray(tree.value)
    out = np.zeros((X.shape[0], value.shape[1]))
    kernel = _kernels(type(q) for q in tree.questions).mixture
    arguments = (X, nodes, child_ids, shares, params, value, stack_size, out)
    for_row_chunks(kernel, X.shape[0], *arguments, cost=MIXTURE_COST)
    return out


def answers_at(tree, X: np.ndarray, node_list) -> np.ndarray:
    """n x len(node_list) int32: the branch every row takes at each listed node (-1: it
    cannot answer). Soft components use it for the questions they do not soften."""
    from treekit_core.kernels.row_chunks import for_row_chunks

    nodes, _, _, params, _ = _pack(tree)
    node_list = np.ascontiguousarray(node_list, dtype=np.int64)
    out = np.empty((X.shape[0], node_list.shape[0]), dtype=np.int32)
    kernel = _kernels(type(q) for q in tree.questions).answers_at
    for_row_chunks(kernel, X.shape[0], X, node_list, nodes, params, out)
    return out


def tree_leaves_from(tree, X: np.ndarray, rows, start) -> np.ndarray:
    """Leaf reached by row ``rows[j]`` of X starting at node ``start[j]`` (a question a row
    cannot answer sends it down the heaviest branch): what a subtree would say about rows
    that did not reach it, in one compiled call."""
    from treekit_core.kernels.row_chunks import for_row_chunks

    nodes, child_ids, _, params, _ = _pack(tree)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    start = np.ascontiguousarray(np.broadcast_to(start, rows.shape), dtype=np.int64)
    if rows.size and (start.min() < 0 or start.max() >= tree.n_nodes):
        raise ValueError(
            f"start nodes must lie in [0, {tree.n_nodes}), got {start.min()}..{start.max()}"
        )
    if rows.size and (rows.min() < 0 or rows.max() >= X.shape[0]):
        raise ValueError(f"rows must lie in [0, {X.shape[0]}), got {rows.min()}..{rows.max()}")
    out = np.empty(rows.shape[0], dtype=np.int64)
    kernel = _kernels(type(q) for q in tree.questions).leaves_from
    for_row_chunks(kernel, rows.shape[0], X, rows, start, nodes, child_ids, params, out)
    return out


def rows_reaching(tree, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(node, row) for every node each row of X reaches, a question it cannot answer
    sending it down every branch (as training rows are counted at a node). Sorted by node,
    rows ascending within a node."""
    from treekit_core.kernels.usable_cpus import numba_threads_capped, row_threads

    nodes, child_ids, _, params, stack_size = _pack(tree)
    kernels = _kernels(type(q) for q in tree.questions)
    # a few thousand rows take less time than waking numba's threads twice (and far less
    # than waiting at their barrier on a busy machine: pruning's cross-validation calls
    # this once per subtree of every fold)
    threads = 1 if X.shape[0] < PARALLEL_ROWS else row_threads()
    with numba_threads_capped(threads):
        node_of, row_of = kernels.fan_out(X, nodes, child_ids, params, stack_size)
    order = np.argsort(node_of, kind="stable")
    return node_of[order], row_of[order]


#: Rows below which :func:`rows_reaching` runs on the calling thread alone.
PARALLEL_ROWS = 8192


def split_branches(X: np.ndarray, rows: np.ndarray, split, question) -> np.ndarray:
    """The branch of every row of ``rows`` under ``split``, whose question kind is
    ``question`` (the instance its caller's registry gives for ``split.question``; -1:
    cannot answer)."""
    kernels = _kernels((type(question),))
    return kernels.branches(
        X,
        np.ascontiguousarray(rows, dtype=np.int64),
        0,
        int(max(split.feature, 0)),
        float(split.threshold),
        question.parameters(split.node_fields),
        int(split.n_branches),
    )


def training_shares(branch: np.ndarray, row_weights: np.ndarray, n_branches: int) -> np.ndarray:
    """Share of the known weight that took each branch (equal shares when none is known)."""
    known = branch >= 0
    weight = np.bincount(branch[known], weights=row_weights[known], minlength=n_branches)
    total = weight.sum()
    return weight / total if total > 0 else np.full(n_branches, 1.0 / n_branches)


def route_rows(X, rows, row_weights, split, question):
    """Per branch, (rows, weights) of the training rows: each row goes wholly to its
    branch; a row that cannot answer goes to every branch, weighted by the split's branch
    shares (C4.5). Returns a list with one pair per branch."""
    branch = split_branches(X, rows, split, question)
    if split.n_branches == 2:  # the common case, in one compiled pass
        from treekit_core.kernels.routing import divide_rows

        shares = (0.5, 0.5) if split.branch_shares is None else split.branch_shares
        left_rows, left_weights, right_rows, right_weights = divide_rows(
            branch,
            np.ascontiguousarray(rows, dtype=np.int64),
            np.ascontiguousarray(row_weights, dtype=np.float64),
            float(shares[0]),
            float(shares[1]),
        )
        return [(left_rows, left_weights), (right_rows, right_weights)]
    unknown = branch < 0
    if not unknown.any():
        return [(rows[branch == b], row_weights[branch == b]) for b in range(split.n_branches)]
    shares = np.asarray(split.branch_shares, dtype=np.float64)
    out = []
    for b in range(split.n_branches):
        weights = np.where(branch == b, row_weights, np.where(unknown, row_weights * shares[b], 0))
        keep = weights > 0
        out.append((rows[keep], weights[keep]))
    return out
