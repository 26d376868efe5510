"""Built-in labeler ``majority``: the class with the largest posterior (Bayes' rule)."""
from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.components import Labeler


@attrs.define(slots=False)
class Majority(Labeler):
    """p_c = W_c / sum_k W_k; decide argmax p_c (the first class on ties, as scikit-learn)."""

    name: ClassVar[str] = "majority"
    description: ClassVar[str] = "class with the largest weighted proportion"

    def decide(self, proba):
        return np.argmax(proba, axis=1).astype(np.int64)
