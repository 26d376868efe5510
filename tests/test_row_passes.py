"""The compiled passes over a fit's rows (kernels/row_passes.py): each is numpy's
computation to the bit, compiled and as plain Python (numba checks no index; without the
JIT numpy checks each one), on any number of rows, leaves and statistics (hypothesis)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treekit_core.kernels import row_passes
from treekit_core.kernels.compiling import python_function


def _kernel(name, compiled):
    kernel = getattr(row_passes, name)
    return kernel if compiled else python_function(kernel)


@st.composite
def _grown_rows(draw):
    """Rows of a grown tree: each row's leaf, the weights (zeros among them), a gradient
    table of several columns (magnitudes 1e-8 to 1e8: the order of the sums shows in the
    bits), and the number of nodes."""
    n = draw(st.integers(0, 200))
    n_nodes = draw(st.integers(1, 12))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    leaf = rng.integers(0, n_nodes, size=n).astype(draw(st.sampled_from([np.int32, np.int64])))
    weight = rng.random(n) * rng.choice([0.0, 1.0, 3.5], size=n)
    values = (
        rng.normal(size=(n, draw(st.integers(1, 3)))) * 10.0 ** rng.integers(-8, 9, size=n)[:, None]
    )
    return leaf, weight, values, n_nodes


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
@settings(max_examples=60, deadline=None)
@given(rows=_grown_rows())
def test_the_passes_after_a_growth_are_numpys(compiled, rows):
    leaf, weight, values, n_nodes = rows
    n = leaf.size
    for column in range(values.shape[1]):
        expected = np.bincount(leaf, weights=weight * values[:, column], minlength=n_nodes)
        found = _kernel("weighted_leaf_sums", compiled)(leaf, weight, values, column, n_nodes)
        assert found.tobytes() == expected.tobytes()
    # each row's leaf from the rows in leaf order (a stable sort: increasing within a leaf)
    order = np.argsort(leaf, kind="stable").astype(np.int32)
    leaves = np.unique(leaf).astype(np.int32)
    ends = np.cumsum(np.bincount(leaf, minlength=n_nodes)[leaves]).astype(np.int64)
    found = np.full(n, -1, dtype=np.int32)
    scatter = _kernel("scatter_leaves", compiled)
    cuts = sorted({0, n, n // 3, (2 * n) // 3, int(ends[0]) if ends.size else 0})
    for start, stop in zip(cuts, cuts[1:], strict=False):  # ranges of positions, as threads
        scatter(order, leaves, ends, found, start, stop)  # take them, one at a leaf's end
    assert np.array_equal(found, leaf)
    # raw predictions moved by the leaves' values
    leaf_values = np.random.default_rng(n).normal(size=n_nodes)
    raw = values.copy()
    expected = values.copy()
    expected[:, -1] += 0.1 * leaf_values[leaf]
    add = _kernel("add_leaf_values", compiled)
    middle = n // 3  # two ranges of rows, as two threads take them
    add(raw, values.shape[1] - 1, 0.1, leaf_values, leaf, 0, middle)
    add(raw, values.shape[1] - 1, 0.1, leaf_values, leaf, middle, n)
    assert raw.tobytes() == expected.tobytes()


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
@settings(max_examples=40, deadline=None)
@given(rows=_grown_rows(), fortran=st.booleans())
def test_the_rows_before_a_growth_are_numpys(compiled, rows, fortran):
    _, weight, values, _ = rows
    # a boosting tree's residual rows (r, r^2), r = -gradient[:, column]
    gradient = np.asfortranarray(values) if fortran else values
    residuals = np.full((weight.size, 2), np.nan)
    column = values.shape[1] - 1
    _kernel("residual_rows", compiled)(gradient, column, residuals, 0, weight.size)
    negative = np.negative(values[:, column])
    assert residuals.tobytes() == np.column_stack([negative, negative * negative]).tobytes()


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
@settings(max_examples=40, deadline=None)
@given(rows=_grown_rows(), fortran=st.booleans())
def test_the_newton_rows_are_numpys(compiled, rows, fortran):
    """(-g, h, g^2 / h) with numpy's bits; the third 0 where h <= 0 and at most
    MAX_NEWTON_SQUARE where h is tiny."""
    _, weight, values, _ = rows
    gradient = np.asfortranarray(values) if fortran else values
    hessian = np.abs(values[:, ::-1]).copy()
    hessian[::3] = 0.0  # no hessian: no square
    hessian[1::7] = 1e-300  # a square past the cap
    found = np.full((weight.size, 3), np.nan)
    column = values.shape[1] - 1
    newton_rows, middle = _kernel("newton_rows", compiled), weight.size // 2
    newton_rows(gradient, hessian, column, found, middle, weight.size)
    newton_rows(gradient, hessian, column, found, 0, middle)
    g, h = values[:, column], hessian[:, column]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        square = np.where(h > 0, np.minimum(g * g / h, row_passes.MAX_NEWTON_SQUARE), 0.0)
    expected = np.column_stack([np.negative(g), h, square])
    assert found.tobytes() == expected.tobytes()


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
@settings(max_examples=40, deadline=None)
@given(rows=_grown_rows())
def test_the_logistic_gradient_and_hessian_are_numpys(compiled, rows):
    """p - [y = 1] and p (1 - p), p = expit(raw), as the numpy expression computes them
    with kernels.elementary's exp (within an ulp of numpy's, so p within two of numpy's):
    each within two ulp of p and one rounding of numpy's, also where exp(-raw) overflows
    (p = 0)."""
    from treekit_core.builtins.losses import expit

    _, weight, values, _ = rows
    raw = values[:, :1] * 1e-6  # log-odds from 1e-14 to 100
    raw[::5] = -800.0  # exp(800) overflows: p is 0
    y = (np.arange(weight.size) % 3 == 0).astype(np.float64)
    gradient, hessian = np.full_like(raw, np.nan), np.full_like(raw, np.nan)
    with np.errstate(over="ignore"):  # plain Python's exp warns of the overflow
        _kernel("logistic_gradient_hessian", compiled)(
            raw[:, 0], y, gradient[:, 0], hessian[:, 0], 0, weight.size
        )
    p = expit(raw)
    for found, expected in ((gradient, p - (y[:, None] == 1)), (hessian, p * (1 - p))):
        bound = 2 * np.spacing(p) + np.spacing(np.abs(expected))
        assert np.all(np.abs(found - expected) <= bound)
    assert np.all(hessian[::5] == 0.0) and np.all(gradient[::5] == -y[::5, None])


@pytest.mark.parametrize("weighted", [False, True])
def test_the_binomial_deviance_is_the_same_on_any_number_of_threads(weighted):
    """The log loss's train_score_ (twice the mean of log(1 + exp(f)) - [y = 1] f): numpy's
    logaddexp's to 1e-13, and the same bits on one thread and on two (blocks of rows
    summed in order), over enough rows that two threads take part."""
    from treekit_core.builtins.losses import LogLoss
    from treekit_core.kernels.usable_cpus import numba_threads_capped

    rng = np.random.default_rng(3)
    n = 700_001  # past the threads' threshold, the last block partial
    raw = rng.normal(scale=4.0, size=(n, 1))
    raw[:50] = 900.0  # exp(900) overflows where the expression is not rearranged
    y = (rng.random(n) < 0.4).astype(np.float64)
    weight = rng.random(n) * 3.0 if weighted else None
    terms = np.logaddexp(0.0, raw[:, 0]) - (y == 1) * raw[:, 0]
    expected = 2 * np.average(terms, weights=weight)
    found = {}
    for threads in (1, 2):
        with numba_threads_capped(threads):
            found[threads] = LogLoss().loss(y, raw, weight)
    assert found[1] == found[2]
    np.testing.assert_allclose(found[1], expected, rtol=1e-13)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
@pytest.mark.parametrize("weighted", [False, True])
def test_the_gradient_and_the_deviance_in_one_pass_are_the_passes_apart(compiled, weighted):
    """A boosting round's binomial gradient and hessian and the previous round's deviance
    from one exp a row (binomial_blocks with a gradient): the gradient and hessian
    logistic_gradient_hessian's bits, the deviance's sums the pass without a gradient's,
    on rows where exp(-f) overflows and where it is 0."""
    rng = np.random.default_rng(5)
    n = 3 * row_passes.DEVIANCE_BLOCK_ROWS + 17  # the last block partial
    raw = rng.normal(scale=6.0, size=(n, 1))
    raw[::97], raw[1::89] = -800.0, 800.0  # exp(-f) overflows; exp(-f) is 0
    y = (rng.random(n) < 0.4).astype(np.float64)
    weight = rng.random(n) * 3.0 if weighted else np.zeros(0)
    blocks = _kernel("binomial_blocks", compiled)
    n_blocks = -(-n // row_passes.DEVIANCE_BLOCK_ROWS)
    alone, fused = np.empty((n_blocks, 2)), np.empty((n_blocks, 2))
    gradient, hessian = np.full(n, np.nan), np.full(n, np.nan)
    f = raw[:, 0]
    with np.errstate(over="ignore", divide="ignore"):  # plain Python's exp warns
        blocks(f, y, weight, alone, np.empty(0), np.empty(0), 0, n_blocks)
        blocks(f, y, weight, fused, gradient, hessian, 1, n_blocks)  # two ranges of
        blocks(f, y, weight, fused, gradient, hessian, 0, 1)  # blocks, as two threads
        expected_gradient, expected_hessian = np.empty(n), np.empty(n)
        _kernel("logistic_gradient_hessian", compiled)(
            f, y, expected_gradient, expected_hessian, 0, n
        )
    assert fused.tobytes() == alone.tobytes()
    assert gradient.tobytes() == expected_gradient.tobytes()
    assert hessian.tobytes() == expected_hessian.tobytes()
    terms = np.logaddexp(0.0, raw[:, 0]) - (y == 1) * raw[:, 0]
    w = weight if weighted else np.ones(n)
    np.testing.assert_allclose(fused[:, 0].sum() / fused[:, 1].sum(), np.average(terms, weights=w))
