"""The classic impurity measures (Cambridge handout; Breiman et al.; Quinlan).

Each impurity is a plain Python function following the criterion ABI of
:mod:`treekit_core.kernels.compiling`, compiled by the core exactly as a third party's would be.
``class_sums`` are weighted class counts; proportions are ``class_sums / total_weight``.
"""

from __future__ import annotations

import math
from typing import ClassVar

import attrs

from treekit_core.components import Criterion


def gini_impurity(class_sums, total_weight, params):
    """1 - sum_c p_c^2 (= sum over c != d of p_c p_d)."""
    if total_weight <= 0.0:
        return 0.0
    squares = 0.0
    for k in range(class_sums.shape[0]):
        p = class_sums[k] / total_weight
        squares += p * p
    return 1.0 - squares


def entropy_impurity(class_sums, total_weight, params):
    """-sum_c p_c log2 p_c, in bits (0 log 0 = 0)."""
    if total_weight <= 0.0:
        return 0.0
    h = 0.0
    for k in range(class_sums.shape[0]):
        p = class_sums[k] / total_weight
        if p > 0.0:
            h -= p * math.log2(p)
    return h


def misclassification_impurity(class_sums, total_weight, params):
    """1 - max_c p_c."""
    if total_weight <= 0.0:
        return 0.0
    largest = 0.0
    for k in range(class_sums.shape[0]):
        if class_sums[k] > largest:
            largest = class_sums[k]
    return 1.0 - largest / total_weight


def variance_impurity(class_sums, total_weight, params):
    """p_1 p_2 (two classes; the handout's variance impurity)."""
    if total_weight <= 0.0:
        return 0.0
    return (class_sums[0] / total_weight) * (class_sums[1] / total_weight)


@attrs.define(slots=False)
class Gini(Criterion):
    name: ClassVar[str] = "gini"
    description: ClassVar[str] = "Gini impurity 1 - sum p_c^2 (CART)"
    impurity = staticmethod(gini_impurity)
    concave: ClassVar[bool] = True


@attrs.define(slots=False)
class Entropy(Criterion):
    name: ClassVar[str] = "entropy"
    description: ClassVar[str] = "Shannon entropy in bits (ID3/C4.5)"
    impurity = staticmethod(entropy_impurity)
    concave: ClassVar[bool] = True


@attrs.define(slots=False)
class Misclassification(Criterion):
    name: ClassVar[str] = "misclassification"
    description: ClassVar[str] = "misclassification impurity 1 - max p_c"
    impurity = staticmethod(misclassification_impurity)
    concave: ClassVar[bool] = True


@attrs.define(slots=False)
class Variance(Criterion):
    name: ClassVar[str] = "variance"
    description: ClassVar[str] = "variance impurity p1 * p2 (two classes only)"
    impurity = staticmethod(variance_impurity)

    def check_data(self, data) -> None:
        if data.n_statistics != 2:
            raise ValueError(
                f"criterion 'variance' is defined for two classes only (p1 * p2), but the "
                f"data has {data.n_statistics} classes; use 'gini', its K-class generalisation"
            )
