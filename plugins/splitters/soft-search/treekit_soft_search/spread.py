"""Per-feature spreads of the measurement noise model.

An observed value x of feature a stands for a true value ~ N(x, sigma_a^2) with
sigma_a = u * mean(a) over the training data (Nunes et al.), or a user-given absolute
sigma per feature (what a clinician knows of an instrument).
"""

from __future__ import annotations

import math
import numbers

import numpy as np


def check_u(instance, attribute, value):
    if not (isinstance(value, numbers.Real) and value >= 0 and math.isfinite(value)):
        raise ValueError(
            f"{attribute.name} must be a finite number >= 0 (relative uncertainty), got {value!r}"
        )


def check_sigma(instance, attribute, value):
    if value is None:
        return
    try:
        values = np.atleast_1d(np.asarray(value, dtype=np.float64))
    except (TypeError, ValueError):
        values = np.array([np.nan])
    if values.ndim != 1 or not np.isfinite(values).all() or (values < 0).any():
        raise ValueError(
            f"{attribute.name} must be None or finite values >= 0 (one per feature), got {value!r}"
        )


def feature_spreads(data, u: float, sigma, component: str) -> np.ndarray:
    """sigma per feature: the given absolute ``sigma`` (one value, or one per feature), or
    ``u * mean`` of each feature over the training data. A feature whose mean is not
    positive has no relative spread: that is an error naming the feature. A nominal
    feature has no spread (0): its questions are never softened."""
    d = data.n_features
    if sigma is not None:
        values = np.atleast_1d(np.asarray(sigma, dtype=np.float64))
        if values.size == 1:
            return np.full(d, float(values[0]))
        if values.size != d:
            raise ValueError(
                f"{component}: sigma has {values.size} values but the data has {d} features"
            )
        return values.copy()
    means = _column_means(data.X) if data.n_samples else np.zeros(d)
    means[data.nominal_features] = 0.0
    numeric = np.ones(d, dtype=bool)
    numeric[data.nominal_features] = False
    bad = np.flatnonzero(~(means > 0) & numeric)
    if u > 0 and bad.size:
        j = int(bad[0])
        name = f" ({data.feature_names[j]!r})" if data.feature_names is not None else ""
        raise ValueError(
            f"{component}: feature {j}{name} has mean {means[j]:g}; the spread u * mean needs a "
            f"positive mean. Give absolute spreads with sigma=[...] (one per feature) instead"
        )
    spreads = u * means if u > 0 else np.zeros(d)
    overflowing = np.flatnonzero(~np.isfinite(spreads))
    if overflowing.size:
        j = int(overflowing[0])
        raise ValueError(
            f"{component}: feature {j} has mean {means[j]:g}, and the spread u * mean = "
            f"{spreads[j]:g} is not a finite number; rescale the feature or give sigma=[...]"
        )
    return spreads


def _column_means(X) -> np.ndarray:
    """Mean of every column over its known values; a column whose sum overflows (values
    near the float limit) is averaged divided by its largest magnitude instead."""
    import warnings

    with np.errstate(invalid="ignore", over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-missing columns: NaN
        means = np.nanmean(X, axis=0)
        overflowed = np.flatnonzero(np.isinf(means) | (np.isnan(means) & ~np.isnan(X).all(axis=0)))
        for j in overflowed:
            largest = np.nanmax(np.abs(X[:, j]))
            means[j] = np.nanmean(X[:, j] / largest) * largest
    return means
