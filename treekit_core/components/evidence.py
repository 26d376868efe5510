"""What the components that read the target's rows (criterion, labeler) share."""

from __future__ import annotations

from typing import ClassVar

import numpy as np


def one_hot(encoded: np.ndarray, n_classes: int) -> np.ndarray:
    """One-hot evidence rows for class indices."""
    evidence = np.zeros((encoded.shape[0], n_classes))
    evidence[np.arange(encoded.shape[0]), encoded] = 1.0
    return evidence


class ReadsEvidence:
    """Mixin of the kinds that read the rows the target writes (criterion and labeler).

    Node statistics are weighted sums of those rows; the target writes them
    (:meth:`treekit_core.components.Target.encode`), and the components that read them say
    which kind of row they understand.
    """

    evidence: ClassVar[str] = "one_hot"
    """The kind of rows this component reads: ``"one_hot"`` (a class label is a one-hot
    row) or another kind a target defines (``"counterexamples"``). Read at fit: it must be
    the target's kind (the labeler's only when the target decides with the labeler)."""
