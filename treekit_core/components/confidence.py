"""The confidence: how much a prediction can be trusted."""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.components.base import Component, FittedAfterGrowth


@attrs.define(slots=False)
class Confidence(FittedAfterGrowth, Component):
    """Scores how much a prediction can be trusted (larger = more confident)."""

    kind: ClassVar[str] = "confidence"
    sees_features: ClassVar[bool] = True

    needs_single_tree: ClassVar[bool] = False
    """True when the score is defined by one tree's regions (the boundary distance), so a
    forest cannot use it. Read by ``ForestClassifier.fit``, which then refuses it."""

    def fit(self, tree, data, labeler) -> dict:
        """Return the state this confidence needs at scoring time (stored in
        ``Tree.component_state["confidence"]``). Called once per fit, after the evaluator's
        fit. Default: {}."""
        return {}

    def score(self, tree, X: np.ndarray, proba: np.ndarray, decision: np.ndarray) -> np.ndarray:
        """One finite score per sample. Called by ``decide`` and the reject rules; ``tree``
        is None for a forest."""  # pragma: no cover
        raise NotImplementedError
