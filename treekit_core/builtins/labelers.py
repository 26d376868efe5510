"""Built-in labeler ``majority``: the class with the largest posterior (Bayes' rule)."""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.components import Labeler


@attrs.define(slots=False)
class Majority(Labeler):
    """p_c = W_c / sum_k W_k; decide argmax p_c (the first class on ties, as scikit-learn).

    ``laplace=True`` smooths the distribution to (W_c + 1) / (W + K) (C4.5's Laplace
    correction, used by Nunes et al.); decisions do not change.
    """

    name: ClassVar[str] = "majority"
    description: ClassVar[str] = "class with the largest weighted proportion"
    laplace: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))

    def distribution(self, class_sums, weights):
        if not self.laplace:
            return super().distribution(class_sums, weights)
        k = class_sums.shape[1]
        return (class_sums + 1.0) / (class_sums.sum(axis=1, keepdims=True) + k)

    def decide(self, proba):
        return np.argmax(proba, axis=1).astype(np.int64)
