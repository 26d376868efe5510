"""Treatment effects (issue 65): the target whose node value is the effect of a binary
treatment on y among the node's rows, and the two criteria that split where that effect
differs (Athey & Imbens 2016; Athey, Tibshirani & Wager 2019, grf).

A row is (d, y, d y, y^2, d y^2, w, w^2, w y): d is 1 for a treated row and 0 for a
control, w = d - e (e the row's propensity when one is given, grf's centring: 0 otherwise,
so w = d), y the outcome (centred on an estimate of E[y | x] by the causal forest). A node's
statistics are their weighted sums, so

    tau = (W S_wy - S_w S_y) / (W S_ww - S_w^2)        (the least-squares slope of y on w)

is the difference of the arms' mean outcomes where w = d, and grf's residual-on-residual
slope where the rows are centred. Averaging the means S / W over a forest's trees and
taking the same slope of the averages is grf's forest estimate (the forest-weighted moment
equation)."""

from __future__ import annotations

import math
from typing import ClassVar

import attrs
import numpy as np

from treekit_core.builtins.targets import PredictsOneNumber
from treekit_core.components import Criterion, Target, TargetRows
from treekit_core.components.criterion import improvement_decreases
from treekit_core.engine.validation import check_y_numeric, finite_numbers

#: The columns of a row (and of a node's statistics).
TREATED, OUTCOME, TREATED_OUTCOME, OUTCOME_SQUARED, TREATED_OUTCOME_SQUARED = 0, 1, 2, 3, 4
TREATMENT, TREATMENT_SQUARED, TREATMENT_OUTCOME = 5, 6, 7
N_COLUMNS = 8

#: The columns of a node's values: the means of w, y, w^2 and w y, which a forest averages
#: and whose slope is the effect (always finite: a node without both arms has no slope, and
#: its effect is NaN only where it is taken).
MEAN_W, MEAN_Y, MEAN_WW, MEAN_WY = 0, 1, 2, 3


def check_treatment(treatment, n_samples: int) -> np.ndarray:
    """A binary treatment as float 0/1 (booleans or the numbers 0 and 1, both present), or
    ValueError naming ``treatment``."""
    if treatment is None:
        raise ValueError("fit needs treatment= (one 0/1 value per row: 1 treated, 0 control)")
    values = np.asarray(treatment)
    if values.ndim == 2 and values.shape[1] == 1:
        values = values.ravel()
    if values.ndim != 1 or values.shape[0] != n_samples:
        raise ValueError(
            f"treatment has shape {values.shape}; expected one value per row ({n_samples},)"
        )
    if values.dtype.kind == "b":
        return values.astype(np.float64)
    if values.dtype.kind not in "iuf":
        raise ValueError(
            f"treatment must hold 0 (control) and 1 (treated); got dtype {values.dtype}"
        )
    values = values.astype(np.float64)
    levels = np.unique(values[~np.isnan(values)])
    if np.isnan(values).any() or not set(levels.tolist()) <= {0.0, 1.0}:
        shown = ", ".join(f"{v:g}" for v in levels[:5])
        raise ValueError(
            f"treatment must hold 0 (control) and 1 (treated) only, without missing values; "
            f"it holds {shown}{', ...' if levels.size > 5 else ''} (several arms: one model "
            "per arm against the control)"
        )
    if levels.size < 2:
        raise ValueError(
            f"treatment holds only {'treated' if levels[0] == 1 else 'control'} rows; an "
            "effect needs both arms"
        )
    return values


def effect_of(statistics: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """tau of every node (module docstring); NaN where the node's w does not vary (one arm
    only: no effect is defined)."""
    w = np.asarray(weights, dtype=np.float64)
    s = statistics
    denominator = w * s[:, TREATMENT_SQUARED] - s[:, TREATMENT] ** 2
    numerator = w * s[:, TREATMENT_OUTCOME] - s[:, TREATMENT] * s[:, OUTCOME]
    defined = denominator > 1e-12 * np.maximum(w * w, 1e-300)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(defined, numerator / np.where(defined, denominator, 1.0), np.nan)


def arm_standard_errors(statistics: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The standard error of the difference of the arms' mean outcomes,
    sqrt(s_t^2 / n_t + s_c^2 / n_c) with each arm's unbiased variance (NaN where an arm has
    less than two rows' weight): an honest leaf's (Athey & Imbens 2016, section 4)."""
    s = statistics
    n_t = s[:, TREATED]
    n_c = np.asarray(weights, dtype=np.float64) - n_t
    sum_t, sum_c = s[:, TREATED_OUTCOME], s[:, OUTCOME] - s[:, TREATED_OUTCOME]
    squares_t = s[:, TREATED_OUTCOME_SQUARED]
    squares_c = s[:, OUTCOME_SQUARED] - squares_t
    with np.errstate(divide="ignore", invalid="ignore"):
        var_t = np.maximum(squares_t - sum_t * sum_t / n_t, 0.0) / (n_t - 1.0)
        var_c = np.maximum(squares_c - sum_c * sum_c / n_c, 0.0) / (n_c - 1.0)
        se = np.sqrt(var_t / n_t + var_c / n_c)
    return np.where((n_t > 1.0) & (n_c > 1.0), se, np.nan)


@attrs.define(slots=False)
class TreatmentEffect(PredictsOneNumber, Target):
    """The effect of a binary treatment on y (module docstring): ``fit(X, y,
    treatment=d)`` (and ``propensity=e``, the rows' treatment probabilities, to centre the
    treatment as grf does). A node's values are the means of w, y, w^2 and w y, from
    which ``predict`` takes the slope (of one leaf, or of a forest's averaged leaves)."""

    name: ClassVar[str] = "treatment_effect"
    description: ClassVar[str] = "the effect of a binary treatment on y per node (causal trees)"
    evidence: ClassVar[str] = "treatment_moments"
    fit_arguments: ClassVar[frozenset] = frozenset({"y", "treatment", "propensity"})
    provides: ClassVar[frozenset] = frozenset()

    def encode(self, y, n_samples, **given):
        outcome = check_y_numeric(y, n_samples)
        treated = check_treatment(given.get("treatment"), n_samples)
        propensity = given.get("propensity")
        if propensity is None:
            centred = treated
        else:
            propensity = finite_numbers(np.asarray(propensity, dtype=np.float64), "propensity")
            if propensity.shape != (n_samples,) or (propensity < 0).any() or (propensity > 1).any():
                raise ValueError(
                    f"propensity must be {n_samples} probabilities in [0, 1], one per row"
                )
            centred = treated - propensity
        rows = np.empty((n_samples, N_COLUMNS))
        rows[:, TREATED] = treated
        rows[:, OUTCOME] = outcome
        rows[:, TREATED_OUTCOME] = treated * outcome
        rows[:, OUTCOME_SQUARED] = outcome * outcome
        rows[:, TREATED_OUTCOME_SQUARED] = treated * outcome * outcome
        rows[:, TREATMENT] = centred
        rows[:, TREATMENT_SQUARED] = centred * centred
        rows[:, TREATMENT_OUTCOME] = centred * outcome
        return TargetRows(rows, None)

    def node_values(self, statistics, weights, labeler):
        weights = np.asarray(weights, dtype=np.float64)
        safe = np.where(weights > 0, weights, 1.0)[:, None]
        means = statistics[:, [TREATMENT, OUTCOME, TREATMENT_SQUARED, TREATMENT_OUTCOME]] / safe
        return means, np.zeros(statistics.shape[0], dtype=np.int64)

    def predictions(self, values, decisions, labels):
        """The slope of the (averaged) means: one leaf's effect, or grf's forest estimate."""
        m_w, m_y, m_ww, m_wy = (values[:, k] for k in (MEAN_W, MEAN_Y, MEAN_WW, MEAN_WY))
        denominator = m_ww - m_w * m_w
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(denominator > 0, (m_wy - m_w * m_y) / denominator, np.nan)

    def defines_value(self, statistics, weights) -> np.ndarray:
        """Whether each node's rows define an effect and its standard error: two rows'
        weight of each arm in them, and w varies (honest pruning prunes leaves whose
        estimation rows do not)."""
        treated = statistics[:, TREATED]
        control = np.asarray(weights, dtype=np.float64) - treated
        both = (treated >= 2.0 - 1e-9) & (control >= 2.0 - 1e-9)
        return both & ~np.isnan(effect_of(statistics, weights))

    def strata(self, rows, labeler):
        """The arm: bootstrap draws, folds and honest splits keep the arms' proportions."""
        return rows[:, TREATED].astype(np.int64)

    def sample_loss(self, rows, values, decisions, labeler):
        """The squared residual of y from the node's local model y = mu + tau w (tau its
        effect, mu = mean y - tau mean w; tau 0 where the node holds one arm): the effect
        itself is never observed row by row."""
        m_w, m_y, m_ww, m_wy = (values[:, k] for k in (MEAN_W, MEAN_Y, MEAN_WW, MEAN_WY))
        spread = m_ww - m_w * m_w
        with np.errstate(divide="ignore", invalid="ignore"):
            tau = np.where(spread > 1e-12, (m_wy - m_w * m_y) / spread, 0.0)
        residual = rows[:, OUTCOME] - (m_y - tau * m_w) - tau * rows[:, TREATMENT]
        return residual * residual

    def category_order(self, sums, weights):
        return None  # no order of categories is known to make the best subset a prefix

    def check_tree(self, tree, labels) -> None:
        """Eight statistic columns (the arms' weights and outcome sums, w's moments) and
        four values per node."""
        if tree.statistics.shape[1] != N_COLUMNS:
            raise ValueError(
                f"tree field 'statistics' has {tree.statistics.shape[1]} columns, expected "
                f"{N_COLUMNS} (d, y, d y, y^2, d y^2, w, w^2, w y)"
            )
        treated = tree.statistics[:, TREATED]
        if (treated < 0).any() or (treated > tree.weight * (1 + 1e-9) + 1e-9).any():
            raise ValueError(
                "tree field 'statistics': a node's treated weight is negative or exceeds its weight"
            )
        if tree.value.shape[1] != 4:
            raise ValueError(
                f"tree field 'value' has {tree.value.shape[1]} columns, expected 4 (the means "
                "of w, y, w^2, w y)"
            )


def outcome_variance_impurity(sums, total_weight, params):
    """The weighted variance of y (what stops a node whose outcomes are all equal: no effect
    can differ within it); the split is scored by the criterion's split score."""
    if total_weight <= 0.0:
        return 0.0
    mean = sums[OUTCOME] / total_weight
    return max(sums[OUTCOME_SQUARED] / total_weight - mean * mean, 0.0)


# The split scores below are compiled into the split-search kernels (numba, no Python calls
# inside), so each spells out its arithmetic rather than calling helpers.


def causal_tree_score(
    left_sums,
    left_weight,
    right_sums,
    right_weight,
    parent_sums,
    parent_weight,
    parent_impurity,
    params,
):
    """The fall in Athey & Imbens' estimated EMSE of the effect (their honest criterion):
    G(L) + G(R) - G(P), G(t) = W_t (tau_t^2 - penalty (s_t^2 / n_t + s_c^2 / n_c)) with the
    arms' variances (1 / n divisor, as theirs) and penalty = 1 + N_tr / N_est, over the
    parent's weight; 0 (no use) where a child holds less than ``min_arm_weight`` of either
    arm. ``params``: (min_arm_weight, penalty)."""
    least = max(params[0], 1.0)
    penalty = params[1]
    total = 0.0
    for side in range(3):
        if side == 0:
            sums, weight, sign = left_sums, left_weight, 1.0
        elif side == 1:
            sums, weight, sign = right_sums, right_weight, 1.0
        else:
            sums, weight, sign = parent_sums, parent_weight, -1.0
        n_t = sums[TREATED]
        n_c = weight - n_t
        if n_t < least or n_c < least:
            return 0.0
        mean_t = sums[TREATED_OUTCOME] / n_t
        mean_c = (sums[OUTCOME] - sums[TREATED_OUTCOME]) / n_c
        var_t = max(sums[TREATED_OUTCOME_SQUARED] / n_t - mean_t * mean_t, 0.0)
        squares_c = sums[OUTCOME_SQUARED] - sums[TREATED_OUTCOME_SQUARED]
        var_c = max(squares_c / n_c - mean_c * mean_c, 0.0)
        tau = mean_t - mean_c
        total += sign * weight * (tau * tau - penalty * (var_t / n_t + var_c / n_c))
    return max(total / parent_weight, 0.0)


def grf_causal_score(
    left_sums,
    left_weight,
    right_sums,
    right_weight,
    parent_sums,
    parent_weight,
    parent_impurity,
    params,
):
    """grf's gradient-based split of a causal forest: the rows relabelled by the parent's
    pseudo-outcomes rho_i = (w_i - w_P)(y_i - y_P - tau_P (w_i - w_P)) (w_P, y_P the
    parent's means, tau_P its effect), the split maximising (sum_L rho)^2 / W_L +
    (sum_R rho)^2 / W_R, over the parent's weight (sum_P rho = 0, so sum_R rho =
    -sum_L rho); sum_L rho comes from the child's sums of w, y, w^2, w y. 0 (no use) where
    a child holds less than ``min_arm_weight`` of either arm or less than ``alpha`` of the
    parent's treatment variation sum (w - w_P)^2 (grf's ``alpha``). ``params``:
    (min_arm_weight, alpha)."""
    least = max(params[0], 1.0)
    left_treated, right_treated = left_sums[TREATED], right_sums[TREATED]
    if (
        left_treated < least
        or left_weight - left_treated < least
        or right_treated < least
        or right_weight - right_treated < least
    ):
        return 0.0
    # every cut of a node calls this: divisions are kept out of the checks, and
    # (1 / W_L + 1 / W_R) / W_P is 1 / (W_L W_R)
    spread = parent_sums[TREATMENT_SQUARED] - parent_sums[TREATMENT] ** 2 / parent_weight
    if spread <= 0.0:
        return 0.0
    least_spread = params[1] * spread
    left_spread = left_sums[TREATMENT_SQUARED] * left_weight - left_sums[TREATMENT] ** 2
    right_spread = right_sums[TREATMENT_SQUARED] * right_weight - right_sums[TREATMENT] ** 2
    if left_spread < least_spread * left_weight or right_spread < least_spread * right_weight:
        return 0.0
    if left_spread <= 0.0 or right_spread <= 0.0:
        return 0.0
    w = parent_sums[TREATMENT] / parent_weight
    y = parent_sums[OUTCOME] / parent_weight
    tau = (parent_sums[TREATMENT_OUTCOME] - parent_sums[TREATMENT] * y) / spread
    rho_left = (
        left_sums[TREATMENT_OUTCOME]
        - y * left_sums[TREATMENT]
        - w * left_sums[OUTCOME]
        + w * y * left_weight
        - tau
        * (left_sums[TREATMENT_SQUARED] - 2.0 * w * left_sums[TREATMENT] + w * w * left_weight)
    )
    return rho_left * rho_left / (left_weight * right_weight)


@attrs.define(slots=False)
class EffectCriterion(Criterion):
    """What the treatment-effect criteria share: they read the ``treatment_effect``
    target's rows, nodes report the variance of their outcomes (what stops a node whose
    outcomes are all equal), and a split is credited its weight times its score (the
    variance of outcomes says nothing of the effect's heterogeneity). Not registered: its
    subclasses say how a split is scored."""

    evidence: ClassVar[str] = "treatment_moments"
    default_target: ClassVar[str] = "treatment_effect"
    impurity = staticmethod(outcome_variance_impurity)

    def node_decreases(self, tree) -> np.ndarray:
        return improvement_decreases(tree)


@attrs.define(slots=False)
class CausalTreeCriterion(EffectCriterion):
    """Athey & Imbens' honest causal-tree criterion (``causal_tree_score``); nodes report
    the variance of their outcomes. Parameters: ``min_arm_weight`` (each child's least
    weight of treated and of control rows, default 2, as the causalTree package's
    ``minsize`` counts each arm) and ``variance_penalty`` (1 + N_tr / N_est: 2 for an
    honest tree's default half-and-half split)."""

    name: ClassVar[str] = "causal_tree"
    description: ClassVar[str] = "Athey & Imbens' honest causal-tree criterion (treatment effects)"
    split_score = staticmethod(causal_tree_score)
    min_arm_weight: float = attrs.field(default=2.0, converter=float)
    variance_penalty: float = attrs.field(default=2.0, converter=float)

    def __attrs_post_init__(self):
        _check_nonnegative(self.min_arm_weight, "min_arm_weight", self.name)
        _check_nonnegative(self.variance_penalty, "variance_penalty", self.name)

    def impurity_params(self, n_classes: int) -> np.ndarray:
        return np.array([self.min_arm_weight, self.variance_penalty])


@attrs.define(slots=False)
class GrfCausalCriterion(EffectCriterion):
    """grf's causal-forest split (``grf_causal_score``); nodes report the variance of their
    outcomes. Parameters: ``min_arm_weight`` (each child's least weight of each arm,
    grf's ``min.node.size`` on each side of the treatment: default 5) and ``alpha`` (each
    child's least share of the parent's treatment variation: grf's default 0.05)."""

    name: ClassVar[str] = "grf_causal"
    description: ClassVar[str] = "grf's gradient-based causal-forest split (treatment effects)"
    split_score = staticmethod(grf_causal_score)
    min_arm_weight: float = attrs.field(default=5.0, converter=float)
    alpha: float = attrs.field(default=0.05, converter=float)

    def __attrs_post_init__(self):
        _check_nonnegative(self.min_arm_weight, "min_arm_weight", self.name)
        if not 0.0 <= self.alpha < 0.5:
            raise ValueError(f"criterion 'grf_causal': alpha must be in [0, 0.5), got {self.alpha}")

    def impurity_params(self, n_classes: int) -> np.ndarray:
        return np.array([self.min_arm_weight, self.alpha])


def _check_nonnegative(value: float, name: str, criterion: str) -> None:
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(
            f"criterion {criterion!r}: {name} must be a finite number >= 0, got {value}"
        )
