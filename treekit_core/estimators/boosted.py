"""The boosted estimators (issue 60): a regressor on the regressor family, a classifier and
a survival model on the boosting structure (``boosting.py``) with what their predictions
need (classes and ``decide``; Breslow's baseline, curves and concordance)."""

from __future__ import annotations

import numpy as np

from treekit_core.engine.validation import check_sample_weight, check_survival_y, check_y
from treekit_core.estimators.boosting import BoostingEstimator
from treekit_core.estimators.conformal import ConformalSets
from treekit_core.estimators.decisions import Decision
from treekit_core.estimators.inputs import class_weights, number_of_rows
from treekit_core.estimators.parameter_docs import document_parameters
from treekit_core.estimators.regression import RegressorFamily
from treekit_core.estimators.step_functions import StepFunction, warn_past_follow_up
from treekit_core.estimators.survival import concordance_index

_SHARED_DOC = """

    Parameters shared with scikit-learn's ``GradientBoosting*``: ``loss`` (a registered
    loss, :mod:`treekit_core.builtins.losses`; ``loss_params`` its parameters),
    ``learning_rate``, ``n_estimators`` (``max_iter``: its synonym), ``subsample`` (rows
    drawn without replacement per round), ``max_features`` (drawn at every node, as
    scikit-learn's), ``max_depth=3`` and the other stopping rules,
    ``random_state``; with HistGradientBoosting's ``l2_regularization`` (added to a leaf's
    summed hessian in the Newton step) and ``early_stopping`` (``validation_fraction`` of
    the rows held out, within classes for a classifier; the rounds stop once the held-out
    loss has not fallen by ``tol`` for ``n_iter_no_change`` rounds). The trees' ``criterion``:
    ``"squared_error"`` of the negative gradient (scikit-learn's ``GradientBoosting*``) or
    ``"newton"``, the second-order gain G^2 / (H + l2_regularization) of the rows' summed
    gradients and hessians, each child holding at least ``min_child_hessian`` (a
    ``criterion_params`` entry, default 1e-3) of summed hessian (LightGBM's and
    HistGradientBoosting's: their trees, to 1e-7); None: ``"newton"`` for the log loss,
    Poisson and gamma (``Loss.prefers_newton_gain``) with the histogram splitter (a
    splitter providing ``binned_search``), else ``"squared_error"`` (so the exhaustive
    splitter grows scikit-learn's ``GradientBoosting*`` trees). Where the hessian is
    constant (squared error, absolute error, Huber, quantile) the two make the same
    splits; for the log loss the Newton gain is the better rule on nearly separated
    classes (benchmarks/README.md).
    ``splitter`` (None: the histogram splitter where the ``treekit-histogram`` plugin is
    installed, else ``exhaustive``), ``propagator`` and ``evaluator`` (missing values),
    ``monotonic_cst``, ``interaction_cst`` and ``categorical_features`` as for a single
    tree. ``warm_start`` keeps the fitted rounds and adds rounds up to ``n_estimators``
    (``max_iter``).

    Fitted: ``estimators_`` (per round, a list of trees whose ``value`` is what each leaf
    adds to the raw prediction before the learning rate), ``train_score_`` (the loss on the
    round's in-bag rows after each round), ``validation_score_`` (with early stopping),
    ``n_iter_``, ``feature_importances_``, ``loss_``."""


@document_parameters
class BoostingRegressor(RegressorFamily, BoostingEstimator):
    __doc__ = (
        """Gradient-boosted regression trees: ``predict`` is the loss's link of the raw
    prediction (the number for ``squared_error``, ``absolute_error``, ``huber`` and
    ``quantile``; exp for ``poisson`` and ``gamma``); ``score`` is R^2."""
        + _SHARED_DOC
    )

    # the structure's (the trees' criterion is boosting's choice), not the family's
    fixed_components = BoostingEstimator.fixed_components

    def __init__(
        self,
        loss="squared_error",
        learning_rate=0.1,
        n_estimators=100,
        *,
        max_iter=None,
        subsample=1.0,
        alpha=0.9,
        loss_params=None,
        l2_regularization=0.0,
        criterion=None,
        criterion_params=None,
        splitter=None,
        propagator="hard",
        evaluator="hard",
        splitter_params=None,
        propagator_params=None,
        evaluator_params=None,
        max_depth=3,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        min_impurity_decrease=0.0,
        max_leaf_nodes=None,
        max_features=None,
        min_gain=None,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-4,
        categorical_features=None,
        monotonic_cst=None,
        interaction_cst=None,
        warm_start=False,
        random_state=None,
        n_threads=None,
    ):
        self._store_params(locals())

    def _loss_params(self) -> dict | None:
        """``alpha`` (scikit-learn's parameter of ``huber`` and ``quantile``) unless
        ``loss_params`` names it."""
        params = dict(self.loss_params or {})
        if self.loss in ("huber", "quantile"):
            params.setdefault("alpha", self.alpha)
        return params or None

    def fit(self, X, y, sample_weight=None, conformal_rows=None):
        """Boost on a numeric response ``y``; ``conformal_rows``: (X_c, y_c), rows not
        trained on that calibrate :meth:`predict_interval` (method ``"conformal"``)."""
        X, y, sample_weight, held = self._hold_out_conformal_rows(
            X, y, sample_weight, conformal_rows
        )
        self._boost(X, y, sample_weight, 0)
        self._keep_conformal_rows(held)
        return self

    _several_outputs = False

    @property
    def n_outputs_(self) -> int:
        """1: a boosted regressor predicts one number per row (fit refuses several
        outputs)."""
        self._check_fitted()
        return 1

    def predict(self, X) -> np.ndarray:
        """The loss's link of the raw prediction for every row."""
        self._check_fitted()
        return self.loss_.link(self._raw_predict(X)[:, :1])

    def _predict_checked(self, checked) -> np.ndarray:
        return self.loss_.link(self._raw_predict_checked(checked)[:, :1])

    def staged_predict(self, X):
        """``predict`` after each round (a generator)."""
        self._check_fitted()
        yield from self._staged(X, self.loss_.link)


@document_parameters
class BoostingClassifier(ConformalSets, BoostingEstimator):
    __doc__ = (
        """Gradient-boosted classification trees (``loss="log_loss"``: one tree per round
    for two classes, one per class and round for more): ``predict_proba`` is the link of
    the raw prediction, ``predict`` the most probable class (the first of equals),
    ``score`` the accuracy. ``class_weight`` (None, ``"balanced"`` or a dict class ->
    weight) multiplies the rows' weights."""
        + _SHARED_DOC
    )

    estimator_type = "classifier"
    takes = "class labels"

    def __init__(
        self,
        loss="log_loss",
        learning_rate=0.1,
        n_estimators=100,
        *,
        max_iter=None,
        subsample=1.0,
        loss_params=None,
        l2_regularization=0.0,
        criterion=None,
        criterion_params=None,
        splitter=None,
        propagator="hard",
        evaluator="hard",
        splitter_params=None,
        propagator_params=None,
        evaluator_params=None,
        max_depth=3,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        min_impurity_decrease=0.0,
        max_leaf_nodes=None,
        max_features=None,
        min_gain=None,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-4,
        class_weight=None,
        categorical_features=None,
        monotonic_cst=None,
        interaction_cst=None,
        warm_start=False,
        random_state=None,
        n_threads=None,
    ):
        self._store_params(locals())

    def fit(self, X, y, sample_weight=None, conformal_rows=None):
        """Boost on class labels ``y``; ``conformal_rows``: (X_c, y_c), labelled rows not
        trained on that calibrate :meth:`predict_set`."""
        X, y, sample_weight, held = self._hold_out_conformal_rows(
            X, y, sample_weight, conformal_rows
        )
        classes, codes = check_y(y, number_of_rows(X))  # the trees' own checks of class labels
        if classes.size < 2:
            raise ValueError(f"y holds {classes.size} class; a classifier needs at least 2 classes")
        weight = None
        if sample_weight is not None or self.class_weight is not None:
            weight = check_sample_weight(sample_weight, codes.size)
            weight = weight * class_weights(self.class_weight, codes, classes.size, classes)[codes]
        self._boost(X, codes.astype(np.float64), weight, classes.size)
        self.classes_, self.n_classes_ = classes, int(classes.size)
        self._keep_conformal_rows(held)
        return self

    def _proba_checked(self, checked) -> np.ndarray:
        return self.loss_.link(self._raw_predict_checked(checked))

    def decision_function(self, X) -> np.ndarray:
        """The raw prediction: the log-odds of ``classes_[1]`` (n) for two classes, the
        symmetric multinomial logits (n x K) for more."""
        self._check_fitted()
        raw = self._raw_predict(X)
        return raw[:, 0] if raw.shape[1] == 1 else raw

    def predict_proba(self, X) -> np.ndarray:
        """The class probabilities (n x K, columns in ``classes_`` order)."""
        self._check_fitted()
        return self.loss_.link(self._raw_predict(X))

    def predict_log_proba(self, X) -> np.ndarray:
        """The log of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def staged_decision_function(self, X):
        """:meth:`decision_function` after each round (a generator)."""
        self._check_fitted()
        for raw in self._staged(X, lambda raw: raw):
            yield raw[:, 0] if raw.shape[1] == 1 else raw

    def predict(self, X) -> np.ndarray:
        """The most probable class of every row."""
        probabilities = self.predict_proba(X)
        return self.classes_[np.argmax(probabilities, axis=1)]

    def decide(self, X) -> Decision:
        """Every row's decision as the classifier family gives it (the command line reads
        it): the most probable class, never an abstention, the confidence its
        probability."""
        proba = self.predict_proba(X)
        index = np.argmax(proba, axis=1)
        return Decision(
            labels=self.classes_[index],
            abstained=np.zeros(index.size, dtype=bool),
            proba=proba,
            confidence=proba[np.arange(index.size), index],
            class_index=index.astype(np.int64),
        )

    def staged_predict_proba(self, X):
        """``predict_proba`` after each round (a generator)."""
        self._check_fitted()
        yield from self._staged(X, self.loss_.link)

    def staged_predict(self, X):
        """``predict`` after each round (a generator)."""
        for proba in self.staged_predict_proba(X):
            yield self.classes_[np.argmax(proba, axis=1)]

    def score(self, X, y, sample_weight=None) -> float:
        """The (weighted) accuracy."""
        correct = self.predict(X) == np.asarray(y)
        return float(np.average(correct, weights=sample_weight))


@document_parameters
class BoostingSurvival(BoostingEstimator):
    __doc__ = (
        """Gradient-boosted trees for censored follow-up (``loss="cox"``: Cox's partial
    likelihood with Breslow's ties, as scikit-survival's
    ``GradientBoostingSurvivalAnalysis(loss="coxph")``): ``fit(X, y)`` takes y as
    scikit-survival's ``Surv`` makes it (or two columns, time and event); ``predict`` is
    the log hazard ratio (higher: riskier); ``predict_cumulative_hazard_function`` and
    ``predict_survival_function`` use Breslow's baseline hazard of the training rows'
    predictions, on the grid of the distinct training times (``unique_times_``); ``score``
    is Harrell's concordance index."""
        + _SHARED_DOC
    )

    takes = "censored follow-up"
    # scikit-learn's regressor tags, as the survival family's (a score, higher is better)
    estimator_type = "regressor"

    def __init__(
        self,
        loss="cox",
        learning_rate=0.1,
        n_estimators=100,
        *,
        max_iter=None,
        subsample=1.0,
        loss_params=None,
        l2_regularization=0.0,
        criterion=None,
        criterion_params=None,
        splitter=None,
        propagator="hard",
        evaluator="hard",
        splitter_params=None,
        propagator_params=None,
        evaluator_params=None,
        max_depth=3,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        min_impurity_decrease=0.0,
        max_leaf_nodes=None,
        max_features=None,
        min_gain=None,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-4,
        categorical_features=None,
        monotonic_cst=None,
        interaction_cst=None,
        warm_start=False,
        random_state=None,
        n_threads=None,
    ):
        self._store_params(locals())

    def fit(self, X, y, sample_weight=None):
        """Boost on censored follow-up ``y``, then fit Breslow's baseline hazard."""
        event, time = check_survival_y(y, number_of_rows(X))
        data, rows = self._boost(X, time, sample_weight, 0, events=event)
        with self._checked_for_predict(data.X) as checked:
            risk = self._raw_predict_checked(checked)[:, 0]
        self.unique_times_, self.cumulative_baseline_hazard_ = breslow_baseline(
            rows[:, 0], rows[:, 1] > 0, risk
        )
        return self

    def predict(self, X) -> np.ndarray:
        """The log hazard ratio of every row (the raw prediction)."""
        self._check_fitted()
        return self._raw_predict(X)[:, 0]

    def staged_predict(self, X):
        """``predict`` after each round (a generator), as scikit-survival's
        ``GradientBoostingSurvivalAnalysis.staged_predict``."""
        self._check_fitted()
        yield from self._staged(X, lambda raw: raw[:, 0])

    def predict_cumulative_hazard_function(self, X, return_array=False):
        """Breslow's baseline cumulative hazard times exp(risk), per row: step functions,
        or with ``return_array`` an array (rows x ``unique_times_``)."""
        hazard = np.exp(self.predict(X))[:, None] * self.cumulative_baseline_hazard_[None, :]
        if return_array:
            return hazard
        return np.array([StepFunction(self.unique_times_, h) for h in hazard], dtype=object)

    def predict_survival_function(self, X, return_array=False):
        """exp(-cumulative hazard) per row (see :meth:`predict_cumulative_hazard_function`)."""
        survival = np.exp(-self.predict_cumulative_hazard_function(X, return_array=True))
        if return_array:
            return survival
        return np.array(
            [StepFunction(self.unique_times_, s, before=1.0) for s in survival], dtype=object
        )

    @property
    def is_event_time_(self) -> np.ndarray:
        """Which of ``unique_times_`` saw an event (where the baseline hazard steps)."""
        self._check_fitted()
        return np.diff(self.cumulative_baseline_hazard_, prepend=0.0) > 0

    def predict_survival_at(self, X, times) -> np.ndarray:
        """Every row's survival at ``times`` (n x len(times)): its curve at the last
        training time <= t, 1 before the first; a time past the last training time gets
        the last value, which no row observed (a :class:`FollowUpWarning` says so)."""
        times = np.asarray(times, dtype=np.float64).reshape(-1)
        if not np.isfinite(times).all():
            raise ValueError("times must be finite numbers (no NaN or infinity)")
        warn_past_follow_up(times, self.unique_times_)
        position = np.searchsorted(self.unique_times_, times, side="right") - 1
        hazard = np.where(
            position >= 0, self.cumulative_baseline_hazard_[np.maximum(position, 0)], 0.0
        )
        return np.exp(-np.exp(self.predict(X))[:, None] * hazard[None, :])

    def score(self, X, y, sample_weight=None) -> float:
        """Harrell's concordance index of :meth:`predict` on censored ``y``."""
        if sample_weight is not None:
            raise ValueError("Harrell's concordance index takes no sample_weight")
        event, time = check_survival_y(y, len(y))
        return concordance_index(event, time, self.predict(X))


def breslow_baseline(time, event, risk) -> tuple:
    """(the distinct times, Breslow's cumulative baseline hazard at each): the sum over
    event times t <= each of (events at t) / (sum of exp(risk) over the rows still at risk
    at t), scikit-survival's ``BreslowEstimator``."""
    order = np.argsort(time, kind="stable")
    t, d, r = time[order], event[order], np.exp(risk[order])
    times, first = np.unique(t, return_index=True)
    at_risk = np.cumsum(r[::-1])[::-1][first]
    events = np.add.reduceat(d.astype(np.float64), first)
    return times, np.cumsum(events / at_risk)
