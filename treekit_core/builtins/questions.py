"""Built-in question kinds: ``threshold`` (x <= t; defined with the contract, as every
split's default kind), ``below_cut`` (rpart's x < c), ``subset`` (category in S) and
``multiway`` (one branch per category).

Nominal features reach the tree as category codes 0..m-1 (NaN: missing or a category never
seen in training, see :mod:`treekit_core.engine.categorical`); a code a node cannot place
answers :data:`MISSING_BRANCH`, so the sample goes down every branch by the training shares.
"""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.components.question import MISSING_BRANCH, Question
from treekit_core.components.question import Threshold as Threshold  # registered here
from treekit_core.engine.questions import MAX_CATEGORIES


def subset_answer(x, feature, threshold, params, n_branches):
    value = x[feature]
    if np.isnan(value) or value < 0 or value >= MAX_CATEGORIES:
        return MISSING_BRANCH
    mask = np.int64(params[0])
    return 0 if (mask >> np.int64(value)) & 1 else 1


def multiway_answer(x, feature, threshold, params, n_branches):
    value = x[feature]
    if np.isnan(value) or value < 0 or value >= n_branches:
        return MISSING_BRANCH
    return np.int64(value)


@attrs.define(slots=False)
class BelowCut(Threshold):
    """rpart's question x[feature] < cut (branch 0) or >= cut (branch 1). Stored as a
    threshold question whose threshold is the largest double below the cut, so it routes
    (and exports, and compiles) as ``x <= threshold`` does, a row on the cut going to
    branch 1 as in rpart; it is worded with the cut."""

    name: ClassVar[str] = "below_cut"
    description: ClassVar[str] = (
        "x[feature] < cut, stored as x <= the largest double below the cut (rpart's)"
    )

    def branch_texts(self, feature, threshold, params, n_branches, context):
        name = context.feature_names[feature]
        cut = context.number(float(np.nextafter(threshold, np.inf)))
        return [f"{name} < {cut}", f"{name} >= {cut}"]


def category_name(context, feature: int, code: int) -> str:
    """The name of category ``code`` of a nominal feature (the code when unknown)."""
    levels = context.categories.get(int(feature))
    return str(levels[code]) if levels is not None and code < len(levels) else str(code)


@attrs.define(slots=False)
class Subset(Question):
    """The category code of x[feature] is in the node's set S (branch 0) or not (branch 1);
    S is the bit mask in the node field ``category_mask``."""

    name: ClassVar[str] = "subset"
    description: ClassVar[str] = "category in S: two branches on a nominal feature (CART)"
    answer: ClassVar[object] = staticmethod(subset_answer)
    parameter_field: ClassVar[str] = "category_mask"

    def branch_texts(self, feature, threshold, params, n_branches, context):
        mask = int(params[0])
        levels = context.categories.get(int(feature))
        limit = len(levels) if levels is not None else MAX_CATEGORIES
        names = [category_name(context, feature, c) for c in range(limit) if (mask >> c) & 1]
        name = context.feature_names[feature]
        if len(names) == 1:  # one category against the rest, worded as J48 -B does
            return [f"{name} = {names[0]}", f"{name} != {names[0]}"]
        inside = "{" + ", ".join(names) + "}"
        return [f"{name} in {inside}", f"{name} not in {inside}"]

    def category_branches(self, feature, threshold, params, n_branches):
        mask = int(params[0])
        return np.array([0 if (mask >> c) & 1 else 1 for c in range(MAX_CATEGORIES)])

    def check_node(self, feature, threshold, params, n_branches, n_features):
        problem = super().check_node(feature, threshold, params, n_branches, n_features)
        if problem is None and n_branches != 2:
            return f"{n_branches} branches; a subset question has 2"
        mask = float(params[0])
        if problem is None and not (0 <= mask < 2.0**MAX_CATEGORIES and mask == int(mask)):
            return f"category mask {mask!r} is not an integer in [0, 2**{MAX_CATEGORIES})"
        return problem


@attrs.define(slots=False)
class Multiway(Question):
    """One branch per category: a sample with category code c goes to branch c (C4.5 and the
    Cambridge handout's non-binary splits on nominal features)."""

    name: ClassVar[str] = "multiway"
    description: ClassVar[str] = "one branch per category of a nominal feature (C4.5, ID3)"
    answer: ClassVar[object] = staticmethod(multiway_answer)

    def branch_texts(self, feature, threshold, params, n_branches, context):
        name = context.feature_names[feature]
        return [f"{name} = {category_name(context, feature, c)}" for c in range(n_branches)]

    def category_branches(self, feature, threshold, params, n_branches):
        return np.arange(n_branches)
