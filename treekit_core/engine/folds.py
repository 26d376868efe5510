"""Stratified folds: what cross-validated pruning, rejection, calibration and ``treekit
evaluate --cv`` deal rows with (one definition, so the same seed gives the same folds
everywhere)."""

from __future__ import annotations

import numpy as np


def stratified_folds(labels: np.ndarray, n_folds: int, rng: np.random.Generator) -> np.ndarray:
    """Fold number of every row; each class is dealt round-robin after a shuffle."""
    fold = np.empty(labels.shape[0], dtype=np.int64)
    offset = 0
    for label in np.unique(labels):
        rows = rng.permutation(np.flatnonzero(labels == label))
        fold[rows] = (np.arange(rows.size) + offset) % n_folds
        offset += rows.size
    return fold
