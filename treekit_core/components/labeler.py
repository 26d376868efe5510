"""The labeler: class-evidence sums to a class distribution and a decision."""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.components.base import ABSTAIN, Component
from treekit_core.components.evidence import ReadsEvidence


@attrs.define(slots=False)
class Labeler(ReadsEvidence, Component):
    """Turns class-evidence sums into a class distribution and a decision (or abstention)."""

    kind: ClassVar[str] = "labeler"
    provides: ClassVar[frozenset] = frozenset({"crisp_labels"})

    @property
    def can_abstain(self) -> bool:
        """Whether :meth:`decide` may return :data:`ABSTAIN`. Read by ``predict``, which
        then needs an ``abstain_value``. Default: False."""
        return False

    def distribution(self, class_sums: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Class distribution per row of ``class_sums`` (n x K) -> (n x K), rows summing to
        1. Called on every node after growing and pruning. Default: normalised sums (uniform
        where a node has no weight)."""
        totals = class_sums.sum(axis=1, keepdims=True)
        k = class_sums.shape[1]
        with np.errstate(invalid="ignore", divide="ignore"):
            proba = np.where(totals > 0, class_sums / np.where(totals > 0, totals, 1.0), 1.0 / k)
        return proba

    def decide(self, proba: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        """Class index per row of ``proba``, or :data:`ABSTAIN` (-1). Called on every node
        after labelling and on every sample at prediction."""
        raise NotImplementedError

    def sample_errors(self, evidence: np.ndarray, decision: np.ndarray) -> np.ndarray:
        """Error (0..1) of deciding ``decision`` for samples with these evidence rows; an
        abstention counts as an error. Called by cross-validated pruning and rejection
        rules. Default (one-hot rows): 1 - evidence of the decided class."""
        rows = np.arange(decision.shape[0])
        credit = np.where(decision == ABSTAIN, 0.0, evidence[rows, np.maximum(decision, 0)])
        return 1.0 - np.clip(credit, 0.0, 1.0)

    def row_labels(self, evidence: np.ndarray) -> np.ndarray:
        """A class index per evidence row, to stratify folds and bootstrap by class. Called
        by cross-validation and forests. Default (one-hot rows): the labelled class."""
        return np.argmax(evidence, axis=1)

    def node_error(self, class_sums: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Weighted training errors of each node's decision (the risk cost-complexity
        pruning uses). Called by the pruners. Default: an abstaining node is charged as if
        it decided its majority class."""
        decision = self.decide(self.distribution(class_sums, weights))
        chosen = np.where(decision >= 0, decision, np.argmax(class_sums, axis=1))
        return weights - class_sums[np.arange(len(weights)), chosen]
