"""Strasser & Weber's permutation tests of independence, as libcoin 1.0-9 computes them
for partykit's ``ctree``.

For the rows of a node with case weights w_i (frequency weights, n = sum w_i), a
feature's transformation g(x_i) (p columns) and the response's influence h(y_i) (q
columns), the linear statistic is T = vec(sum_i w_i g(x_i) h(y_i)^T). Under the
permutations of the responses its expectation and covariance are

    mu    = vec((sum_i w_i g_i) E(h)^T)
    Sigma = n / (n - 1) V(h) (x) (sum_i w_i g_i g_i^T)
            - 1 / (n - 1) V(h) (x) (sum_i w_i g_i)(sum_i w_i g_i)^T

with E(h) = sum w h / n and V(h) = sum w (h - E h)(h - E h)^T / n. The quadratic statistic
is (T - mu)^T Sigma^+ (T - mu), chi-squared with rank(Sigma) degrees of freedom; the
maximum statistic max_j |T_j - mu_j| / sqrt(Sigma_jj), its p-value the multivariate normal
probability of the standardised statistics' box. Sigma^+ is the Moore-Penrose inverse from
the eigen decomposition, eigenvalues below sqrt(machine epsilon) times the largest taken
as 0 (libcoin's ``C_MPinv_sym``).

A numeric feature is tested with g(x) = x; a nominal one with g its dummy codes. The split
of the chosen feature maximises the same statistic over the binary partitions (libcoin's
maximally selected statistics): for a numeric feature the groups x <= u (u a value of the
feature), for a nominal one every subset of its levels, each side holding at least
``minbucket`` weight.
"""

from __future__ import annotations

import math

import numpy as np

from treekit_core.kernels import stable_order
from treekit_ctree.node_sums import cut_sums

#: libcoin's tolerance (partykit's ``ctree_control(tol = sqrt(.Machine$double.eps))``).
TOLERANCE = math.sqrt(np.finfo(np.float64).eps)


def influence_moments(H: np.ndarray, w: np.ndarray):
    """(n, E(h), V(h)) of the rows' influence ``H`` (n x q) with case weights ``w``."""
    n = float(w.sum())
    expectation = (w @ H) / n
    centred = H - expectation
    covariance = (centred * w[:, None]).T @ centred / n
    return n, expectation, covariance


def pseudo_inverse(matrix: np.ndarray) -> tuple[np.ndarray, int]:
    """(Moore-Penrose inverse, rank) of a symmetric matrix as libcoin's ``C_MPinv_sym``:
    eigenvalues below TOLERANCE times the largest are 0 (a 1 x 1 matrix: below TOLERANCE)."""
    if matrix.shape[0] == 1:
        value = matrix[0, 0]
        return (np.array([[1.0 / value]]), 1) if value > TOLERANCE else (np.zeros((1, 1)), 0)
    values, vectors = np.linalg.eigh(matrix)
    kept = values >= values[-1] * TOLERANCE
    inverse = (vectors[:, kept] / values[kept]) @ vectors[:, kept].T
    return inverse, int(kept.sum())


def linear_test(G: np.ndarray, H: np.ndarray, w: np.ndarray, teststat: str):
    """(statistic, p-value) of the test of independence of g (``G``, n x p) and h (``H``,
    n x q) on rows with case weights ``w``; (nan, nan) where every variance of the linear
    statistic is below TOLERANCE (x or y constant: partykit reports no test)."""
    n, expectation, covariance = influence_moments(H, w)
    if n <= 1.0:
        return math.nan, math.nan
    sum_g = w @ G
    linear = (G * w[:, None]).T @ H  # p x q
    mu = np.outer(sum_g, expectation)
    cov_g = (n / (n - 1.0)) * ((G * w[:, None]).T @ G) - np.outer(sum_g, sum_g) / (n - 1.0)
    # vec with p varying fastest within each response column (libcoin's layout)
    sigma = np.kron(covariance, cov_g)
    deviation = (linear - mu).T.reshape(-1)
    variance = np.diag(sigma)
    if not (variance >= TOLERANCE).any():
        return math.nan, math.nan
    if teststat == "quadratic":
        inverse, rank = pseudo_inverse(sigma)
        statistic = float(deviation @ inverse @ deviation)
        return statistic, chi_squared_p_value(statistic, rank)
    used = variance > TOLERANCE
    statistic = float((np.abs(deviation[used]) / np.sqrt(variance[used])).max())
    return statistic, maximum_p_value(statistic, _correlation(sigma, used))


def chi_squared_p_value(statistic, degrees):
    """P(chi^2_degrees > statistic), elementwise; 1 without degrees of freedom (scipy's
    special function: scipy.stats' distribution objects cost more per call than a
    node's test, and their import a second)."""
    from scipy.special import chdtrc

    statistic, degrees = np.broadcast_arrays(np.asarray(statistic, float), np.asarray(degrees))
    # a quadratic form rounded below 0 (x independent of y to the last bit): R's
    # pchisq(q < 0, lower = FALSE) is 1, scipy's NaN
    statistic = np.where(statistic < 0, 0.0, statistic)
    p_value = np.where(degrees > 0, chdtrc(np.maximum(degrees, 1), statistic), 1.0)
    return float(p_value) if p_value.ndim == 0 else p_value


def numeric_tests(sums, teststat: str):
    """(statistics, p-values) of :func:`linear_test` with g(x) = x for several numeric
    features at once, from their :func:`treekit_ctree.node_sums.feature_sums` (each over
    the rows that do not miss it): the covariance of feature f's linear statistic is
    V_f(h) c_f, c_f = n/(n-1) sum w x^2 - (sum w x)^2/(n-1)."""
    n, sum_x, sum_xx, sum_xh, sum_h, sum_hh = sums
    columns = n.shape[0]
    statistic, p_value = np.full(columns, np.nan), np.full(columns, np.nan)
    if sum_h.shape[1] == 1:  # one influence column (two classes, a number, follow-up)
        return _one_column_tests(
            n, sum_x, sum_xx, sum_xh[:, 0], sum_h[:, 0], sum_hh[:, 0, 0], teststat
        )
    for f in np.flatnonzero(n > 1.0):
        expectation = sum_h[f] / n[f]
        covariance = sum_hh[f] / n[f] - np.outer(expectation, expectation)
        scale = (n[f] / (n[f] - 1.0)) * sum_xx[f] - sum_x[f] * sum_x[f] / (n[f] - 1.0)
        deviation = sum_xh[f] - sum_x[f] * expectation
        statistic[f], p_value[f] = _scaled_test(deviation, covariance, scale, teststat)
    return statistic, p_value


def _one_column_tests(n, sum_x, sum_xx, sum_xh, sum_h, sum_hh, teststat):
    """:func:`numeric_tests` where h has one column, every feature at once: the same
    arithmetic as :func:`_scaled_test` (quadratic: deviation^2 / variance, chi-squared on
    one degree of freedom where the variance exceeds TOLERANCE, else 0 on none; maximum:
    |deviation| / sqrt(variance), two-sided normal)."""
    from scipy.special import ndtr

    with np.errstate(divide="ignore", invalid="ignore"):
        expectation = sum_h / n
        covariance = sum_hh / n - expectation * expectation
        scale = (n / (n - 1.0)) * sum_xx - sum_x * sum_x / (n - 1.0)
        deviation = sum_xh - sum_x * expectation
        variance = covariance * scale
        tested = (n > 1.0) & (variance >= TOLERANCE)
        kept = variance > TOLERANCE
        if teststat == "quadratic":
            statistic = np.where(kept, deviation * deviation / variance, 0.0)
            p_value = np.where(kept, chi_squared_p_value(statistic, 1), 1.0)
        else:
            statistic = np.where(kept, np.abs(deviation) / np.sqrt(variance), 0.0)
            p_value = np.where(kept, 2.0 * ndtr(-statistic), 1.0)
    return np.where(tested, statistic, np.nan), np.where(tested, p_value, np.nan)


def _scaled_test(deviation, covariance, scale, teststat):
    """(statistic, p-value) of a linear statistic whose deviation from its expectation is
    ``deviation`` (q) and whose covariance is ``covariance`` x ``scale``; (nan, nan) where
    no variance reaches TOLERANCE."""
    variance = np.diag(covariance) * scale
    if not (variance >= TOLERANCE).any():
        return math.nan, math.nan
    if teststat == "quadratic":
        if covariance.shape[0] == 1:  # libcoin: a 1 x 1 covariance below TOLERANCE is 0
            if variance[0] <= TOLERANCE:
                return 0.0, 1.0
            statistic = float(deviation[0] ** 2 / variance[0])
            return statistic, chi_squared_p_value(statistic, 1)
        # the eigenvalues' tolerance is relative: scaling the covariance keeps its rank
        inverse, rank = pseudo_inverse(covariance)
        statistic = float(deviation @ inverse @ deviation / scale)
        return statistic, chi_squared_p_value(statistic, rank)
    used = variance > TOLERANCE
    statistic = float((np.abs(deviation[used]) / np.sqrt(variance[used])).max())
    return statistic, maximum_p_value(statistic, _correlation(covariance, used))


def _correlation(covariance: np.ndarray, used: np.ndarray) -> np.ndarray:
    """The correlations among the used columns of ``covariance``."""
    part = covariance[np.ix_(used, used)]
    spread = np.sqrt(np.diag(part))
    return part / np.outer(spread, spread)


def maximum_p_value(statistic: float, correlation: np.ndarray) -> float:
    """P(max_j |Z_j| > statistic) for standard normals Z of ``correlation``: exact for one
    dimension; for more, scipy's Genz integration with mvtnorm's default precision
    (randomised to about 1e-3, as partykit's p-values are)."""
    if correlation.shape[0] == 1:
        from scipy.special import ndtr

        return float(2.0 * ndtr(-statistic))
    from scipy.stats import multivariate_normal

    limit = np.full(correlation.shape[0], statistic)
    # mvtnorm's GenzBretz() defaults, which partykit uses (maxpts 25000, abseps 0.001):
    # scipy's own (a million points a dimension) took 0.4 s a test
    inside = multivariate_normal(
        mean=np.zeros(limit.size),
        cov=correlation,
        allow_singular=True,
        maxpts=25000,
        abseps=1e-3,
        releps=0.0,
    )
    return float(max(0.0, 1.0 - inside.cdf(limit, lower_limit=-limit)))


def best_cut(x, rows, H, w, minbucket: float, teststat: str):
    """(u, statistic) of the cut x <= u of a numeric feature that maximises the test
    statistic of the two groups (the first of equal maxima, from the smallest u), each
    holding at least ``minbucket`` weight; None where no cut qualifies. ``x`` and ``w``:
    the node's rows that do not miss the feature (``rows`` of ``H``, the influence of
    every row). A cut leaving no row on one side is never offered (libcoin offers it with
    minbucket 0, partykit's surrogate search, and scores it through the rounding of a
    zero covariance: Inf, NaN or a number, machine-dependent)."""
    order = stable_order(x)  # numpy's stable argsort, by a radix sort (about 4x)
    levels, left_weight, left_sums, n, sum_h, sum_hh = cut_sums(x, order, rows, w, H)
    if not levels.size:  # one value: no cut
        return None
    # the moments as numeric_tests takes them from the same sums
    expectation = sum_h / n
    covariance = sum_hh / n - np.outer(expectation, expectation)
    best, value = _best_group(
        left_weight, left_sums, n, expectation, covariance, minbucket, teststat
    )
    return (float(levels[best]), value) if value > 0 else None


#: Levels at a node up to which every split of them is tried, as libcoin tries them (2^19
#: candidates, in blocks); beyond, the levels ordered by their mean influence are cut.
EXHAUSTIVE_LEVELS = 20
#: Candidate subsets scored at once (memory: this many rows of the levels' indicators).
SUBSET_BLOCK = 1 << 14


def best_subset(codes: np.ndarray, H: np.ndarray, w: np.ndarray, minbucket: float, teststat: str):
    """(the levels of the first group, statistic) of the split of a nominal feature
    (category ``codes``) into two groups of levels that maximises the test statistic, as
    libcoin enumerates them: the node's first level always in the second group, the others
    by the bits of 1, 2, ..., the first of equal maxima; None where no split qualifies
    (``minbucket`` weight each side). Over :data:`EXHAUSTIVE_LEVELS` levels at the node
    (libcoin enumerates up to 30, partykit refuses more) the levels are ordered by their
    mean influence (its first column) and only the cuts of that order are tried: not
    partykit's search there."""
    n, expectation, covariance = influence_moments(H, w)
    levels, inverse = np.unique(codes, return_inverse=True)
    if levels.size < 2:
        return None
    level_weight = np.bincount(inverse, weights=w, minlength=levels.size)
    level_sums = np.zeros((levels.size, H.shape[1]))
    np.add.at(level_sums, inverse, H * w[:, None])
    best_value, best_member = -np.inf, None
    for member in _candidate_groups(level_weight, level_sums):
        weight, sums = member @ level_weight, member @ level_sums
        best, value = _best_group(weight, sums, n, expectation, covariance, minbucket, teststat)
        if value > best_value:  # a later block's equal value does not win
            best_value, best_member = value, member[best]
    if best_member is None or not best_value > 0:
        return None
    return levels[best_member == 1.0], best_value


def _candidate_groups(level_weight, level_sums):
    """Blocks of candidate first groups (rows of 0/1 per level), in libcoin's order."""
    k = level_weight.size
    if k <= EXHAUSTIVE_LEVELS:
        bits = np.arange(k - 1)
        for start in range(1, 2 ** (k - 1), SUBSET_BLOCK):
            masks = np.arange(start, min(start + SUBSET_BLOCK, 2 ** (k - 1)))
            member = ((masks[:, None] >> bits[None, :]) & 1).astype(np.float64)
            yield np.hstack([np.zeros((masks.size, 1)), member])  # the first level: group two
        return
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(level_weight > 0, level_sums[:, 0] / level_weight, 0.0)
    order = np.argsort(means, kind="stable")
    member = np.zeros((k - 1, k))
    for cut in range(1, k):  # the levels of the largest means form the first group
        member[cut - 1, order[cut:]] = 1.0
    yield member


def _best_group(group_weight, group_sums, n, expectation, covariance, minbucket, teststat):
    """(index, statistic) of the first candidate group of the largest statistic among
    those leaving ``minbucket`` weight on each side (statistic -inf where none does)."""
    qualifies = (group_weight >= minbucket) & (n - group_weight >= minbucket)
    statistics = group_statistics(group_weight, group_sums, n, expectation, covariance, teststat)
    statistics = np.where(qualifies, statistics, -np.inf)
    best = int(np.argmax(statistics))  # the first maximum
    return best, float(statistics[best])


def group_statistics(group_weight, group_sums, n, expectation, covariance, teststat):
    """The test statistic of every candidate group (g the group's indicator): rows of
    ``group_sums`` (its sum w h) with ``group_weight`` (its sum w)."""
    deviation = group_sums - group_weight[:, None] * expectation[None, :]
    scale = (n * group_weight - group_weight * group_weight) / (n - 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        if teststat == "quadratic":
            if covariance.shape[0] == 1:  # libcoin: a 1 x 1 covariance below TOLERANCE is 0
                variance = covariance[0, 0] * scale
                return np.where(variance > TOLERANCE, deviation[:, 0] ** 2 / variance, 0.0)
            # the eigenvalues' tolerance is relative: scaling the covariance keeps its rank
            inverse, _ = pseudo_inverse(covariance)
            quadratic = np.einsum("ij,jk,ik->i", deviation, inverse, deviation)
            return np.where(scale > 0, quadratic / scale, 0.0)
        variance = np.outer(scale, np.diag(covariance))
        standardised = np.where(variance > TOLERANCE, np.abs(deviation) / np.sqrt(variance), 0.0)
        return standardised.max(axis=1)
