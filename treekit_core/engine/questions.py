"""The questions a node can ask, and how a sample answers them.

``THRESHOLD`` (0): x[feature] <= threshold. ``SUBSET`` (1): the category code of
x[feature] is in the node's set, stored as a bit mask (codes 0..52). ``OBLIQUE`` (2):
coef . x <= threshold. A sample whose value is missing (NaN) goes down both branches, to
the left with the node's ``missing_left`` share (the share of the node's known training
weight that went left, C4.5's rule), to the right with the rest.
"""

from __future__ import annotations

import numpy as np

THRESHOLD, SUBSET, OBLIQUE = 0, 1, 2
MAX_CATEGORIES = 53  #: category codes must fit the bits of a float64 mantissa


def question_fields(tree):
    """Per-node arrays of the question kind, category mask, oblique coefficients and
    missing share, with defaults for trees whose nodes only ask thresholds."""
    n = tree.n_nodes
    fields = tree.node_fields
    question = np.nan_to_num(
        np.asarray(fields.get("question", np.zeros(n)), dtype=np.float64)
    ).astype(np.int64)
    mask = np.nan_to_num(
        np.asarray(fields.get("category_mask", np.zeros(n)), dtype=np.float64)
    ).astype(np.int64)
    coef = np.asarray(fields.get("coef", np.zeros((n, 1))), dtype=np.float64)
    coef = np.ascontiguousarray(np.nan_to_num(coef.reshape(n, -1)))
    share = np.asarray(fields.get("missing_left", np.full(n, 0.5)), dtype=np.float64)
    share = np.where(np.isnan(share), 0.5, share)
    return question, mask, coef, share


def has_questions_beyond_thresholds(tree) -> bool:
    return (
        "question" in tree.node_fields and np.nanmax(np.append(tree.node_fields["question"], 0)) > 0
    )


def split_field(split, name: str, default: float) -> float:
    """A scalar node field of ``split``; a tree stores NaN where a node does not set a field
    (another node's question does), so NaN reads as the default."""
    value = split.node_fields.get(name, default)
    if np.ndim(value) == 0 and np.isnan(value):
        return default
    return value


def left_share(X_rows, split) -> np.ndarray:
    """For rows of X: 1 when the row answers the split's question 'yes' (left), 0 when
    'no', and the split's missing share when the tested value is missing (or, for a
    subset question, a category the tree never saw, as the routing kernel does)."""
    question = int(split_field(split, "question", THRESHOLD))
    if question == OBLIQUE:
        coef = np.asarray(split.node_fields["coef"], dtype=np.float64)
        z = X_rows @ np.nan_to_num(coef)
        missing = np.isnan(X_rows[:, coef != 0]).any(axis=1)
        answer = (z <= split.threshold).astype(np.float64)
    else:
        x = X_rows[:, split.feature]
        missing = np.isnan(x)
        if question == SUBSET:
            codes = np.where(missing, 0, x).astype(np.int64)
            missing |= (codes < 0) | (codes >= MAX_CATEGORIES)
            mask = int(split_field(split, "category_mask", 0))
            answer = ((mask >> np.clip(codes, 0, MAX_CATEGORIES - 1)) & 1).astype(np.float64)
        else:
            answer = (x <= split.threshold).astype(np.float64)
    share = float(split_field(split, "missing_left", 0.5))
    return np.where(missing, share, answer)
