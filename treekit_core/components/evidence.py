"""What the components that read class evidence (criterion, labeler) share."""

from __future__ import annotations

from typing import ClassVar

import numpy as np


def one_hot(encoded: np.ndarray, n_classes: int) -> np.ndarray:
    """One-hot evidence rows for class indices."""
    evidence = np.zeros((encoded.shape[0], n_classes))
    evidence[np.arange(encoded.shape[0]), encoded] = 1.0
    return evidence


class ReadsEvidence:
    """Mixin of the kinds that read the evidence rows (criterion and labeler).

    Node statistics are weighted sums of evidence rows; what a row means is known only to
    the components that read it, so they, not the core, turn labels into rows.
    """

    evidence: ClassVar[str] = "one_hot"
    """The kind of evidence rows this component reads: ``"one_hot"`` (an ordinary label is
    a one-hot row) or another kind a plugin defines (``"counterexamples"``). Read at fit:
    the criterion and the labeler must read the same kind."""

    def encode_labels(self, encoded: np.ndarray, n_classes: int) -> np.ndarray:
        """Evidence rows (n x K) for ordinary class labels given as class indices. Called by
        ``fit(X, y)`` on the criterion. Default: one-hot rows."""
        return one_hot(encoded, n_classes)

    def encode_counterexamples(self, counterexamples: np.ndarray) -> np.ndarray | None:
        """Evidence rows for a validated 0/1 counterexample matrix (1: the sample is known
        not to be that class), or None when this component does not read counterexamples.
        Called by ``fit(X, counterexamples=...)`` on the criterion; None makes fit refuse
        the counterexamples, naming the component. Default: None."""
        return None
