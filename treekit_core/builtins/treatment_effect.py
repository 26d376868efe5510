"""Treatment effects (issue 65): the target whose node value is the effect of a treatment
of one or several arms on y among the node's rows, and the two criteria that split where
that effect differs (Athey & Imbens 2016; Athey, Tibshirani & Wager 2019, grf).

The arms are numbered 0 (control), 1, ..., K - 1 (a binary treatment: 0 and 1); m = K - 1
effects, each of an arm against the control. A row is

    (d_1..d_m, y, d_1 y..d_m y, y^2, d_1 y^2..d_m y^2, w_1..w_m, w_k w_l (m x m), w_1 y..w_m y)

d_k is 1 for a row of arm k and 0 otherwise, w_k = d_k - e_k (e_k the row's probability of
arm k when propensities are given, grf's centring: 0 otherwise, so w = d), y the outcome
(centred on an estimate of E[y | x] by the causal forest): m^2 + 5 m + 2 columns, 8 for a
binary treatment (d, y, d y, y^2, d y^2, w, w^2, w y). A node's statistics are their
weighted sums, so the effects are the least-squares slopes of y on w,

    tau = (W S_ww - S_w S_w')^-1 (W S_wy - S_w S_y),

which are the differences of the arms' mean outcomes from the control's where w = d, and
grf's residual-on-residual slopes where the rows are centred. Averaging the means S / W
over a forest's trees and taking the same slopes of the averages is grf's forest estimate
(the forest-weighted moment equation)."""

from __future__ import annotations

import math
from typing import ClassVar

import attrs
import numpy as np

from treekit_core.builtins.criteria import check_nonnegative_parameter
from treekit_core.builtins.targets import PredictsOneNumber
from treekit_core.components import Criterion, Target, TargetRows
from treekit_core.components.criterion import improvement_decreases
from treekit_core.engine.validation import check_y_numeric, finite_numbers

#: The columns of a binary treatment's row (and of a node's statistics): m = 1 in the
#: layout of :class:`EffectColumns`.
TREATED, OUTCOME, TREATED_OUTCOME, OUTCOME_SQUARED, TREATED_OUTCOME_SQUARED = 0, 1, 2, 3, 4
TREATMENT, TREATMENT_SQUARED, TREATMENT_OUTCOME = 5, 6, 7
N_COLUMNS = 8

#: The columns of a binary treatment's node values: the means of w, y, w^2 and w y, which a
#: forest averages and whose slope is the effect (always finite: a node without both arms
#: has no slope, and its effect is NaN only where it is taken). Several arms: the means of
#: w (m), y, w w' (m x m) and w y (m), (m + 1)^2 columns.
MEAN_W, MEAN_Y, MEAN_WW, MEAN_WY = 0, 1, 2, 3

#: The most arms a treatment may have: a node's statistics grow with the square of the
#: arms (a continuous treatment, whose every value would be an arm, is refused by it).
MAX_ARMS = 16


@attrs.frozen
class EffectColumns:
    """Where each sum lies among the statistics of a treatment of ``effects`` + 1 arms
    (the module docstring's row), and each mean among the node values."""

    effects: int

    @classmethod
    def of_statistics(cls, width: int) -> "EffectColumns":
        """The layout whose statistics are ``width`` columns wide, or ValueError."""
        m = (math.isqrt(17 + 4 * int(width)) - 5) // 2
        if m < 1 or m * m + 5 * m + 2 != width:
            raise ValueError(
                f"tree field 'statistics' has {width} columns, expected 8, 16, 26, ... (m^2 + "
                "5 m + 2 for a treatment of m + 1 arms: 8 for a binary treatment)"
            )
        return cls(m)

    @classmethod
    def of_values(cls, width: int) -> "EffectColumns":
        """The layout whose node values are ``width`` columns wide ((m + 1)^2)."""
        root = math.isqrt(int(width))
        if root < 2 or root * root != width:
            raise ValueError(
                f"tree field 'value' has {width} columns, expected 4, 9, 16, ... (K^2 for a "
                "treatment of K arms: the means of w, y, w w' and w y)"
            )
        return cls(root - 1)

    @property
    def width(self) -> int:
        return self.effects * self.effects + 5 * self.effects + 2

    @property
    def treated(self) -> slice:
        return slice(0, self.effects)

    @property
    def outcome(self) -> int:
        return self.effects

    @property
    def treated_outcome(self) -> slice:
        return slice(self.effects + 1, 2 * self.effects + 1)

    @property
    def outcome_squared(self) -> int:
        return 2 * self.effects + 1

    @property
    def treated_outcome_squared(self) -> slice:
        return slice(2 * self.effects + 2, 3 * self.effects + 2)

    @property
    def treatment(self) -> slice:
        return slice(3 * self.effects + 2, 4 * self.effects + 2)

    @property
    def treatment_products(self) -> slice:
        m = self.effects
        return slice(4 * m + 2, 4 * m + 2 + m * m)

    @property
    def treatment_outcome(self) -> slice:
        m = self.effects
        return slice(4 * m + 2 + m * m, 5 * m + 2 + m * m)

    def value_columns(self) -> np.ndarray:
        """The statistics' columns whose means are the node values, in their order."""
        columns = np.arange(self.width)
        return np.concatenate(
            [
                columns[self.treatment],
                [self.outcome],
                columns[self.treatment_products],
                columns[self.treatment_outcome],
            ]
        )


def check_treatment(treatment, n_samples: int) -> np.ndarray:
    """Each row's arm as float 0 (control), 1, ..., K - 1 (booleans or whole numbers, every
    arm present, 2 <= K <= :data:`MAX_ARMS`), or ValueError naming ``treatment``."""
    if treatment is None:
        raise ValueError(
            "fit needs treatment= (one arm per row: 0 control, 1 treated; several arms 0, 1, "
            "..., K - 1)"
        )
    values = np.asarray(treatment)
    if values.ndim == 2 and values.shape[1] == 1:
        values = values.ravel()
    if values.ndim != 1 or values.shape[0] != n_samples:
        raise ValueError(
            f"treatment has shape {values.shape}; expected one value per row ({n_samples},)"
        )
    if values.dtype.kind == "b":
        values = values.astype(np.float64)
    if values.dtype.kind not in "iuf":
        raise ValueError(
            f"treatment must hold the arms' numbers 0 (control), 1, ..., K - 1; got dtype "
            f"{values.dtype} (code named arms as numbers, the control as 0)"
        )
    values = values.astype(np.float64)
    levels = np.unique(values[~np.isnan(values)])
    if levels.size == 1 and not np.isnan(values).any():
        raise ValueError(
            f"treatment holds only {'control' if levels[0] == 0 else 'treated'} rows; an "
            "effect needs a control and a treated arm"
        )
    whole = np.array_equal(levels, np.arange(levels.size, dtype=np.float64))
    if np.isnan(values).any() or not whole or levels.size > MAX_ARMS:
        shown = ", ".join(f"{v:g}" for v in levels[:5])
        raise ValueError(
            f"treatment must number the arms 0 (control), 1, ..., K - 1 (every arm present, "
            f"at most {MAX_ARMS}), without missing values; it holds "
            f"{shown}{', ...' if levels.size > 5 else ''}"
        )
    return values


def _slopes(products: np.ndarray, crosses: np.ndarray) -> np.ndarray:
    """Per node, the solution tau of ``products`` tau = ``crosses`` (n x m x m, n x m): NaN
    where the products' matrix is singular (a node without every arm, or an arm whose w
    does not vary apart from another's)."""
    n, m = crosses.shape
    tau = np.full((n, m), np.nan)
    diagonal = np.einsum("ikk->ik", products)
    scale = np.prod(np.maximum(diagonal, 0.0), axis=1)
    with np.errstate(invalid="ignore", over="ignore"):
        determinant = np.linalg.det(products) if n else np.zeros(0)
    defined = (diagonal > 0).all(axis=1) & (determinant > 1e-12 * scale)
    if defined.any():
        tau[defined] = np.linalg.solve(products[defined], crosses[defined][:, :, None])[:, :, 0]
    return tau


def effect_of(statistics: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """tau of every node (module docstring): n values for a binary treatment, n x m for
    several arms; NaN where a node's w does not vary (an arm missing: no effect is
    defined)."""
    w = np.asarray(weights, dtype=np.float64)
    s = statistics
    layout = EffectColumns.of_statistics(s.shape[1])
    if layout.effects == 1:
        denominator = w * s[:, TREATMENT_SQUARED] - s[:, TREATMENT] ** 2
        numerator = w * s[:, TREATMENT_OUTCOME] - s[:, TREATMENT] * s[:, OUTCOME]
        defined = denominator > 1e-12 * np.maximum(w * w, 1e-300)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(defined, numerator / np.where(defined, denominator, 1.0), np.nan)
    m = layout.effects
    sums_w = s[:, layout.treatment]
    products = w[:, None, None] * s[:, layout.treatment_products].reshape(-1, m, m)
    products -= sums_w[:, :, None] * sums_w[:, None, :]
    crosses = w[:, None] * s[:, layout.treatment_outcome] - sums_w * s[:, [layout.outcome]]
    return _slopes(products, crosses)


def arm_standard_errors(statistics: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The standard error of the difference of each arm's mean outcome from the
    control's, sqrt(s_k^2 / n_k + s_c^2 / n_c) with each arm's unbiased variance (NaN where
    an arm has less than two rows' weight): an honest leaf's (Athey & Imbens 2016, section
    4). n values for a binary treatment, n x m for several arms."""
    s = statistics
    layout = EffectColumns.of_statistics(s.shape[1])
    n_t = s[:, layout.treated]
    n_c = np.asarray(weights, dtype=np.float64) - n_t.sum(axis=1)
    sum_t = s[:, layout.treated_outcome]
    sum_c = s[:, layout.outcome] - sum_t.sum(axis=1)
    squares_t = s[:, layout.treated_outcome_squared]
    squares_c = s[:, layout.outcome_squared] - squares_t.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        var_t = np.maximum(squares_t - sum_t * sum_t / n_t, 0.0) / (n_t - 1.0)
        var_c = np.maximum(squares_c - sum_c * sum_c / n_c, 0.0) / (n_c - 1.0)
        se = np.sqrt(var_t / n_t + (var_c / n_c)[:, None])
    se = np.where((n_t > 1.0) & (n_c > 1.0)[:, None], se, np.nan)
    return se[:, 0] if layout.effects == 1 else se


def arm_weights(statistics: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Each node's weight of every arm, the control first (n x K)."""
    layout = EffectColumns.of_statistics(statistics.shape[1])
    treated = statistics[:, layout.treated]
    control = np.asarray(weights, dtype=np.float64) - treated.sum(axis=1)
    return np.column_stack([control, treated])


@attrs.define(slots=False)
class TreatmentEffect(PredictsOneNumber, Target):
    """The effect of a treatment on y (module docstring): ``fit(X, y, treatment=d)`` with
    the arms numbered 0 (control), 1, ..., K - 1, and ``propensity=e`` (each row's
    probability of treatment: n values for a binary treatment, n x K of every arm for
    several) to centre the treatment as grf does. A node's values are the means of w, y,
    w w' and w y, from which ``predict`` takes the slopes (of one leaf, or of a forest's
    averaged leaves): n effects for a binary treatment, n x (K - 1) for several arms, each
    arm's against the control."""

    name: ClassVar[str] = "treatment_effect"
    description: ClassVar[str] = "the effect of a treatment's arms on y per node (causal trees)"
    evidence: ClassVar[str] = "treatment_moments"
    fit_arguments: ClassVar[frozenset] = frozenset({"y", "treatment", "propensity"})
    provides: ClassVar[frozenset] = frozenset()

    def encode(self, y, n_samples, **given):
        outcome = check_y_numeric(y, n_samples)
        arm = check_treatment(given.get("treatment"), n_samples)
        layout = EffectColumns(int(arm.max()))
        m = layout.effects
        treated = (arm[:, None] == np.arange(1, m + 1)).astype(np.float64)
        centred = treated - centring_propensities(given.get("propensity"), n_samples, m)
        rows = np.empty((n_samples, layout.width))
        rows[:, layout.treated] = treated
        rows[:, layout.outcome] = outcome
        rows[:, layout.treated_outcome] = treated * outcome[:, None]
        rows[:, layout.outcome_squared] = outcome * outcome
        rows[:, layout.treated_outcome_squared] = treated * (outcome * outcome)[:, None]
        rows[:, layout.treatment] = centred
        products = centred[:, :, None] * centred[:, None, :]
        rows[:, layout.treatment_products] = products.reshape(n_samples, m * m)
        rows[:, layout.treatment_outcome] = centred * outcome[:, None]
        return TargetRows(rows, None)

    def node_values(self, statistics, weights, labeler):
        weights = np.asarray(weights, dtype=np.float64)
        safe = np.where(weights > 0, weights, 1.0)[:, None]
        columns = EffectColumns.of_statistics(statistics.shape[1]).value_columns()
        return statistics[:, columns] / safe, np.zeros(statistics.shape[0], dtype=np.int64)

    def predictions(self, values, decisions, labels):
        """The slopes of the (averaged) means: one leaf's effects, or grf's forest estimate
        (n values for a binary treatment, n x (K - 1) for several arms)."""
        layout = EffectColumns.of_values(values.shape[1])
        if layout.effects == 1:
            m_w, m_y, m_ww, m_wy = (values[:, k] for k in (MEAN_W, MEAN_Y, MEAN_WW, MEAN_WY))
            denominator = m_ww - m_w * m_w
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(denominator > 0, (m_wy - m_w * m_y) / denominator, np.nan)
        m_w, m_y, m_ww, m_wy = mean_moments(values, layout.effects)
        products = m_ww - m_w[:, :, None] * m_w[:, None, :]
        return _slopes(products, m_wy - m_w * m_y[:, None])

    def defines_value(self, statistics, weights) -> np.ndarray:
        """Whether each node's rows define its effects and their standard errors: two rows'
        weight of every arm in them, and w varies (honest pruning prunes leaves whose
        estimation rows do not)."""
        every_arm = (arm_weights(statistics, weights) >= 2.0 - 1e-9).all(axis=1)
        effect = effect_of(statistics, weights)
        defined = ~np.isnan(effect) if effect.ndim == 1 else ~np.isnan(effect).any(axis=1)
        return every_arm & defined

    def strata(self, rows, labeler):
        """The arm: bootstrap draws, folds and honest splits keep the arms' proportions."""
        layout = EffectColumns.of_statistics(rows.shape[1])
        arms = np.arange(1, layout.effects + 1, dtype=np.float64)
        return np.rint(rows[:, layout.treated] @ arms).astype(np.int64)

    def sample_loss(self, rows, values, decisions, labeler):
        """The squared residual of y from the node's local model y = mu + tau' w (tau its
        effects, mu = mean y - tau' mean w; tau 0 where the node lacks an arm): the effect
        itself is never observed row by row."""
        layout = EffectColumns.of_values(values.shape[1])
        if layout.effects == 1:
            m_w, m_y, m_ww, m_wy = (values[:, k] for k in (MEAN_W, MEAN_Y, MEAN_WW, MEAN_WY))
            spread = m_ww - m_w * m_w
            with np.errstate(divide="ignore", invalid="ignore"):
                tau = np.where(spread > 1e-12, (m_wy - m_w * m_y) / spread, 0.0)
            residual = rows[:, OUTCOME] - (m_y - tau * m_w) - tau * rows[:, TREATMENT]
            return residual * residual
        m_w, m_y, _, _ = mean_moments(values, layout.effects)
        tau = np.nan_to_num(self.predictions(values, decisions, labels=None), nan=0.0)
        row_layout = EffectColumns(layout.effects)
        w = rows[:, row_layout.treatment]
        residual = rows[:, row_layout.outcome] - (m_y - (tau * m_w).sum(axis=1))
        residual -= (tau * w).sum(axis=1)
        return residual * residual

    def category_order(self, sums, weights):
        return None  # no order of categories is known to make the best subset a prefix

    def check_tree(self, tree, labels) -> None:
        """m^2 + 5 m + 2 statistic columns (the arms' weights and outcome sums, w's
        moments: 8 for a binary treatment) and (m + 1)^2 values per node (4)."""
        layout = EffectColumns.of_statistics(tree.statistics.shape[1])
        arms = arm_weights(tree.statistics, tree.weight)
        if (arms[:, 1:] < 0).any() or (arms[:, 0] < -1e-9 * (1.0 + tree.weight)).any():
            raise ValueError(
                "tree field 'statistics': a node's weight of an arm is negative or its arms "
                "weigh more than the node"
            )
        if tree.value.shape[1] != (layout.effects + 1) ** 2:
            raise ValueError(
                f"tree field 'value' has {tree.value.shape[1]} columns, expected "
                f"{(layout.effects + 1) ** 2} (the means of w, y, w w' and w y)"
            )


def mean_moments(values: np.ndarray, m: int) -> tuple:
    """(mean w (n x m), mean y (n), mean w w' (n x m x m), mean w y (n x m)) of node values
    (or of their forest averages) of a treatment with ``m`` effects."""
    m_w, m_y = values[:, :m], values[:, m]
    m_ww = values[:, m + 1 : m + 1 + m * m].reshape(-1, m, m)
    return m_w, m_y, m_ww, values[:, m + 1 + m * m :]


def centring_propensities(propensity, n_samples: int, m: int) -> np.ndarray:
    """What w centres d on (n x m): 0 where no propensity is given; else each row's
    probability of arms 1..m (:func:`arm_probabilities`)."""
    if propensity is None:
        return np.zeros((n_samples, m))
    return arm_probabilities(propensity, n_samples, m + 1)[:, 1:]


def arm_probabilities(propensity, n_samples: int, n_arms: int) -> np.ndarray:
    """Each row's probability of every arm (n x K, the control first) from
    ``propensity``: n x K probabilities, each row summing to 1, or, for a binary
    treatment, the treated arm's n probabilities; ValueError naming ``propensity``."""
    given = finite_numbers(np.asarray(propensity, dtype=np.float64), "propensity")
    if n_arms == 2 and given.shape == (n_samples,):
        if (given < 0).any() or (given > 1).any():
            raise ValueError(f"propensity must be {n_samples} probabilities in [0, 1], one per row")
        return np.column_stack([1.0 - given, given])
    if given.shape != (n_samples, n_arms):
        binary = f"({n_samples},) or " if n_arms == 2 else ""
        raise ValueError(
            f"propensity has shape {given.shape}; expected {binary}({n_samples}, {n_arms}): "
            "each row's probability of every arm, the control first"
        )
    if (given < 0).any() or (given > 1).any() or not np.allclose(given.sum(axis=1), 1.0):
        raise ValueError(
            "propensity must hold each row's probabilities of the arms: in [0, 1], summing to 1"
        )
    return given


def outcome_variance_impurity(sums, total_weight, params):
    """The weighted variance of y (what stops a node whose outcomes are all equal: no effect
    can differ within it); the split is scored by the criterion's split score."""
    if total_weight <= 0.0:
        return 0.0
    m = (int(math.sqrt(17.0 + 4.0 * sums.shape[0])) - 5) // 2  # the effects (module doc)
    mean = sums[m] / total_weight
    return max(sums[2 * m + 1] / total_weight - mean * mean, 0.0)


# The split scores below are compiled into the split-search kernels (numba, no Python calls
# inside), so each spells out its arithmetic rather than calling helpers. Both read the
# number of effects m from the statistics' width (m^2 + 5 m + 2) and take a binary
# treatment's arithmetic where m is 1.


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
    """The fall in Athey & Imbens' estimated EMSE of the effects (their honest criterion):
    G(L) + G(R) - G(P), G(t) = W_t sum_k (tau_k^2 - penalty (s_k^2 / n_k + s_c^2 / n_c))
    over the arms k against the control c, with the arms' variances (1 / n divisor, as
    theirs) and penalty = 1 + N_tr / N_est, over the parent's weight (several arms: the
    sum of each effect's estimated error); 0 (no use) where a child holds less than
    ``min_arm_weight`` of any arm. ``params``: (min_arm_weight, penalty)."""
    least = max(params[0], 1.0)
    penalty = params[1]
    m = (int(math.sqrt(17.0 + 4.0 * left_sums.shape[0])) - 5) // 2
    total = 0.0
    for side in range(3):
        if side == 0:
            sums, weight, sign = left_sums, left_weight, 1.0
        elif side == 1:
            sums, weight, sign = right_sums, right_weight, 1.0
        else:
            sums, weight, sign = parent_sums, parent_weight, -1.0
        n_c = weight
        sum_c = sums[m]
        squares_c = sums[2 * m + 1]
        for k in range(m):
            n_c -= sums[k]
            sum_c -= sums[m + 1 + k]
            squares_c -= sums[2 * m + 2 + k]
        if n_c < least:
            return 0.0
        mean_c = sum_c / n_c
        var_c = max(squares_c / n_c - mean_c * mean_c, 0.0)
        errors = 0.0
        for k in range(m):
            n_t = sums[k]
            if n_t < least:
                return 0.0
            mean_t = sums[m + 1 + k] / n_t
            var_t = max(sums[2 * m + 2 + k] / n_t - mean_t * mean_t, 0.0)
            tau = mean_t - mean_c
            errors += tau * tau - penalty * (var_t / n_t + var_c / n_c)
        total += sign * weight * errors
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
    pseudo-outcomes rho_i = A_P^-1 (w_i - w_P)(y_i - y_P - (w_i - w_P)' tau_P) (w_P, y_P the
    parent's means, tau_P its effects, A_P = sum_P (w - w_P)(w - w_P)'), the split
    maximising |sum_L rho|^2 / W_L + |sum_R rho|^2 / W_R, over the parent's weight (sum_P
    rho = 0, so sum_R rho = -sum_L rho); sum_L rho comes from the child's sums of w, y,
    w w', w y. A binary treatment's score leaves out A_P^-1 (a number per parent: the same
    cut). 0 (no use) where a child holds less than ``min_arm_weight`` of any arm or less
    than ``alpha`` of the parent's variation sum (w_k - w_P,k)^2 of any arm (grf's
    ``alpha``). ``params``: (min_arm_weight, alpha)."""
    least = max(params[0], 1.0)
    m = (int(math.sqrt(17.0 + 4.0 * left_sums.shape[0])) - 5) // 2
    left_control, right_control = left_weight, right_weight
    for k in range(m):
        left_treated, right_treated = left_sums[k], right_sums[k]
        if left_treated < least or right_treated < least:
            return 0.0
        left_control -= left_treated
        right_control -= right_treated
    if left_control < least or right_control < least:
        return 0.0
    # every cut of a node calls this: divisions are kept out of the checks, and
    # (1 / W_L + 1 / W_R) / W_P is 1 / (W_L W_R)
    w_at, ww_at, wy_at = 3 * m + 2, 4 * m + 2, 4 * m + 2 + m * m
    for k in range(m):
        kk = ww_at + k * m + k
        spread = parent_sums[kk] - parent_sums[w_at + k] ** 2 / parent_weight
        if spread <= 0.0:
            return 0.0
        least_spread = params[1] * spread
        left_spread = left_sums[kk] * left_weight - left_sums[w_at + k] ** 2
        right_spread = right_sums[kk] * right_weight - right_sums[w_at + k] ** 2
        if left_spread < least_spread * left_weight or right_spread < least_spread * right_weight:
            return 0.0
        if left_spread <= 0.0 or right_spread <= 0.0:
            return 0.0
    y = parent_sums[m] / parent_weight
    if m == 1:
        spread = parent_sums[TREATMENT_SQUARED] - parent_sums[TREATMENT] ** 2 / parent_weight
        w = parent_sums[TREATMENT] / parent_weight
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
    # several arms: A_P and its inverse (Gauss-Jordan with partial pivoting; m is small)
    work = np.empty((m, 2 * m))
    for k in range(m):
        for j in range(m):
            work[k, j] = (
                parent_sums[ww_at + k * m + j]
                - parent_sums[w_at + k] * parent_sums[w_at + j] / parent_weight
            )
            work[k, m + j] = 1.0 if j == k else 0.0
    for k in range(m):
        pivot = k
        for r in range(k + 1, m):
            if abs(work[r, k]) > abs(work[pivot, k]):
                pivot = r
        if abs(work[pivot, k]) <= 1e-12 * abs(work[k, k] + 1e-300) or work[pivot, k] == 0.0:
            return 0.0  # the arms' w do not vary apart: no effects to relabel by
        if pivot != k:
            for j in range(2 * m):
                work[k, j], work[pivot, j] = work[pivot, j], work[k, j]
        scale = 1.0 / work[k, k]
        for j in range(2 * m):
            work[k, j] *= scale
        for r in range(m):
            if r != k and work[r, k] != 0.0:
                factor = work[r, k]
                for j in range(2 * m):
                    work[r, j] -= factor * work[k, j]
    mean_w = np.empty(m)
    cross = np.empty(m)
    for k in range(m):
        mean_w[k] = parent_sums[w_at + k] / parent_weight
        cross[k] = parent_sums[wy_at + k] - parent_sums[w_at + k] * y
    tau_p = np.zeros(m)
    for k in range(m):
        for j in range(m):
            tau_p[k] += work[k, m + j] * cross[j]
    # sum_L (w - w_P)(y - y_P - (w - w_P)' tau_P), from the left child's sums
    gradient = np.empty(m)
    for k in range(m):
        g = (
            left_sums[wy_at + k]
            - y * left_sums[w_at + k]
            - mean_w[k] * left_sums[m]
            + mean_w[k] * y * left_weight
        )
        for j in range(m):
            centred_product = (
                left_sums[ww_at + k * m + j]
                - mean_w[k] * left_sums[w_at + j]
                - left_sums[w_at + k] * mean_w[j]
                + left_weight * mean_w[k] * mean_w[j]
            )
            g -= centred_product * tau_p[j]
        gradient[k] = g
    total = 0.0
    for k in range(m):
        rho = 0.0
        for j in range(m):
            rho += work[k, m + j] * gradient[j]
        total += rho * rho
    return total / (left_weight * right_weight)


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
        check_nonnegative_parameter(self.min_arm_weight, "min_arm_weight", self.name)
        check_nonnegative_parameter(self.variance_penalty, "variance_penalty", self.name)

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
        check_nonnegative_parameter(self.min_arm_weight, "min_arm_weight", self.name)
        if not 0.0 <= self.alpha < 0.5:
            raise ValueError(f"criterion 'grf_causal': alpha must be in [0, 0.5), got {self.alpha}")

    def impurity_params(self, n_classes: int) -> np.ndarray:
        return np.array([self.min_arm_weight, self.alpha])
