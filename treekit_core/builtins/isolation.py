"""The target and criterion of isolation trees (Liu, Ting & Zhou 2008; issue 64): trees
with no response at all. A row's evidence is 1, so a node's statistic is its (weighted)
count of rows; the criterion's impurity is 1 while a node holds more than one row and 0
once a row is isolated, so any admissible cut is worth making and growth stops at an
isolated row (or the depth limit the isolation forest sets). With the ``random`` splitter
drawing one feature per node, these are the trees of ``IsolationForest``."""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.builtins.targets import PredictsOneNumber
from treekit_core.components import Criterion, Target, TargetRows


def isolation_impurity(sums, total_weight, params):
    """1 while the node holds more than one row (``sums[0]``: its count), else 0."""
    if sums[0] > 1.0:
        return 1.0
    return 0.0


@attrs.define(slots=False)
class IsolationCriterion(Criterion):
    """Isolation: every node with more than one row is worth splitting (module
    docstring). Reads the ``isolation`` target's rows (a count)."""

    name: ClassVar[str] = "isolation"
    description: ClassVar[str] = "isolation trees: split until every row stands alone"
    evidence: ClassVar[str] = "row_count"
    default_target: ClassVar[str] = "isolation"
    impurity = staticmethod(isolation_impurity)


@attrs.define(slots=False)
class Isolation(PredictsOneNumber, Target):
    """No response: every row's evidence is 1 (whatever y is, if any), a node's value its
    count of training rows, which the isolation score's average path length reads."""

    name: ClassVar[str] = "isolation"
    description: ClassVar[str] = "no response: a node counts its rows (isolation forests)"
    evidence: ClassVar[str] = "row_count"
    provides: ClassVar[frozenset] = frozenset()

    def encode(self, y, n_samples, **given):
        return TargetRows(np.ones((n_samples, 1)), None)

    def node_values(self, statistics, weights, labeler):
        return (
            np.asarray(statistics[:, :1], dtype=np.float64).copy(),
            np.zeros(statistics.shape[0], dtype=np.int64),
        )

    def strata(self, rows, labeler):
        return np.zeros(rows.shape[0], dtype=np.int64)

    def sample_loss(self, rows, values, decisions, labeler):
        return np.zeros(rows.shape[0])
