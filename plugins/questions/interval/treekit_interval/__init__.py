"""An example question kind: ``lo < x[feature] <= hi`` (branch 0, "inside") or not (branch 1).

The kind declares its candidates as runs of the node's sorted distinct values
(``range_count`` / ``range_candidate``, see :class:`treekit_core.Question`), so the built-in
exhaustive splitter searches it at compiled speed when a composition names it::

    TreeClassifier(splitter_params={"questions": ["interval"]})

Candidates are the two-sided intervals only: a run that starts at the smallest value or
ends at the largest is a threshold question, which the splitter searches anyway. With m
distinct values at a node, the runs start and end at any of the m - 1 gaps between them,
(m - 1)(m - 2) / 2 candidates; past ``MAX_GAPS`` gaps, at ``MAX_GAPS`` gaps evenly spaced in
rank, so a node's search stays O(MAX_GAPS^2) per feature.
"""

from __future__ import annotations

import math
from typing import ClassVar

import attrs
import numpy as np

from treekit_core import MISSING_BRANCH, Question, hookimpl

#: The treekit plugin API this plugin is written for (see treekit_core's CHANGELOG.md).
TREEKIT_PLUGIN_API = 4

#: At most this many gaps between distinct values bound a candidate interval.
MAX_GAPS = 128


def interval_answer(x, feature, threshold, params, n_branches):
    value = x[feature]
    if np.isnan(value):
        return MISSING_BRANCH
    return 0 if params[0] < value <= threshold else 1


# The two functions below are compiled into the splitter's search kernel; they call no
# other Python function (a helper would have to be compiled too), so each computes the
# number of gaps used, every one of the n_values - 1 or MAX_GAPS of them, itself.


def interval_count(n_values):
    gaps = min(n_values - 1, MAX_GAPS)
    return gaps * (gaps - 1) // 2 if gaps >= 2 else 0


def interval_candidate(values, n_values, index):
    """Pair ``index`` of gaps a < b, ordered by b then a (index = b (b - 1) / 2 + a); gap g
    is the one before value g + 1, or, when not every gap is used, gap g of ``gaps`` evenly
    spaced in rank."""
    gaps = min(n_values - 1, MAX_GAPS)
    b = int((1.0 + math.sqrt(1.0 + 8.0 * index)) / 2.0)
    while b * (b - 1) // 2 > index:  # the square root's rounding, either way
        b -= 1
    while (b + 1) * b // 2 <= index:
        b += 1
    a = index - b * (b - 1) // 2
    if gaps == n_values - 1:
        return a + 1, b + 1
    return 1 + (a * (n_values - 2)) // (gaps - 1), 1 + (b * (n_values - 2)) // (gaps - 1)


def midpoint(low, high):
    """The threshold between two neighbouring values, as the threshold search places it."""
    middle = low / 2.0 + high / 2.0
    return low if middle == high or not math.isfinite(middle) else middle


@attrs.define(slots=False)
class Interval(Question):
    """``lo < x[feature] <= hi``: branch 0 inside the interval, branch 1 outside."""

    name: ClassVar[str] = "interval"
    description: ClassVar[str] = "lo < x[feature] <= hi: two branches, inside and outside"
    answer: ClassVar[object] = staticmethod(interval_answer)
    parameter_field: ClassVar[str] = "interval_low"
    range_count: ClassVar[object] = staticmethod(interval_count)
    range_candidate: ClassVar[object] = staticmethod(interval_candidate)

    def range_parameters(self, before, first, last, after):
        return midpoint(last, after), {"interval_low": midpoint(before, first)}

    def branch_texts(self, feature, threshold, params, n_branches, context):
        name = context.feature_names[feature]
        low, high = context.number(float(params[0])), context.number(threshold)
        return [f"{low} < {name} <= {high}", f"not {low} < {name} <= {high}"]

    def check_node(self, feature, threshold, params, n_branches, n_features):
        problem = super().check_node(feature, threshold, params, n_branches, n_features)
        if problem is None and n_branches != 2:
            return f"{n_branches} branches; an interval question has 2"
        if problem is None and not (
            np.isfinite(threshold) and np.isfinite(params[0]) and params[0] < threshold
        ):
            return f"interval ({params[0]!r}, {threshold!r}] is not a finite, non-empty interval"
        return problem


@hookimpl
def treekit_questions():
    return [Interval]
