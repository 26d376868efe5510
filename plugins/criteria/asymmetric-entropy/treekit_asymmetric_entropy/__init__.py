"""Asymmetric entropy (Marcellin, Zighed & Ritschard): uncertainty that peaks at a
user-given class distribution ``w`` instead of the uniform one.

For one class with proportion p and most-uncertain proportion w (0 < w < 1):

    h(p) = p (1 - p) / ((1 - 2w) p + w^2)

h(0) = h(1) = 0, h(w) = 1, strictly concave on [0, 1]. For K classes
H(p_1..p_K) = sum_k h_k(p_k); its maximum over the simplex is at w only when the w_k sum
to 1 (a warning says so otherwise). With w_k = 0.5 for every class each term is 4 p (1 - p),
so H = 4 Gini and the criterion ranks splits exactly as Gini does.
"""

from __future__ import annotations

import numbers
import warnings
from typing import ClassVar

import attrs
import numpy as np

from treekit_core import Criterion, hookimpl

#: The treekit plugin API this plugin is written for (see treekit_core's CHANGELOG.md).
TREEKIT_PLUGIN_API = 4


def asymmetric_entropy(class_sums, total_weight, params):
    """sum_k p_k (1 - p_k) / ((1 - 2 w_k) p_k + w_k^2), with w = params."""
    if total_weight <= 0.0:
        return 0.0
    h = 0.0
    for k in range(class_sums.shape[0]):
        p = class_sums[k] / total_weight
        w = params[k]
        h += p * (1.0 - p) / ((1.0 - 2.0 * w) * p + w * w)
    return h


def _check_w(instance, attribute, value):
    values = [value] if isinstance(value, numbers.Real) else value
    try:
        values = [float(v) for v in values]
    except (TypeError, ValueError):
        raise ValueError(
            f"w must be a number or a list of numbers strictly between 0 and 1, got {value!r}"
        ) from None
    if not values:
        raise ValueError("w is empty; give one value per class (or one number for two classes)")
    for v in values:
        if not (0.0 < v < 1.0):
            raise ValueError(
                f"w must lie strictly between 0 and 1 (the denominator (1-2w)p + w^2 "
                f"vanishes otherwise), got {v!r}"
            )


@attrs.define(slots=False)
class AsymmetricEntropy(Criterion):
    """Parameters: ``w`` (one most-uncertain proportion per class, in the order of
    ``classes_``; or, for two classes, one number: the positive class's, the other class
    getting 1 - w) and ``positive_class`` (the label a single ``w`` refers to; default
    ``classes_[1]``)."""

    name: ClassVar[str] = "asymmetric_entropy"
    description: ClassVar[str] = (
        "asymmetric entropy, maximal at the class distribution w (Marcellin et al.)"
    )
    w: float | list = attrs.field(default=0.5, validator=_check_w)
    positive_class: object = None
    impurity = staticmethod(asymmetric_entropy)

    def _vector(self, n_classes: int, positive_index: int = 1) -> np.ndarray:
        if isinstance(self.w, numbers.Real):
            if n_classes != 2:
                raise ValueError(
                    f"criterion 'asymmetric_entropy': a single number w={self.w} is for two "
                    "classes, "
                    f"but the data has {n_classes}; give w as a list of {n_classes} values"
                )
            vector = np.full(2, 1.0 - float(self.w))
            vector[positive_index] = float(self.w)
            return vector
        vector = np.asarray(self.w, dtype=np.float64)
        if vector.shape != (n_classes,):
            raise ValueError(
                f"criterion 'asymmetric_entropy': w has {vector.size} values but the data has "
                f"{n_classes} classes; give one value per class"
            )
        return vector

    def check_data(self, data) -> None:
        positive_index = 1
        if self.positive_class is not None:
            if not isinstance(self.w, numbers.Real):
                raise ValueError(
                    "positive_class only applies when w is a single number (two classes)"
                )
            classes = list(data.classes) if data.classes is not None else []
            if self.positive_class not in classes:
                raise ValueError(
                    f"positive_class={self.positive_class!r} is not a class; classes are {classes}"
                )
            positive_index = classes.index(self.positive_class)
        vector = self._vector(data.n_statistics, positive_index)
        if not np.isclose(vector.sum(), 1.0, atol=1e-9):
            warnings.warn(
                f"asymmetric_entropy: w={vector.tolist()} sums to {vector.sum():g}, not 1, so the "
                f"criterion's maximum is not at w (it is where the terms balance)",
                UserWarning,
                stacklevel=2,
            )
        # The resolved vector depends on the class labels, which impurity_params cannot see.
        self._bound = vector

    def impurity_params(self, n_classes: int) -> np.ndarray:
        bound = getattr(self, "_bound", None)
        if bound is not None and bound.shape[0] == n_classes:
            return bound
        return self._vector(n_classes)


@hookimpl
def treekit_criteria():
    return [AsymmetricEntropy]
