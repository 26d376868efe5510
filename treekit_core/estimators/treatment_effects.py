"""Who benefits from a treatment (issue 65): causal trees (Athey & Imbens 2016) and causal
forests (Wager & Athey 2018; Athey, Tibshirani & Wager 2019, R's grf), the treatment-effect
family on the single-tree and ensemble structures.

``fit(X, y, treatment)`` with a binary treatment (1 treated, 0 control) or several arms
(0 control, 1, ..., K - 1: grf's ``multi_arm_causal_forest``); ``predict(X)`` is the effect
per row (n x (K - 1) for several arms: each arm's against the control). The target
``treatment_effect`` holds per node the effect (the difference of the arms' mean outcomes,
or the residual-on-residual slope where the forest centres y and the treatment), and the
criteria ``causal_tree`` (Athey & Imbens' honest criterion) and ``grf_causal`` (grf's
gradient split) split where the effect differs.

Both are honest by default (``honest_fraction`` of each tree's rows, per arm, grows the
structure, the rest estimates the leaves; leaves whose estimation rows lack an arm are
pruned). The forest, as grf's ``causal_forest``:

* centres y and the treatment on out-of-bag regression forests (``orthogonalize=True``;
  ``fit(..., outcome_mean=m, propensity=e)`` gives them instead);
* grows every tree on a subsample of ``max_samples`` of the rows drawn without
  replacement from a half-sample its little bag of ``ci_group_size`` trees shares;
* predicts grf's forest estimate: the slope of the forest-weighted moments (the mean over
  the trees of each leaf's means of w, y, w^2 and w y);
* ``predict_interval(X, alpha)`` from grf's bootstrap-of-little-bags variance (the delta
  method on the leaves' pseudo-outcomes, the objective-Bayes debiasing);
* ``average_treatment_effect()``: grf's augmented inverse-propensity-weighted estimate
  from the out-of-bag effects and the nuisance forests, with its standard error.
"""

from __future__ import annotations

import math
import numbers
from statistics import NormalDist

import numpy as np

from treekit_core.builtins.treatment_effect import (
    EffectColumns,
    arm_probabilities,
    arm_standard_errors,
    arm_weights,
    check_treatment,
    mean_moments,
)
from treekit_core.engine.validation import check_y_numeric, finite_numbers
from treekit_core.estimators.ensemble import EnsembleEstimator, resolve_max_samples
from treekit_core.estimators.forest import ForestClassifier, ForestRegressor
from treekit_core.estimators.inputs import number_of_rows, open_unit_share
from treekit_core.estimators.parameter_docs import document_parameters
from treekit_core.estimators.single_tree import SingleTreeEstimator

#: The interval methods of a treatment effect (the conformal ones need an observed target).
EFFECT_INTERVAL_METHODS = ("variance",)


class TreatmentEffectFamily:
    """The family of estimators that predict a treatment's effect (placed before the
    structure): ``fit(X, y, treatment)``, ``predict`` the effect per row,
    ``predict_interval`` from the effect's variance (each public class says how it
    estimates it). No labeler or confidence: the composition's are fixed."""

    estimator_type = None
    fixed_components = {"labeler": "majority", "confidence": "probability"}

    def fit(self, X, y, treatment, sample_weight=None, propensity=None):
        """Fit on the outcome ``y`` and the ``treatment`` arm (0 control, 1 treated; several
        arms 0, 1, ..., K - 1) of every row of X; ``propensity``: each row's probability of
        treatment (n values; several arms: n x K, every arm's, the control first), to centre
        the treatment on (grf's ``W.hat``; the forest estimates it when not given)."""
        self._fit_checked(X, y, sample_weight, treatment=treatment, propensity=propensity)
        return self

    def _check_target(self, composition) -> None:
        super()._check_target(composition)
        if "treatment" not in composition.target.fit_arguments:
            raise ValueError(
                f"{type(self).__name__} predicts a treatment's effect, but criterion "
                f"{composition.criterion.name!r} reads target {composition.target.name!r}, "
                "which takes no treatment; use criterion 'causal_tree' or 'grf_causal'"
            )

    def predict(self, X) -> np.ndarray:
        """The treatment's effect for every row: its leaf's (a forest: the slope of the
        forest-weighted moments, grf's estimate); NaN where no effect is defined. Several
        arms: n x (K - 1), column k - 1 arm k's effect against the control."""
        self._check_fitted()
        with self._checked_for_predict(X) as checked:
            return self._effects_of_checked(checked)

    def _effects_of_checked(self, checked) -> np.ndarray:
        values = self._node_values(checked)
        return self.composition_.target.predictions(values, None, None)

    def predict_interval(self, X, alpha=0.05, method="variance") -> np.ndarray:
        """An (n, 2) array: per row of X, the effect -/+ z_(1 - alpha/2) standard errors
        (``method="variance"``: the tree's leaf, the forest's little bags; several arms:
        n x (K - 1) x 2, each arm's effect's interval); the
        conformal methods of the regressors need an observed response, which an effect
        never is, and are refused."""
        self._check_fitted()
        if method != "variance":
            raise ValueError(
                f"predict_interval(method={method!r}): a treatment effect is never observed "
                "row by row, so conformal and quantile intervals do not apply; use "
                "method='variance'"
            )
        alpha = open_unit_share(alpha, "alpha must be a number in (0, 1)")
        with self._checked_for_predict(X) as checked:
            effect, variance = self._effects_and_variances(checked)
        half = NormalDist().inv_cdf(1.0 - alpha / 2.0) * np.sqrt(variance)
        return np.stack([effect - half, effect + half], axis=-1)

    @property
    def n_arms_(self) -> int:
        """The treatment's arms, the control included (2 for a binary treatment)."""
        self._check_fitted()
        trees = self.estimators_ if hasattr(self, "estimators_") else [self.tree_]
        return EffectColumns.of_statistics(trees[0].statistics.shape[1]).effects + 1

    def node_effects(self, tree) -> np.ndarray:
        """The effect of every node of ``tree`` (one of this model's): the slope of its
        values, NaN where its rows lack an arm (several arms: a column per arm). Read by
        ``plot_tree``, which colours the nodes by it (several arms: by arm 1's)."""
        return self.composition_.target.predictions(tree.value, None, None)

    def _leaf_text(self, decimals: int):
        """A leaf's effect, its standard error and its rows per arm (several arms: each
        arm's effect against the control)."""
        tree = self.tree_
        effects = self.node_effects(tree)
        errors = arm_standard_errors(tree.statistics, tree.weight)
        arms = arm_weights(tree.statistics, tree.weight)

        def text(node):
            n = f"n={int(tree.n_samples[node])}: "
            if effects.ndim == 1:
                effect, se = effects[node], errors[node]
                return (
                    f"effect: {effect:.{decimals}f} (se {se:.{decimals}g}; "
                    f"{n}{arms[node, 1]:g} treated, {arms[node, 0]:g} control)"
                )
            shown = ", ".join(
                f"arm {k + 1}: {effects[node, k]:.{decimals}f}" for k in range(effects.shape[1])
            )
            ses = ", ".join(f"{se:.{decimals}g}" for se in errors[node])
            counts = ", ".join(f"{arms[node, k]:g} arm {k}" for k in range(1, arms.shape[1]))
            return f"effects: {shown} (se {ses}; {n}{arms[node, 0]:g} control, {counts})"

        return text


@document_parameters
class CausalTree(TreatmentEffectFamily, SingleTreeEstimator):
    """A causal tree (Athey & Imbens 2016): honest by default, split by their honest
    criterion (``causal_tree``), each leaf's effect the difference of its estimation rows'
    arm means, with that difference's standard error (``predict_interval``: an interval
    for the leaf's mean effect). Their criterion's variance penalty alone lets a tree grow
    on noise (the best of many cuts beats its penalty), and their cross-validated pruning
    is not offered: ``min_samples_leaf`` (default 20) and ``max_depth`` bound it."""

    def __init__(
        self,
        criterion="causal_tree",
        splitter="exhaustive",
        propagator="hard",
        pruner="none",
        evaluator="hard",
        *,
        target=None,
        target_params=None,
        criterion_params=None,
        splitter_params=None,
        propagator_params=None,
        pruner_params=None,
        evaluator_params=None,
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=20,
        min_weight_fraction_leaf=0.0,
        min_impurity_decrease=0.0,
        min_gain=None,
        categorical_features=None,
        random_state=None,
        honest=True,
        honest_fraction=0.5,
        honest_prune_leaves=True,
    ):
        self._store_params(locals())

    def _effects_and_variances(self, checked) -> tuple:
        """The leaf's effect and its squared standard error (the arms' variances over their
        estimation rows; a row that reaches several leaves: of their statistics mixed by
        its shares)."""
        tree = self.tree_
        rows, nodes, shares = self._mixtures(tree, checked)
        statistics = np.zeros((checked.shape[0], tree.statistics.shape[1]))
        weight = np.zeros(checked.shape[0])
        np.add.at(statistics, rows, tree.statistics[nodes] * shares[:, None])
        np.add.at(weight, rows, tree.weight[nodes] * shares)
        return self._effects_of_checked(checked), arm_standard_errors(statistics, weight) ** 2


@document_parameters
class CausalForest(TreatmentEffectFamily, EnsembleEstimator):
    """A causal forest as grf's ``causal_forest`` (the module docstring): honest trees on
    subsamples of little bags, centred on out-of-bag nuisance forests, predicting the
    forest-weighted effect with grf's variance and average treatment effect."""

    def __init__(
        self,
        n_estimators=100,
        criterion="grf_causal",
        splitter="exhaustive",
        propagator="hard",
        pruner="none",
        evaluator="hard",
        *,
        target=None,
        target_params=None,
        criterion_params=None,
        splitter_params=None,
        propagator_params=None,
        pruner_params=None,
        evaluator_params=None,
        max_samples=0.45,
        max_features=None,
        ci_group_size=2,
        orthogonalize=True,
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=5,
        min_weight_fraction_leaf=0.0,
        min_impurity_decrease=0.0,
        min_gain=None,
        categorical_features=None,
        n_jobs=None,
        random_state=None,
        honest=True,
        honest_fraction=0.5,
        honest_prune_leaves=True,
        warm_start=False,
    ):
        self._store_params(locals())

    # the ensemble's hooks: every tree draws its rows, without replacement (a subsample of
    # its little bag's half-sample); no out-of-bag score (the average treatment effect
    # reads the out-of-bag effects)
    bootstrap = True
    oob_score = False

    def _draws_with_replacement(self) -> bool:
        return False

    def _little_bag_size(self) -> int:
        return int(self.ci_group_size)

    def _check_params(self) -> None:
        super()._check_params()
        size = self.ci_group_size
        if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 1:
            raise ValueError(f"ci_group_size must be an int >= 1, got {size!r}")
        if size > 1 and self.n_estimators % size:
            raise ValueError(
                f"n_estimators={self.n_estimators} must be a multiple of ci_group_size={size} "
                "(the trees of a little bag share a half-sample)"
            )
        if not isinstance(self.orthogonalize, bool | np.bool_):
            raise ValueError(f"orthogonalize must be True or False, got {self.orthogonalize!r}")
        value = self.max_samples
        fraction = isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral)
        if size > 1 and fraction and value > 0.5:
            raise ValueError(
                f"max_samples={value}: with ci_group_size > 1 every tree subsamples a half of "
                "the rows, so max_samples must be at most 0.5 (grf's sample.fraction)"
            )

    def _rows_per_tree(self, n_samples: int) -> int:
        draws = resolve_max_samples(self.max_samples, n_samples)
        if self.ci_group_size > 1 and draws > n_samples // 2:
            raise ValueError(
                f"max_samples draws {draws} rows per tree; a little bag's half-sample holds "
                f"{n_samples // 2}"
            )
        return draws

    def fit(self, X, y, treatment, sample_weight=None, outcome_mean=None, propensity=None):
        """Fit on the outcome ``y`` and the ``treatment`` arm of every row of X (0 control,
        1 treated; several arms 0, 1, ..., K - 1, grf's ``multi_arm_causal_forest``). With
        ``orthogonalize`` (grf's default) y and the treatment are centred on
        ``outcome_mean`` (grf's ``Y.hat``) and ``propensity`` (``W.hat``: n values, or n x K
        of every arm for several), each estimated where not given by an out-of-bag forest
        (a regression forest; several arms: a classification forest's arm
        probabilities); the average treatment effect reads them. Without it (econml's
        forest) neither is estimated unless one is given, and the average treatment
        effect needs them."""
        self._check_params()
        n = number_of_rows(X)
        outcome = check_y_numeric(y, n)
        treated = check_treatment(treatment, n)
        weight = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        self.outcome_mean_ = self.propensity_ = None
        if self.orthogonalize or outcome_mean is not None or propensity is not None:
            self.outcome_mean_ = self._nuisance(X, outcome, weight, outcome_mean, "outcome_mean", n)
            if treated.max() > 1:  # several arms: every arm's probability
                self.propensity_ = self._arm_probabilities(X, treated, weight, propensity, n)
            else:
                self.propensity_ = self._nuisance(X, treated, weight, propensity, "propensity", n)
            if not ((self.propensity_ >= 0) & (self.propensity_ <= 1)).all():
                raise ValueError("propensity must hold probabilities in [0, 1]")
        centred = self.orthogonalize
        data = self._fit_checked(
            X,
            outcome - self.outcome_mean_ if centred else outcome,
            sample_weight,
            treatment=treated,
            propensity=self.propensity_ if centred else None,
        )
        self._effect_scores = None
        if self.propensity_ is not None:
            self._keep_effect_scores(data, outcome, treated, weight)
        return self

    def _nuisance(self, X, response, weight, given, name: str, n: int) -> np.ndarray:
        """``given`` checked (n finite numbers), or the out-of-bag predictions of a
        regression forest of ``response`` on X (grf's: max(50, n_estimators / 4) honest
        trees, each on half the rows)."""
        if given is not None:
            values = finite_numbers(np.asarray(given, dtype=np.float64), name)
            if values.shape != (n,):
                raise ValueError(f"{name} must hold one number per row ({n},)")
            return values
        forest = ForestRegressor(**self._nuisance_params(name))
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # a row drawn by every tree
            forest.fit(X, response, sample_weight=weight)
        # out of bag for the rows it trained on (weight > 0); its prediction where every
        # tree drew the row, and for rows of weight 0 (left out of its fit)
        kept = np.ones(n, dtype=bool) if weight is None else weight > 0
        predicted = np.full(n, np.nan)
        predicted[kept] = forest.oob_prediction_
        missing = np.flatnonzero(np.isnan(predicted))
        if missing.size:
            predicted[missing] = forest.predict(_rows_at(X, missing))
        return predicted

    def _nuisance_params(self, name: str) -> dict:
        """A nuisance forest's parameters (grf's: max(50, n_estimators / 4) honest trees,
        each on half the rows, out-of-bag estimates)."""
        return {
            "n_estimators": max(50, self.n_estimators // 4),
            "max_features": self.max_features if self.max_features is not None else 1.0,
            "max_samples": 0.5,
            "min_samples_leaf": self.min_samples_leaf,
            "honest": True,
            "oob_score": True,
            "categorical_features": self.categorical_features,
            "n_jobs": self.n_jobs,
            "random_state": _nuisance_seed(self.random_state, name),
        }

    def _arm_probabilities(self, X, arm, weight, given, n: int) -> np.ndarray:
        """Each row's probability of every arm (n x K, the control first): ``given``
        checked, or the out-of-bag class probabilities of a classification forest of the
        arms on X (grf's ``probability_forest`` for ``W.hat``: as :meth:`_nuisance`'s)."""
        n_arms = int(arm.max()) + 1
        if given is not None:
            return arm_probabilities(given, n, n_arms)
        forest = ForestClassifier(**self._nuisance_params("propensity"))
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # a row drawn by every tree
            forest.fit(X, arm.astype(np.int64), sample_weight=weight)
        kept = np.ones(n, dtype=bool) if weight is None else weight > 0
        probabilities = np.full((n, n_arms), np.nan)
        probabilities[kept] = forest.oob_decision_function_
        missing = np.flatnonzero(np.isnan(probabilities).any(axis=1))
        if missing.size:
            probabilities[missing] = forest.predict_proba(_rows_at(X, missing))
        return probabilities

    def _keep_effect_scores(self, data, outcome, treated, weight) -> None:
        """What ``average_treatment_effect`` reads: every training row's out-of-bag effect
        (the trees that did not draw it; the forest's where every tree did), with its
        outcome, treatment and the nuisances."""
        composition = self.composition_
        strata = composition.target.strata(data.evidence, composition.labeler)
        n_strata = int(strata.max()) + 1
        draws = self._rows_per_tree(data.n_samples)
        total, counts = self._out_of_bag_sums(data, strata, n_strata, draws)
        with np.errstate(invalid="ignore", divide="ignore"):
            effect = composition.target.predictions(total / counts[:, None], None, None)
        everywhere = counts == 0
        if everywhere.any():
            effect[everywhere] = self._effects_of_checked(data.X[everywhere])
        kept = np.ones(outcome.size, dtype=bool) if weight is None else weight > 0
        self._effect_scores = {
            "effect": effect,
            "outcome": outcome[kept],
            "treatment": treated[kept],
            "outcome_mean": self.outcome_mean_[kept],
            "propensity": self.propensity_[kept],
            "weight": np.ones(int(kept.sum())) if weight is None else weight[kept],
        }

    def _effects_and_variances(self, checked) -> tuple:
        """grf's estimate and its bootstrap-of-little-bags variance per row (the module
        docstring)."""
        if self.ci_group_size < 2:
            raise ValueError(
                "predict_interval needs the little bags' spread: fit with ci_group_size >= 2"
            )
        width = self.estimators_[0].value.shape[1]
        shape = (checked.shape[0],) if width == 4 else (checked.shape[0], math.isqrt(width) - 1)
        effect, variance = np.empty(shape), np.empty(shape)
        # rows in blocks: every tree's leaf values of a block (rows x trees x values) at once
        block = max(1, 2**22 // (width * len(self.estimators_)))
        for start in range(0, checked.shape[0], block):
            rows = slice(start, start + block)
            per_tree = self.composition_.evaluator.tree_distributions(
                self.estimators_, checked[rows]
            )
            estimate = little_bag_variance if width == 4 else multi_arm_little_bag_variance
            effect[rows], variance[rows] = estimate(per_tree, self.ci_group_size)
        return effect, variance

    def average_treatment_effect(self) -> tuple:
        """(estimate, standard error) of the average treatment effect over the training
        rows: grf's augmented inverse-propensity-weighted estimate (``target.sample =
        "all"``, ``method = "AIPW"``), the mean of
        Gamma_i = tau_i + (W_i - e_i) / (e_i (1 - e_i)) (Y_i - m_i - (W_i - e_i) tau_i),
        tau_i the out-of-bag effect, m_i and e_i the outcome mean and propensity; its
        standard error the (weighted) standard deviation of Gamma over sqrt(n - 1).
        Several arms: arrays of K - 1, each arm's against the control, from grf's
        ``get_scores.multi_arm_causal_forest``: Gamma_ik = tau_ik + (d_ik / e_ik - d_i0 /
        e_i0) (Y_i - mu_i(arm of i)), mu_i(0) = m_i - sum_k e_ik tau_ik, mu_i(k) = mu_i(0) +
        tau_ik."""
        self._check_fitted()
        scores = getattr(self, "_effect_scores", None)
        if scores is None and getattr(self, "propensity_", 0) is None:
            raise ValueError(
                "average_treatment_effect needs every training row's outcome mean and "
                "propensity: fit with orthogonalize=True (the default), or give outcome_mean "
                "and propensity to fit"
            )
        if scores is None:
            raise ValueError(
                "average_treatment_effect reads the training rows' out-of-bag effects, which "
                "a forest read from a model file does not hold: fit it again"
            )
        tau, y, w = scores["effect"], scores["outcome"], scores["treatment"]
        m, e, weight = scores["outcome_mean"], scores["propensity"], scores["weight"]
        if ((e <= 0) | (e >= 1)).any():
            raise ValueError(
                "average_treatment_effect divides by e (1 - e): some propensity is 0 or 1 "
                "(no overlap between the arms there)"
            )
        if tau.ndim == 2:
            return _multi_arm_average_effects(tau, y, w, m, e, weight)
        residual = y - m - (w - e) * tau
        gamma = tau + (w - e) / (e * (1.0 - e)) * residual
        estimate = float(np.average(gamma, weights=weight))
        n = gamma.size
        spread = float(np.average((gamma - estimate) ** 2, weights=weight))
        return estimate, math.sqrt(spread / (n - 1))


def _multi_arm_average_effects(tau, y, arm, m, e, weight) -> tuple:
    """:meth:`CausalForest.average_treatment_effect` of several arms (its docstring):
    (estimates, standard errors), K - 1 each."""
    rows = np.arange(y.size)
    arm = arm.astype(np.int64)
    baseline = m - (e[:, 1:] * tau).sum(axis=1)
    mu = np.column_stack([baseline, baseline[:, None] + tau])
    residual = y - mu[rows, arm]
    inverse = np.zeros_like(e)
    inverse[rows, arm] = 1.0 / e[rows, arm]
    weighting = inverse[:, 1:] - inverse[:, [0]]
    gamma = tau + weighting * residual[:, None]
    estimate = np.average(gamma, axis=0, weights=weight)
    spread = np.average((gamma - estimate) ** 2, axis=0, weights=weight)
    return estimate, np.sqrt(spread / (y.size - 1))


def little_bag_variance(per_tree: np.ndarray, group_size: int) -> tuple:
    """(effect, variance) per row from every tree's leaf values (rows x trees x values, the
    ``treatment_effect`` target's columns): grf's ``InstrumentalPredictionStrategy`` with
    the instrument the treatment. The forest's averages A of the means of w, y, w^2, w y
    (and of 1) give tau and the intercept mu; every tree's pseudo-outcome
    rho_b = (psi1_b - A_w psi2_b) / (A_ww - A_w^2), psi1_b = m_wy - tau m_ww - mu m_w,
    psi2_b = m_y - tau m_w - mu; the variance of the little bags' means of rho, debiased
    for the spread within bags (grf's objective-Bayes debiaser). Row by row, compiled
    (``kernels.little_bags``), rows in blocks on the threads."""
    from treekit_core.kernels.little_bags import little_bag_moments
    from treekit_core.kernels.row_chunks import for_row_chunks

    per_tree = np.ascontiguousarray(per_tree, dtype=np.float64)
    n_rows, n_trees = per_tree.shape[:2]
    tau, var_between, group_noise = np.empty(n_rows), np.empty(n_rows), np.empty(n_rows)

    def block(start, stop):
        little_bag_moments(per_tree, group_size, tau, var_between, group_noise, start, stop)

    for_row_chunks(block, n_rows, cost=n_trees)
    return tau, objective_bayes_debiased(var_between, group_noise, n_trees // group_size)


def multi_arm_little_bag_variance(per_tree: np.ndarray, group_size: int) -> tuple:
    """(effects, variances), rows x m each, from every tree's leaf values of a treatment of
    m + 1 arms (rows x trees x (m + 1)^2): grf's ``MultiCausalPredictionStrategy`` with a
    leaf's weight 1 (the values are means). With A the forest's averages, theta = (A_ww -
    A_w A_w')^-1 (A_wy - A_y A_w) and mu = A_y - theta' A_w; every tree's pseudo-outcome
    rho_b = T1 psi1_b - T2 psi2_b, psi1_b = m_wy - m_ww theta - m_w mu, psi2_b = m_y -
    m_w' theta - mu, T1 = A_ww^-1 + A_ww^-1 A_w A_w' A_ww^-1 / k, T2 = A_ww^-1 A_w / k,
    k = 1 - A_w' A_ww^-1 A_w; each effect's variance as :func:`little_bag_variance`'s
    (a binary treatment's T1, T2 are its 1 / (A_ww - A_w^2), A_w / (A_ww - A_w^2))."""
    n_rows, n_trees, width = per_tree.shape
    m = math.isqrt(width) - 1
    m_w, m_y, m_ww, m_wy = mean_moments(per_tree.reshape(n_rows * n_trees, width), m)
    m_w, m_y = m_w.reshape(n_rows, n_trees, m), m_y.reshape(n_rows, n_trees)
    m_ww, m_wy = m_ww.reshape(n_rows, n_trees, m, m), m_wy.reshape(n_rows, n_trees, m)
    a_w, a_y, a_ww, a_wy = (v.mean(axis=1) for v in (m_w, m_y, m_ww, m_wy))
    tau = np.full((n_rows, m), np.nan)
    variance = np.full((n_rows, m), np.nan)
    first_stage = a_ww - a_w[:, :, None] * a_w[:, None, :]
    with np.errstate(invalid="ignore", over="ignore"):
        ok = (np.linalg.det(first_stage) > 1e-12) & (np.linalg.det(a_ww) > 1e-12)
    if not ok.any():
        return tau, variance
    a_w, a_y, a_ww, a_wy = a_w[ok], a_y[ok], a_ww[ok], a_wy[ok]
    theta = np.linalg.solve(first_stage[ok], (a_wy - a_y[:, None] * a_w)[:, :, None])[:, :, 0]
    mu = a_y - (theta * a_w).sum(axis=1)
    inverse = np.linalg.inv(a_ww)
    inverse_w = np.einsum("rkj,rj->rk", inverse, a_w)
    k = 1.0 - (a_w * inverse_w).sum(axis=1)
    term1 = inverse + inverse_w[:, :, None] * inverse_w[:, None, :] / k[:, None, None]
    term2 = inverse_w / k[:, None]
    psi1 = m_wy[ok] - np.einsum("rbkj,rj->rbk", m_ww[ok], theta) - m_w[ok] * mu[:, None, None]
    psi2 = m_y[ok] - np.einsum("rbk,rk->rb", m_w[ok], theta) - mu[:, None]
    rho = np.einsum("rkj,rbj->rbk", term1, psi1) - term2[:, None, :] * psi2[:, :, None]
    groups = n_trees // group_size
    grouped = rho[:, : groups * group_size].reshape(-1, groups, group_size, m)
    var_between = (grouped.mean(axis=2) ** 2).mean(axis=1)
    var_total = (grouped**2).mean(axis=(1, 2))
    group_noise = (var_total - var_between) / (group_size - 1)
    tau[ok] = theta
    variance[ok] = objective_bayes_debiased(var_between, group_noise, groups)
    return tau, variance


def objective_bayes_debiased(var_between, group_noise, n_groups: int) -> np.ndarray:
    """grf's ``ObjectiveBayesDebiaser``: var_between - group_noise, kept from going below 0
    by a uniform prior on the true variance over [0, inf): the initial estimate plus
    se phi(r) / Phi(r), r = estimate / se, se = max(var_between, group_noise) sqrt(2 / G);
    0 where se is 0."""
    initial = var_between - group_noise
    se = np.maximum(var_between, group_noise) * math.sqrt(2.0 / n_groups)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = initial / se
        numerator = np.exp(-ratio * ratio / 2.0) / math.sqrt(2.0 * math.pi)
        # math's erfc row by row: scipy.special's import took a third of a first
        # predict_interval (0.1 s) for a few thousand calls of 0.2 us
        denominator = 0.5 * _erfc(-ratio / math.sqrt(2.0)).astype(np.float64)
        debiased = initial + se * numerator / denominator
    return np.where(np.abs(se) <= 1e-10, 0.0, debiased)


_erfc = np.frompyfunc(math.erfc, 1, 1)


def _rows_at(X, rows):
    """Rows of X (an array or a DataFrame)."""
    return X.iloc[rows] if hasattr(X, "iloc") else np.asarray(X)[rows]


def _nuisance_seed(random_state, name: str):
    """A nuisance forest's seed: drawn apart from the causal forest's own stream."""
    if random_state is None or isinstance(random_state, np.random.RandomState):
        return random_state
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**31 - 1))
    return int(np.random.default_rng((int(random_state), len(name))).integers(0, 2**31 - 1))
