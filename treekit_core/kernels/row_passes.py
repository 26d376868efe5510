"""Passes over every training row around a tree's growth: a boosting tree's residual or
Newton rows (before), every row's leaf from the order the growth left the rows in, the leaves'
weighted sums of a column (the default Newton step of a boosting loss) and a boosting
round's raw predictions moved by its leaves' values (after).

Each is numpy's computation (a negation and a square, a scatter of ``np.repeat``,
``np.bincount`` with weights, a gather and an add) as one compiled pass over the rows, in
their order: the same bits, at 1M rows 1.3 against 4.1 ms for the leaves. The passes
whose rows are independent take a range of rows (``start``, ``stop``) and run on the
fit's threads (:func:`on_row_threads`): a boosting round's passes ran on one thread while
the histograms ran on all (at 1M rows on two threads, the binomial loss's gradient,
hessian and deviance were a third of a round's wall time where numpy's exp is libm's). Their indices
are the estimator's own (row ids the growth partitioned, leaf ids of the tree it grew),
never a user's: numba checks no index. Only fits that keep their training rows' leaves
(boosting, and regressors whose splitter keeps them) compile this family; the row table
every grower reads stays numpy's (compiled, every first fit of a tree would wait for it).
"""

from __future__ import annotations

import numpy as np

from treekit_core.kernels import elementary
from treekit_core.kernels.compiling import generic_jit, jit
from treekit_core.kernels.row_chunks import for_row_chunks

#: A row of these passes costs about this many rows of the threshold walk (for_row_chunks'
#: unit): memory-bound passes of a few loads and stores, up to an exp and a division.
#: Passes of 1M rows then run on the threads, those of 50 000 rows on the calling one.
ROW_PASS_COST = 0.5
#: Rows a block of :func:`binomial_deviance_blocks` adds in order: its sums are added
#: block after block, so the total has the same bits whatever the number of threads.
DEVIANCE_BLOCK_ROWS = 65_536


def on_row_threads(kernel, n_rows: int, *arguments) -> None:
    """``kernel(*arguments, start, stop)`` over the rows ``0..n_rows`` on the threads the
    fit allows (:func:`~treekit_core.kernels.row_chunks.for_row_chunks`); each row's
    result is the same bits on any number of threads (each row is computed alone)."""
    for_row_chunks(kernel, n_rows, *arguments, cost=ROW_PASS_COST)


@jit()
def residual_rows(gradient, column, evidence, start, stop):
    """A boosting tree's rows (r, r^2) of the residual r = -``gradient[:, column]`` into
    ``evidence`` (numpy's negative and square, the same bits), rows start..stop-1."""
    for i in range(start, stop):
        residual = -gradient[i, column]
        evidence[i, 0] = residual
        evidence[i, 1] = residual * residual


#: The largest g^2 / h a Newton row holds (the square of the largest response fit takes):
#: a row whose hessian is near 0 would otherwise make a node's sum infinite.
MAX_NEWTON_SQUARE = 1e200


@jit()
def newton_rows(gradient, hessian, column, evidence, start, stop):
    """A boosting tree's Newton rows (-g, h, g^2 / h) of column ``column``'s gradient g and
    hessian h into ``evidence`` (the third 0 where h <= 0, at most
    :data:`MAX_NEWTON_SQUARE`), rows start..stop-1."""
    for i in range(start, stop):
        g = gradient[i, column]
        h = hessian[i, column]
        evidence[i, 0] = -g
        evidence[i, 1] = h
        evidence[i, 2] = min(g * g / h, MAX_NEWTON_SQUARE) if h > 0.0 else 0.0


@jit()
def scatter_leaves(rows, leaves, ends, found, start, stop):
    """``found[rows[j]]`` = the leaf whose rows hold position j, for the positions j in
    start..stop-1: the leaves ``leaves`` in the rows' order, leaf a holding the positions
    before ``ends[a]`` and from the one before (``ends``: the leaves' row counts summed,
    the last ``rows.size``; ``rows`` a permutation of ``range(found.size)``, so ranges of
    positions write distinct rows)."""
    if start >= stop:
        return
    a = np.searchsorted(ends, start, side="right")  # the leaf holding position start
    j = start
    while j < stop:
        leaf, last = leaves[a], min(stop, ends[a])
        while j < last:
            found[np.uint64(rows[j])] = leaf
            j += 1
        a += 1


@jit()
def weighted_leaf_sums(leaf, weight, values, column, n_nodes):
    """Per node, the sum over its rows i (``leaf[i]``, in row order) of ``weight[i] *
    values[i, column]``: ``np.bincount(leaf, weights=weight * values[:, column],
    minlength=n_nodes)`` to the bit (bincount adds the products in row order)."""
    sums = np.zeros(n_nodes)
    for i in range(leaf.shape[0]):
        sums[np.uint64(leaf[i])] += weight[i] * values[i, column]
    return sums


@jit()
def add_leaf_values(raw, column, rate, leaf_values, leaf, start, stop):
    """``raw[i, column] += rate * leaf_values[leaf[i]]`` for the rows i in start..stop-1
    (numpy's ``raw[:, column] += rate * leaf_values[leaf]``, the same bits)."""
    for i in range(start, stop):
        raw[i, column] += rate * leaf_values[np.uint64(leaf[i])]


#: Rows a block of :func:`binomial_blocks` takes through each of its loops at a time: each
#: loop is one vector over them (exp, then the gradient, then log1p), the rows' exps and
#: terms kept between the loops in the first cache.
BINOMIAL_STEP_ROWS = 2048


@generic_jit
def logistic_row(e, positive):
    """One row's binomial gradient p - [y = 1] and hessian p (1 - p), p = 1 / (1 + e)
    from e = exp(-f) (``positive``: y = 1): the expression both passes below write."""
    p = 1.0 / (1.0 + e)
    return p - (1.0 if positive else 0.0), p * (1.0 - p)


@jit(error_model="numpy")
def logistic_gradient_hessian(raw, y, gradient, hessian, start, stop):
    """The binomial log loss at the log-odds ``raw`` (one column: contiguous rows) of the
    rows start..stop-1 into ``gradient`` and ``hessian`` (likewise): the gradient
    p - [y = 1] and the hessian p (1 - p), p = 1 / (1 + exp(-raw)) (numpy's expression in
    ``builtins.losses.expit`` with :func:`~treekit_core.kernels.elementary.exp`, within an
    ulp of the C library's: four rows to a vector)."""
    for i in range(start, stop):
        gradient[i], hessian[i] = logistic_row(elementary.exp(-raw[i]), y[i] == 1.0)


@jit(error_model="numpy")
def binomial_blocks(raw, y, weight, sums, gradient, hessian, start, stop):
    """For the blocks b in start..stop-1 of :data:`DEVIANCE_BLOCK_ROWS` rows: ``sums[b]``
    = (the weighted sum over the block's rows of log(1 + exp(f)) - [y = 1] f, the block's
    weight), f = ``raw[i]`` (one column: contiguous rows); ``weight`` of length 0: every
    row weighs 1. Where ``gradient`` has rows, also :func:`logistic_gradient_hessian`'s
    rows, the same bits, from the same exp: a boosting round's gradient and the previous
    round's loss in one pass. The rows go through the pass :data:`BINOMIAL_STEP_ROWS` at a
    time, one loop a step (exp, the gradient, log1p; each a vector of rows), their terms
    then summed in row order (at 1M rows 10 against 28 ms for the C library's exp and
    log1p a row).

    With e = exp(-f): log(1 + exp(f)) is f + log1p(e) for f >= 0 and log1p(1 / e) below
    (1 / e is exp(f) within an ulp; 0 where e overflows, as exp(f) underflows), so
    nothing overflows: max(f, 0) + log1p(e or 1 / e, whichever is at most 1), by selects."""
    n, unit, with_gradient = raw.shape[0], weight.shape[0] == 0, gradient.shape[0] > 0
    exps, terms = np.empty(BINOMIAL_STEP_ROWS), np.empty(BINOMIAL_STEP_ROWS)
    for b in range(start, stop):
        total, total_weight = 0.0, 0.0
        end = min(n, (b + 1) * DEVIANCE_BLOCK_ROWS)
        for first in range(b * DEVIANCE_BLOCK_ROWS, end, BINOMIAL_STEP_ROWS):
            m = min(end - first, BINOMIAL_STEP_ROWS)
            f_rows, y_rows = raw[first : first + m], y[first : first + m]
            for j in range(m):
                exps[j] = elementary.exp(-f_rows[j])
            if with_gradient:
                g_rows, h_rows = gradient[first : first + m], hessian[first : first + m]
                for j in range(m):
                    g_rows[j], h_rows[j] = logistic_row(exps[j], y_rows[j] == 1.0)
            for j in range(m):
                f, e = f_rows[j], exps[j]
                term = elementary.log1p(e if f >= 0.0 else 1.0 / e) + max(f, 0.0)
                terms[j] = term - (f if y_rows[j] == 1.0 else 0.0)
            if unit:
                for j in range(m):
                    total += terms[j]
                total_weight += m
            else:
                for j in range(m):
                    w = weight[first + j]
                    total += w * terms[j]
                    total_weight += w
        sums[b, 0], sums[b, 1] = total, total_weight


def binomial_deviance_mean(raw, y, weight, gradient=None, hessian=None) -> float:
    """The weighted mean over the rows of log(1 + exp(f)) - [y = 1] f, f = ``raw[:, 0]``
    (half the binomial deviance; ``weight`` None: every row weighs 1):
    :func:`binomial_blocks` on the fit's threads, the blocks' sums added in order, so the
    same bits on any number of threads. ``gradient`` and ``hessian`` (n x 1, C order)
    given: the binomial gradient and hessian at ``raw`` written into them in the same
    pass."""
    n_blocks = -(-y.size // DEVIANCE_BLOCK_ROWS)
    sums = np.empty((n_blocks, 2))
    weights = np.zeros(0) if weight is None else np.ascontiguousarray(weight, np.float64)
    no_rows = np.empty(0)
    arguments = (
        np.ascontiguousarray(raw[:, 0]),  # n x 1: a view
        np.ascontiguousarray(y, np.float64),
        weights,
        sums,
        no_rows if gradient is None else gradient[:, 0],
        no_rows if hessian is None else hessian[:, 0],
    )
    block_cost = DEVIANCE_BLOCK_ROWS * ROW_PASS_COST
    for_row_chunks(binomial_blocks, n_blocks, *arguments, cost=block_cost)
    total, total_weight = 0.0, 0.0
    for block_total, block_weight in sums.tolist():
        total, total_weight = total + block_total, total_weight + block_weight
    return total / total_weight
