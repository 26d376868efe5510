"""Criteria that score a split from its two children instead of as a drop in impurity
(``Criterion.split_score``): CART's twoing rule and Hellinger distance.

* Twoing (L. Breiman, J. Friedman, R. Olshen and C. Stone, *Classification and Regression
  Trees*, 1984, section 4.3): the split that best separates the classes into two
  superclasses, scored ``(p_L p_R / 4) (sum_j |p(j|L) - p(j|R)|)^2`` with
  ``p_L = w_L / w_t``. For two classes it is half of Gini's drop, so it grows Gini's tree.
* Hellinger distance (D. A. Cieslak and N. V. Chawla, "Learning decision trees for
  unbalanced data", ECML PKDD 2008; HDDT): the distance between the two classes'
  distributions over the children, ``sqrt(sum_j (sqrt(W_j0 / W_0) - sqrt(W_j1 / W_1))^2)``
  with ``W_c`` the node's weight of class c and ``W_jc`` child j's. It does not depend on
  the class priors (reweighting a class changes no split). Two classes only.

Both report Gini impurity at every node (what stops a pure node and what reports show);
the split's score is its ``improvement``. The scores are compiled into split-search
kernels specialised to the criterion, as the core does for every criterion.
"""

from __future__ import annotations

import math
from typing import ClassVar

import attrs

from treekit_core import Criterion, hookimpl
from treekit_core.builtins import Gini

#: The treekit plugin API this plugin is written for (see treekit_core's CHANGELOG.md).
TREEKIT_PLUGIN_API = 4


def twoing_score(
    left_sums,
    left_weight,
    right_sums,
    right_weight,
    parent_sums,
    parent_weight,
    parent_impurity,
    params,
):
    """(p_L p_R / 4) * (sum_j |p(j|L) - p(j|R)|)^2, p_L = w_L / w_t."""
    difference = 0.0
    for k in range(parent_sums.shape[0]):
        difference += abs(left_sums[k] / left_weight - right_sums[k] / right_weight)
    p_left = left_weight / parent_weight
    return p_left * (1.0 - p_left) / 4.0 * difference * difference


def hellinger_score(
    left_sums,
    left_weight,
    right_sums,
    right_weight,
    parent_sums,
    parent_weight,
    parent_impurity,
    params,
):
    """sqrt(sum over the children j of (sqrt(W_j0 / W_0) - sqrt(W_j1 / W_1))^2); 0 when
    the node lacks one of the two classes."""
    if parent_sums[0] <= 0.0 or parent_sums[1] <= 0.0:
        return 0.0
    left = math.sqrt(left_sums[0] / parent_sums[0]) - math.sqrt(left_sums[1] / parent_sums[1])
    right = math.sqrt(right_sums[0] / parent_sums[0]) - math.sqrt(right_sums[1] / parent_sums[1])
    return math.sqrt(left * left + right * right)


@attrs.define(slots=False)
class Twoing(Criterion):
    """CART's twoing rule; nodes report Gini impurity. No parameters."""

    name: ClassVar[str] = "twoing"
    description: ClassVar[str] = "CART's twoing rule (p_L p_R / 4)(sum |p(j|L) - p(j|R)|)^2"
    impurity = Gini.impurity
    split_score = staticmethod(twoing_score)
    symmetric: ClassVar[bool] = True


@attrs.define(slots=False)
class Hellinger(Criterion):
    """Hellinger distance decision trees (HDDT), two classes; nodes report Gini impurity.
    No parameters."""

    name: ClassVar[str] = "hellinger"
    description: ClassVar[str] = "Hellinger distance between the classes over the children (HDDT)"
    impurity = Gini.impurity
    split_score = staticmethod(hellinger_score)
    symmetric: ClassVar[bool] = True

    def check_data(self, data) -> None:
        self.impurity_params(data.n_statistics)

    def impurity_params(self, n_classes: int):
        if n_classes != 2:
            raise ValueError(
                f"criterion 'hellinger' is defined for two classes only, but the data has "
                f"{n_classes} classes; use 'twoing' or 'gini' for more"
            )
        return super().impurity_params(n_classes)


@hookimpl
def treekit_criteria():
    return [Twoing, Hellinger]
