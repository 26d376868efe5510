"""R's arithmetic where a peer's last bits depend on it (rpart's rescaling of time is R
code): R sums and accumulates doubles in long double (``sum``, ``cumsum``: LDOUBLE in
summary.c and cum.c), interpolates as ``approx``'s C routine does, and takes type-7
quantiles with its own formula. numpy adds in pairs in double, and its ``interp`` and
``quantile`` order their operations otherwise."""

from __future__ import annotations

import numpy as np


def r_cumsum(values) -> np.ndarray:
    """R's ``cumsum`` of doubles: a running long double sum, each step rounded to double."""
    values = np.asarray(values, dtype=np.float64)
    return np.cumsum(values.astype(np.longdouble)).astype(np.float64)


def r_group_sums(groups: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """R's ``tapply(values, groups, sum)`` for groups 0..n_groups-1: each group's values in
    their order, summed in long double (0 for a group without values)."""
    order = np.argsort(groups, kind="stable")
    bounds = np.searchsorted(groups[order], np.arange(n_groups + 1))
    sorted_values = np.asarray(values, dtype=np.float64)[order]
    sums = np.zeros(n_groups)
    for group in range(n_groups):
        part = sorted_values[bounds[group] : bounds[group + 1]]
        if part.size:
            sums[group] = r_cumsum(part)[-1]
    return sums


def r_approx(x: np.ndarray, y: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R's ``approx(x, y, v)$y`` (linear, x increasing and distinct, v within [x[0],
    x[-1]]): y[i] + (y[j] - y[i]) * ((v - x[i]) / (x[j] - x[i])) for x[i] <= v < x[j],
    y[i] or y[j] where v equals it (approx1 in R's approx.c)."""
    x, y, v = (np.asarray(a, dtype=np.float64) for a in (x, y, v))
    i = np.clip(np.searchsorted(x, v, side="right") - 1, 0, x.size - 2)
    j = i + 1
    with np.errstate(invalid="ignore", divide="ignore"):
        line = y[i] + (y[j] - y[i]) * ((v - x[i]) / (x[j] - x[i]))
    return np.where(v == x[j], y[j], np.where(v == x[i], y[i], line))


def r_quantile7(sorted_values: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """R's ``quantile(x, probs)`` (type 7) of increasing ``sorted_values``: index
    1 + (n - 1) p, and (1 - h) x[lo] + h x[hi] where the index is between two values that
    differ (quantile.default)."""
    x = np.asarray(sorted_values, dtype=np.float64)
    index = 1.0 + (x.size - 1) * np.asarray(probs, dtype=np.float64)
    lo, hi = np.floor(index).astype(np.int64), np.ceil(index).astype(np.int64)
    result = x[lo - 1].copy()
    between = (index > lo) & (x[hi - 1] != result)
    h = (index - lo)[between]
    result[between] = (1.0 - h) * result[between] + h * x[hi - 1][between]
    return result
