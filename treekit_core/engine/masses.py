"""Masses: every distinct pair of values once, with the summed weight of its rows.

What the reject rules and calibration read of the scores (score, correct) and what
quantiles read of a leaf's responses (leaf, response) are masses: sums, which a grower that
sees the data in parts adds over its parts instead of bringing the rows together."""

from __future__ import annotations

import numpy as np


def pair_masses(first, second, weights) -> tuple:
    """(first, second, summed weights): every distinct (first, second) pair once, sorted by
    ``first`` then ``second``, with the weight of the rows holding it."""
    first, second = np.asarray(first), np.asarray(second)
    weights = np.asarray(weights, dtype=np.float64)
    order = np.lexsort((second, first))
    first, second, weights = first[order], second[order], weights[order]
    new = np.ones(first.size, dtype=bool)
    new[1:] = (first[1:] != first[:-1]) | (second[1:] != second[:-1])
    starts = np.flatnonzero(new)
    summed = np.add.reduceat(weights, starts) if starts.size else np.zeros(0)
    return first[starts], second[starts], summed
