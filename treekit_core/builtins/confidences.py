"""Built-in confidence ``probability``: the largest class probability of the prediction."""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.components import Confidence


@attrs.define(slots=False)
class Probability(Confidence):
    handles_missing: ClassVar[bool] = True
    name: ClassVar[str] = "probability"
    description: ClassVar[str] = "maximum class probability of the sample's distribution"
    reads_training_rows = False  # a score of the prediction alone

    def score(self, tree, X, proba, decision):
        return np.max(proba, axis=1)
