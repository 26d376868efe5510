"""The Newton gain: the split criterion of second-order gradient boosting (LightGBM,
XGBoost, scikit-learn's HistGradientBoosting), and the target whose rows it reads.

A boosting round's tree is grown on each row's gradient g and hessian h of the loss at
the current raw prediction. A node holding rows of weights w, with G = -sum(w g) and
H = sum(w h), moves its rows' loss by about -G^2 / (2 (H + lambda)) when its leaf adds
the Newton step G / (H + lambda) (``l2_regularization`` lambda). A split is worth what
its children's steps gain over their parent's:

    gain = G_L^2 / (H_L + lambda) + G_R^2 / (H_R + lambda) - G^2 / (H + lambda),

each child holding at least ``min_child_hessian`` of summed hessian (LightGBM's
``min_sum_hessian_in_leaf``, HistGradientBoosting's ``min_hessian_to_split``: 1e-3).
Squared error on the negative gradient (Friedman's trees, scikit-learn's
``GradientBoosting*``) weighs every row alike; the Newton gain weighs each by its
hessian, which is what a log loss on nearly separated classes needs (a confidently
right row has a hessian near 0 and moves the step little).

A row is (-g, h, g^2 / h): the third sum Q makes a node's impurity
(Q - G^2 / (H + lambda)) / W, the second-order loss its Newton step leaves above the
rows' own steps (>= 0: Cauchy-Schwarz), per weight W; it cancels out of every split's
drop, so a histogram never sums it per bin. Drop = gain / W, as every criterion's drop
is per weight.
"""

from __future__ import annotations

import math
from typing import ClassVar

import attrs
import numpy as np

from treekit_core.builtins.criteria import check_nonnegative_parameter
from treekit_core.builtins.targets import PredictsOneNumber, check_response_bound
from treekit_core.components import Criterion, MonotoneValue, Target, TargetRows
from treekit_core.engine.validation import MAX_ABS_RESPONSE, check_y_numeric, y_columns

#: LightGBM's ``min_sum_hessian_in_leaf`` and HistGradientBoosting's
#: ``min_hessian_to_split``: a child with less summed hessian is no candidate.
MIN_CHILD_HESSIAN = 1e-3


def newton_impurity(sums, total_weight, params):
    """(Q - G^2 / (H + lambda)) / W from the sums (G, H, Q) of the rows (-g, h, g^2 / h)
    and ``params`` = (lambda, min_child_hessian); 0 without weight, Q / W where H + lambda
    is not positive."""
    if total_weight <= 0.0:
        return 0.0
    denominator = sums[1] + params[0]
    if denominator <= 0.0:
        return sums[2] / total_weight
    return (sums[2] - sums[0] * sums[0] / denominator) / total_weight


def newton_gain_score(
    left_sums, left_weight, right_sums, right_weight, parent_sums, parent_weight,
    parent_impurity, params,
):  # fmt: skip
    """The Newton gain of a cut over the parent's weight (the drop of
    :func:`newton_impurity`, whose Q terms cancel), -inf where a child holds less than
    ``params[1]`` of summed hessian (LightGBM's and HistGradientBoosting's rule) or where
    a child's H + lambda is not positive (no step: a minimum of 0 with lambda 0)."""
    l2 = params[0]
    left_hessian, right_hessian = left_sums[1], right_sums[1]
    if min(left_hessian, right_hessian) < params[1] or min(left_hessian, right_hessian) + l2 <= 0:
        return -math.inf
    gain = (
        left_sums[0] * left_sums[0] / (left_hessian + l2)
        + right_sums[0] * right_sums[0] / (right_hessian + l2)
        - parent_sums[0] * parent_sums[0] / (parent_sums[1] + l2)
    )
    return gain / parent_weight


def _steps(gradient_sums, hessian_sums):
    """Each node's (or category's) Newton step G / H, 0 where H is not positive."""
    return np.divide(
        gradient_sums, hessian_sums, out=np.zeros(len(hessian_sums)), where=hessian_sums > 0
    )


@attrs.define(slots=False)
class NewtonGain(Criterion):
    """The Newton gain of second-order gradient boosting (LightGBM, XGBoost,
    HistGradientBoosting): reads the ``newton_step`` target's rows (-g, h, g^2 / h).
    Parameters: ``l2_regularization`` (lambda, added to every side's summed hessian; the
    boosting estimators pass theirs) and ``min_child_hessian`` (each child's least summed
    hessian, default 1e-3). On rows of hessian 1 it is squared error's drop."""

    name: ClassVar[str] = "newton"
    description: ClassVar[str] = "second-order (Newton) gain G^2 / (H + lambda): boosting's trees"
    evidence: ClassVar[str] = "newton_moments"
    default_target: ClassVar[str] = "newton_step"
    impurity = staticmethod(newton_impurity)
    split_score = staticmethod(newton_gain_score)
    fixed_statistics: ClassVar[int] = 3
    l2_regularization: float = attrs.field(default=0.0)
    min_child_hessian: float = attrs.field(default=MIN_CHILD_HESSIAN)

    def __attrs_post_init__(self):
        check_nonnegative_parameter(self.l2_regularization, "l2_regularization", self.name)
        check_nonnegative_parameter(self.min_child_hessian, "min_child_hessian", self.name)

    def drop_free_statistics(self, n_statistics: int) -> tuple:
        """Q, the third sum (the score reads G and H only)."""
        return (2,) if n_statistics == 3 else ()

    def impurity_params(self, n_classes: int) -> np.ndarray:
        return np.array([float(self.l2_regularization), float(self.min_child_hessian)])


@attrs.define(slots=False)
class NewtonStep(PredictsOneNumber, Target):
    """The rows of a Newton step, (-g, h, g^2 / h) of a loss's gradient g and hessian h at
    each row's raw prediction: a node's value is its step G / H. Boosting writes them every
    round; from a ``y`` alone they are squared error's at 0, (y, 1, y^2), so a tree of
    this target is a regression tree whose value is the weighted mean: G / H with H the
    rows' weight."""

    name: ClassVar[str] = "newton_step"
    description: ClassVar[str] = "a loss's gradient and hessian: the Newton step per node"
    evidence: ClassVar[str] = "newton_moments"
    provides: ClassVar[frozenset] = frozenset({"node_risk"})

    def encode(self, y, n_samples, **given):
        if y_columns(y) > 1:
            raise ValueError(
                f"y has {y_columns(y)} outputs; target 'newton_step' takes one number a row"
            )
        response = check_y_numeric(y, n_samples)
        return TargetRows(np.column_stack([response, np.ones_like(response), response**2]), None)

    def node_values(self, statistics, weights, labeler):
        """The Newton step G / H (0 where H is 0)."""
        values = _steps(statistics[:, 0], statistics[:, 1])
        return values[:, None], np.zeros(statistics.shape[0], np.int64)

    def responses(self, rows):
        """The first column over the second: y itself for rows written from a y."""
        return np.asarray(rows[:, 0] / rows[:, 1], dtype=np.float64)

    def node_risk(self, statistics, weights, labeler):
        """The second-order loss the node's step leaves, Q - G^2 / H (>= 0; for rows from
        a y, the weighted sum of squared deviations from the mean)."""
        gradient, hessian = statistics[:, 0], statistics[:, 1]
        safe = np.where(hessian > 0, hessian, 1.0)
        leaves = np.where(hessian > 0, statistics[:, 2] - gradient * gradient / safe, 0.0)
        return np.maximum(leaves, 0.0)

    def sample_loss(self, rows, values, decisions, labeler):
        """The second-order loss of adding ``values`` to a row's raw prediction,
        h (value - (-g) / h)^2 (for rows from a y: the squared error)."""
        hessian = rows[:, 1]
        step = rows[:, 0] / np.where(hessian > 0, hessian, 1.0)
        return hessian * (values[:, 0] - step) ** 2

    def strata(self, rows, labeler):
        return np.zeros(rows.shape[0], dtype=np.int64)

    def category_order(self, sums, weights):
        """The categories' steps G / H: the best subset question is then a prefix for
        lambda 0 (the gain is a weighted variance of g / h with weights h: Fisher's
        ordering, as LightGBM orders categories)."""
        return _steps(sums[:, 0], sums[:, 1])

    def monotone_value(self, n_statistics):
        """The step G / H."""
        return MonotoneValue((0.0, 1.0, 0.0, 0.0), (0.0, 0.0, 1.0, 0.0))

    def check_tree(self, tree, labels) -> None:
        """Three statistic columns (G, H >= 0, Q >= 0) and one value, all finite."""
        width = tree.statistics.shape[1]
        if width != 3:
            raise ValueError(
                f"tree field 'statistics' has {width} columns, expected 3 (sums of -g, h "
                "and g^2 / h)"
            )
        if tree.value.shape[1] != 1:
            raise ValueError(
                f"tree field 'value' has {tree.value.shape[1]} columns, expected 1 (a step)"
            )
        if (tree.statistics[:, 1:] < 0).any():
            raise ValueError("tree field 'statistics': a sum of h or of g^2 / h is negative")
        check_response_bound(tree, tree.statistics[:, 0], MAX_ABS_RESPONSE, "-g")
        check_response_bound(tree, tree.statistics[:, 1], MAX_ABS_RESPONSE, "h")
        check_response_bound(tree, tree.statistics[:, 2], MAX_ABS_RESPONSE**2, "g^2 / h")
