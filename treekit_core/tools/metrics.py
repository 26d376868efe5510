"""Diagnostic figures (Cambridge handout): sensitivity, specificity, PPV, NPV, accuracy.

Figures are computed on the samples the estimator decided; abstentions are counted apart and
reported as coverage = decided / all. For K classes every class is taken one-vs-rest.
Each proportion comes with its Wilson score interval (E. B. Wilson, 1927), which stays
inside [0, 1] and behaves on the small counts of clinical data where the normal
approximation does not: for x successes in n, with z the normal quantile,
center = (p + z^2 / 2n) / (1 + z^2 / n), half-width = z / (1 + z^2 / n) *
sqrt(p (1 - p) / n + z^2 / 4n^2). With sample weights, x and n are weight sums.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import attrs
import numpy as np

from treekit_core.builtins.competing_risks import cumulative_incidence as aalen_johansen
from treekit_core.builtins.competing_risks import gray_scores, logrank_scores
from treekit_core.engine.validation import check_event_codes, check_survival_y, split_entry
from treekit_core.estimators.regression import r2_score
from treekit_core.estimators.survival import concordance_index
from treekit_core.estimators.survival import concordance_index_cause as _concordance_of_cause


def _ratio(num: float, den: float) -> float:
    return float(num) / float(den) if den > 0 else float("nan")


def wilson_interval(successes: float, trials: float, confidence: float = 0.95) -> tuple:
    """The Wilson score interval of the proportion ``successes / trials`` (NaNs when there
    are no trials)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if trials <= 0:
        return (float("nan"), float("nan"))
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = successes / trials
    scale = 1.0 + z * z / trials
    center = (p + z * z / (2 * trials)) / scale
    half = z / scale * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    return (max(0.0, center - half), min(1.0, center + half))


@attrs.frozen
class ClassFigures:
    label: object
    tp: float
    fp: float
    tn: float
    fn: float

    @property
    def sensitivity(self) -> float:
        return _ratio(self.tp, self.tp + self.fn)

    @property
    def specificity(self) -> float:
        return _ratio(self.tn, self.tn + self.fp)

    @property
    def ppv(self) -> float:
        return _ratio(self.tp, self.tp + self.fp)

    @property
    def npv(self) -> float:
        return _ratio(self.tn, self.tn + self.fn)

    @property
    def support(self) -> float:
        return self.tp + self.fn

    def interval(self, measure: str, confidence: float = 0.95) -> tuple:
        """The Wilson interval of ``measure`` ("sensitivity", "specificity", "ppv", "npv")."""
        counts = {
            "sensitivity": (self.tp, self.tp + self.fn),
            "specificity": (self.tn, self.tn + self.fp),
            "ppv": (self.tp, self.tp + self.fp),
            "npv": (self.tn, self.tn + self.fn),
        }
        if measure not in counts:
            raise ValueError(f"measure must be one of {sorted(counts)}, got {measure!r}")
        return wilson_interval(*counts[measure], confidence)


@attrs.frozen
class DiagnosticReport:
    classes: list
    per_class: list
    accuracy: float  #: on decided samples
    n_samples: int
    n_abstained: int

    @property
    def coverage(self) -> float:
        return _ratio(self.n_samples - self.n_abstained, self.n_samples)

    def __getitem__(self, label) -> ClassFigures:
        for figures in self.per_class:
            if figures.label == label:
                return figures
        raise KeyError(label)

    def __str__(self) -> str:
        """The table (:meth:`to_text`); ``repr`` stays the record."""
        return self.to_text()

    def to_text(self, digits: int = 3, confidence: float = 0.95) -> str:
        """One row per class: each measure with its Wilson interval in brackets, the
        support; then accuracy and coverage."""
        width = max(12, max(len(str(c)) for c in self.classes) + 2)
        measures = (("sensitivity", "sensitivity"), ("specificity", "specificity"))
        measures += (("ppv", "PPV"), ("npv", "NPV"))
        cell = 3 * (digits + 2) + 5  # "0.912 [0.871, 0.941]"
        head = f"{'class':>{width}} " + " ".join(f"{title:>{cell}}" for _, title in measures)
        lines = [
            head + f" {'support':>8}",
            f"{'':>{width}} (with {confidence:.0%} Wilson intervals)",
        ]
        for f in self.per_class:
            cells = []
            for measure, _ in measures:
                low, high = f.interval(measure, confidence)
                value = getattr(f, measure)
                cells.append(
                    f"{value:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]".rjust(cell)
                )
            lines.append(f"{str(f.label):>{width}} " + " ".join(cells) + f" {f.support:>8g}")
        lines.append("")
        decided = self.n_samples - self.n_abstained
        lines.append(f"accuracy on decided samples: {self.accuracy:.{digits}f} ({decided} decided)")
        lines.append(
            f"abstained: {self.n_abstained} of {self.n_samples}  coverage: "
            f"{self.coverage:.{digits}f}"
        )
        return "\n".join(lines)


def diagnostic_report(
    y_true, y_pred, abstained=None, classes=None, sample_weight=None
) -> DiagnosticReport:
    """Per-class sensitivity, specificity, PPV and NPV on the decided samples.

    ``abstained`` marks samples without a decision (their ``y_pred`` is ignored).
    """
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true has shape {y_true.shape} but y_pred has {y_pred.shape}")
    n = y_true.shape[0]
    abstained = np.zeros(n, dtype=bool) if abstained is None else np.asarray(abstained, dtype=bool)
    weight = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    decided = ~abstained
    if classes is None:
        classes = list(np.unique(y_true))
    t, p, w = y_true[decided], y_pred[decided], weight[decided]
    per_class = []
    for c in classes:
        truth, said = t == c, p == c
        per_class.append(
            ClassFigures(
                c,
                float(w[truth & said].sum()),
                float(w[~truth & said].sum()),
                float(w[~truth & ~said].sum()),
                float(w[truth & ~said].sum()),
            )
        )
    accuracy = _ratio(w[t == p].sum(), w.sum())
    return DiagnosticReport(list(classes), per_class, accuracy, n, int(abstained.sum()))


def regression_figures(y_true, y_pred) -> dict:
    """A regressor's figures: ``n``, ``rmse``, ``mae`` and ``r2`` (scikit-learn's
    ``r2_score``), what ``treekit evaluate`` prints and the HTML report shows."""
    y_true, y_pred = np.asarray(y_true, dtype=np.float64), np.asarray(y_pred, dtype=np.float64)
    residual = y_true - y_pred
    return {
        "n": int(y_true.size),
        "rmse": float(np.sqrt(np.mean(residual**2))),
        "mae": float(np.mean(np.abs(residual))),
        "r2": r2_score(y_true, y_pred),
    }


# -- censored follow-up (issue 42) ----------------------------------------------------------


def kaplan_meier(event, time, reverse: bool = False, entry=None):
    """The Kaplan-Meier estimate from follow-up, as scikit-survival's estimators keep it:
    (times with -inf first, the estimate with 1 first). ``reverse``: of the censoring
    distribution G(t) = P(C > t) (``CensoringDistributionEstimator``: censorings are the
    events, and rows that died leave the risk set), which is 1 at every time when no row
    is censored. ``entry``: each row's delayed entry; a row is at risk at t when
    entry < t <= time (``survival::survfit(Surv(entry, time, event) ~ 1)``)."""
    event = np.asarray(event, dtype=bool)
    time = np.asarray(time, dtype=np.float64)
    times, position = np.unique(time, return_inverse=True)
    if reverse and event.all():
        return times, np.ones(times.size)
    count = np.bincount(position, minlength=times.size)
    events = np.bincount(position, weights=event.astype(float), minlength=times.size)
    at_risk = time.size - np.concatenate([[0], np.cumsum(count)[:-1]])
    if entry is not None:
        if reverse:
            raise ValueError("the censoring distribution is estimated without entry times")
        entry = _checked_entry(entry, time)
        at_risk = at_risk - (time.size - np.searchsorted(np.sort(entry), times, side="left"))
    if reverse:
        at_risk, events = at_risk - events, count - events
    ratio = np.divide(events, at_risk, out=np.zeros(times.size), where=events != 0)
    return np.concatenate([[-np.inf], times]), np.concatenate([[1.0], np.cumprod(1.0 - ratio)])


def censoring_survival(event, time):
    """The censoring distribution's Kaplan-Meier estimate (:func:`kaplan_meier` reversed)."""
    return kaplan_meier(event, time, reverse=True)


def _censoring_at(estimate, time):
    """G at ``time`` (scikit-survival's ``predict_proba``: the step at or before each time;
    0 past the last time where G reached 0, else an error)."""
    times, probability = estimate
    time = np.asarray(time, dtype=np.float64)
    extends = time > times[-1]
    if probability[-1] > 0 and extends.any():
        raise ValueError(
            f"time must be smaller than the largest observed time point of the training "
            f"follow-up: {times[-1]:g}"
        )
    out = np.zeros(time.shape)
    index = np.searchsorted(times, time[~extends])
    exact = np.abs(times[np.minimum(index, times.size - 1)] - time[~extends]) < np.finfo(float).eps
    index[~exact] -= 1
    out[~extends] = probability[index]
    return out


def _survival_pair(survival_train, survival_test):
    """(train event, train time, test event, test time) for the metrics that weight by the
    training censoring: both follow-ups checked, each with an event (scikit-survival
    refuses them otherwise: no censoring distribution, or no pair to compare)."""
    train_event, train_time = check_survival_y(survival_train, len(survival_train))
    event, time = check_survival_y(survival_test, len(survival_test))
    for name, events in (("survival_train", train_event), ("survival_test", event)):
        if not events.any():
            raise ValueError(f"all samples of {name} are censored")
    return train_event, train_time, event, time


def _follow_up_at_times(survival_train, survival_test, times):
    """(train event, train time, test event, test time, times) for the time-dependent
    metrics: :func:`_survival_pair`'s, and the distinct ``times`` within the test
    follow-up [first time, last time[."""
    train_event, train_time, event, time = _survival_pair(survival_train, survival_test)
    times = np.unique(np.atleast_1d(np.asarray(times, dtype=np.float64)))
    if times.max() >= time.max() or times.min() < time.min():
        raise ValueError(
            f"all times must be within the test follow-up [{time.min():g}; {time.max():g}["
        )
    return train_event, train_time, event, time, times


def _inverse_censoring_weights(train_event, train_time, time, opens) -> np.ndarray:
    """1 / G(time) for the rows ``opens`` marks (events), 0 for the others, G the
    censoring distribution of the training follow-up (scikit-survival's
    ``predict_ipcw``)."""
    at_events = _censoring_at(censoring_survival(train_event, train_time), time[opens])
    if (at_events == 0).any():
        raise ValueError("the censoring survival function is zero at an event time")
    weights = np.zeros(time.size)
    weights[opens] = 1.0 / at_events
    return weights


def brier_score(survival_train, survival_test, estimate, times):
    """The time-dependent Brier score of predicted survival probabilities with inverse
    probability of censoring weights (Graf et al. 1999; scikit-survival's
    ``brier_score``): at each of ``times`` (distinct, within the test follow-up),
    mean over test rows of S^2 / G(y) for an event by t and (1 - S)^2 / G(t) for a row
    still followed at t, G the censoring distribution of ``survival_train``.
    ``estimate``: the predicted survival at ``times`` (n x len(times), e.g. a survival
    estimator's ``predict_survival_function`` at them). Returns (times, scores). With a
    field ``entry`` in ``survival_test`` (delayed entry), the score at t is the mean over
    the rows that had entered by t (entry 0 or before t): the others were not yet
    followed."""
    train_event, train_time, event, time, times = _follow_up_at_times(
        survival_train, survival_test, times
    )
    entered = _entered_by(survival_test, times)
    estimate = np.asarray(estimate, dtype=np.float64)
    if not np.isfinite(estimate).all():
        raise ValueError("estimate must hold finite survival probabilities (no NaN)")
    if estimate.ndim == 1 and times.size == 1:
        estimate = estimate.reshape(-1, 1)
    if estimate.shape != (time.size, times.size):
        raise ValueError(
            f"estimate has shape {estimate.shape}; expected ({time.size}, {times.size}): a "
            "survival probability per test row and time"
        )
    censoring = censoring_survival(train_event, train_time)
    at_times = _censoring_at(censoring, times)
    at_times[at_times == 0] = np.inf
    at_rows = _censoring_at(censoring, time)
    at_rows[at_rows == 0] = np.inf
    scores = np.empty(times.size)
    for i, t in enumerate(times):
        case = ((time <= t) & event).astype(int)
        control = (time > t).astype(int)
        scores[i] = np.mean(
            (
                np.square(estimate[:, i]) * case / at_rows
                + np.square(1.0 - estimate[:, i]) * control / at_times[i]
            )[entered[:, i]]
        )
    return times, scores


def _entered_by(y, times) -> np.ndarray:
    """(rows x times) whether each row of ``y`` had entered by each time: all True
    without an ``entry`` field; else entry 0 or entry < t."""
    _, entry = split_entry(y)
    n = len(y)
    if entry is None:
        return np.ones((n, np.size(times)), dtype=bool)
    entry = np.asarray(entry, dtype=np.float64)[:, None]
    return (entry == 0) | (entry < np.asarray(times)[None, :])


def integrated_brier_score(survival_train, survival_test, estimate, times) -> float:
    """The Brier score integrated over ``times`` by the trapezoidal rule, over their span
    (scikit-survival's ``integrated_brier_score``; at least two times)."""
    times, scores = brier_score(survival_train, survival_test, estimate, times)
    if times.size < 2:
        raise ValueError("At least two time points must be given")
    return float(np.trapezoid(scores, times) / (times[-1] - times[0]))


def concordance_index_ipcw(survival_train, survival_test, estimate, tau=None, tied_tol=1e-8):
    """Uno's concordance index (scikit-survival's ``concordance_index_ipcw``): Harrell's
    pairs weighted by the squared inverse probability of censoring at the earlier event
    (G from ``survival_train``), only events before ``tau`` opening pairs; unlike Harrell's,
    it does not depend on the censoring distribution."""
    train_event, train_time, event, time = _survival_pair(survival_train, survival_test)
    estimate = np.asarray(estimate, dtype=np.float64)
    if estimate.shape != time.shape:
        raise ValueError(f"estimate has shape {estimate.shape}; expected ({time.size},)")
    opens = event if tau is None else event & (time < tau)
    weights = _inverse_censoring_weights(train_event, train_time, time, opens)
    return concordance_index(event, time, estimate, tied_tol, np.square(weights))


def cumulative_dynamic_auc(survival_train, survival_test, estimate, times, tied_tol=1e-8):
    """The time-dependent AUC (scikit-survival's ``cumulative_dynamic_auc``): at each of
    ``times``, how well the risk ``estimate`` (n, or n x len(times)) ranks the rows with
    an event by t (cases, weighted by the inverse probability of censoring at their time,
    G from ``survival_train``) above the rows still followed after t (controls). Returns
    (AUC per time, their mean weighted by the test follow-up's Kaplan-Meier drops)."""
    train_event, train_time, event, time, times = _follow_up_at_times(
        survival_train, survival_test, times
    )
    estimate = np.asarray(estimate, dtype=np.float64)
    if not np.isfinite(estimate).all():
        raise ValueError("estimate must hold finite risk scores (no NaN)")
    if estimate.ndim == 1:
        estimate = np.broadcast_to(estimate[:, None], (time.size, times.size))
    if estimate.shape != (time.size, times.size):
        raise ValueError(
            f"estimate has shape {estimate.shape}; expected ({time.size}, {times.size})"
        )
    ipcw = _inverse_censoring_weights(train_event, train_time, time, event)
    scores = np.empty(times.size)
    for i, t in enumerate(times):
        order = np.argsort(-estimate[:, i], kind="stable")
        ranked = estimate[order, i]
        case = ((time[order] <= t) & event[order]) * ipcw[order]
        control = (time[order] > t).astype(float)
        true_positive = np.cumsum(case) / np.sum(case)
        false_positive = np.cumsum(control) / np.sum(control)
        # the last of each run of tied risks only: a threshold cannot part them
        tied = np.abs(np.diff(np.concatenate([[np.inf], ranked]))) <= tied_tol
        keep = np.ones(time.size, dtype=bool)
        keep[np.flatnonzero(tied) - 1] = False
        scores[i] = np.trapezoid(
            np.concatenate([[0.0], true_positive[keep]]),
            np.concatenate([[0.0], false_positive[keep]]),
        )
    if times.size == 1:
        return scores, float(scores[0])
    survival = _censoring_at(kaplan_meier(event, time), times)
    drops = -np.diff(np.concatenate([[1.0], survival]))
    return scores, float((scores * drops).sum() / (1.0 - survival[-1]))


def event_time_quartiles(event_times) -> np.ndarray:
    """The quartiles of the distinct ``event_times`` (each an event time: numpy's inverted
    distribution function), distinct: the default times of ``treekit predict`` (on a
    model's training event times) and ``treekit evaluate`` (on the file's), so the two
    agree on the training file."""
    distinct = np.unique(np.asarray(event_times, dtype=np.float64))
    if distinct.size == 0:
        return distinct
    return np.unique(np.quantile(distinct, [0.25, 0.5, 0.75], method="inverted_cdf"))


def event_quartiles(y) -> np.ndarray:
    """The times the survival figures are read at: :func:`event_time_quartiles` of the
    event times of follow-up ``y``, those within it ([first time, last time[)."""
    event, time = check_survival_y(y, len(y))
    times = event_time_quartiles(time[event])
    return times[(times >= time.min()) & (times < time.max())]


def survival_figures(y, risk, survival, times) -> dict:
    """What ``treekit evaluate`` and the HTML report show of a survival model on follow-up
    ``y``: rows, events, Harrell's and Uno's concordance of ``risk``, and, with two or more
    ``times`` (``survival``: the predicted survival at them, n x len(times)), the integrated
    Brier score and the mean time-dependent AUC there. The rows' own follow-up gives the
    censoring weights."""
    event, time = check_survival_y(y, len(y))
    if not event.any():
        raise ValueError(
            f"the follow-up evaluated holds no event (all {time.size} rows censored): "
            "no concordance, Brier score or AUC is defined"
        )
    figures = {
        "rows": int(time.size),
        "events": int(event.sum()),
        "Harrell's concordance": concordance_index(event, time, risk),
        "Uno's concordance": concordance_index_ipcw(y, y, risk),
    }
    if len(times) >= 2:
        figures["integrated Brier score"] = integrated_brier_score(y, y, survival, times)
        figures["time-dependent AUC (mean)"] = cumulative_dynamic_auc(y, y, risk, times)[1]
    return figures


@attrs.frozen
class TestResult:
    """A two- or K-sample test: its chi-squared statistic, p-value and degrees of freedom."""

    statistic: float
    p_value: float
    df: int


def _group_codes(groups, n: int) -> tuple[np.ndarray, np.ndarray]:
    groups = np.asarray(groups)
    if groups.shape != (n,):
        raise ValueError(f"groups has shape {groups.shape}; expected ({n},), one per row of y")
    labels, codes = np.unique(groups, return_inverse=True)
    if labels.size < 2:
        raise ValueError(f"groups holds {labels.size} group; a test compares at least 2")
    return labels, codes


def _checked_entry(entry, time) -> np.ndarray | None:
    if entry is None:
        return None
    entry = np.asarray(entry, dtype=np.float64)
    if entry.shape != time.shape:
        raise ValueError(f"entry has shape {entry.shape}; expected {time.shape}, one per row")
    bad = ~np.isfinite(entry) | (entry < 0) | (entry >= time)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"entry[{row}] is {float(entry[row])!r} and the row's time {float(time[row])!r}: a "
            "row enters at a finite time >= 0 before its follow-up ends"
        )
    return entry


def _chi_squared(statistic: float, df: int) -> TestResult:
    from scipy.special import chdtrc

    p_value = float(chdtrc(df, statistic)) if df > 0 else 1.0
    return TestResult(float(statistic), p_value, int(df))


def logrank_test(y, groups, cause=None, entry=None) -> TestResult:
    """The K-sample log-rank test of ``groups`` on follow-up ``y`` (time and event, or an
    event code: :func:`~treekit_core.engine.validation.check_event_codes`): of any event
    (``cause`` None), or of one cause's cause-specific hazard, the other causes censoring.
    ``entry``: each row's delayed entry (left truncation); a row is at risk from its entry
    on. Equal to ``survival::survdiff``'s chisq without entry times (groups expecting no
    event left out, as it leaves them); with them, the Cox score test with exact ties."""
    time, code = check_event_codes(y)
    _, codes = _group_codes(groups, time.size)
    event = code > 0 if cause is None else code == int(cause)
    difference, covariance, expected = logrank_scores(
        time, event, codes, _checked_entry(entry, time)
    )
    # groups expecting no event are left out (survdiff), and so are groups whose score has
    # no variance: with delayed entry every event time may find all at risk failing (each
    # d (n - d) = 0), where the test carries no information and the matrix is singular
    kept = np.flatnonzero((expected > 0) & (np.diag(covariance) > 0))
    if kept.size < 2:
        return TestResult(0.0, 1.0, max(int(kept.size) - 1, 0))
    kept = kept[1:]  # survdiff leaves the first group out of the quadratic form
    statistic = difference[kept] @ np.linalg.solve(covariance[np.ix_(kept, kept)], difference[kept])
    return _chi_squared(statistic, kept.size)


def gray_test(y, groups, cause: int) -> TestResult:
    """Gray's K-sample test that ``cause`` has the same cumulative incidence in every group
    (the other causes competing), as ``cmprsk::cuminc(...)$Tests`` computes it (rho = 0,
    one stratum)."""
    time, code = check_event_codes(y)
    labels, codes = _group_codes(groups, time.size)
    scores, covariance = gray_scores(time, code, codes, int(cause))
    if np.linalg.matrix_rank(covariance) < covariance.shape[0]:
        return TestResult(-1.0, 1.0, int(labels.size - 1))  # cmprsk's -1: no test
    return _chi_squared(scores @ np.linalg.solve(covariance, scores), labels.size - 1)


def cumulative_incidence(y, cause: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(times, incidence, variance): the Aalen-Johansen cumulative incidence of ``cause``
    just after each of its event times, and Gray's variance, as ``cmprsk::cuminc``."""
    time, code = check_event_codes(y)
    return aalen_johansen(time, code, int(cause))


def concordance_index_cause(y, estimate, cause: int, tied_tol: float = 1e-8) -> float:
    """The concordance of a risk score (higher: riskier) for ``cause`` under competing
    risks (Wolbers et al. 2009): among the pairs where one row ended in ``cause`` and the
    other was still free of any event after that time or ended in another cause, the share
    where the first has the higher ``estimate`` (ties 1/2). ``y`` as
    :func:`logrank_test` reads it (time and an event code)."""
    time, code = check_event_codes(y)
    estimate = np.asarray(estimate, dtype=np.float64)
    if estimate.shape != time.shape:
        raise ValueError(f"estimate has shape {estimate.shape}; expected ({time.size},)")
    cause = _checked_cause(cause, code)
    return _concordance_of_cause(time, code, estimate, cause, tied_tol)


def _checked_cause(cause, code) -> int:
    if isinstance(cause, bool) or not isinstance(cause, (int, np.integer)) or cause < 1:
        raise ValueError(f"cause must be an event code >= 1, got {cause!r}")
    if not (code == cause).any():
        raise ValueError(f"y holds no event of cause {int(cause)}")
    return int(cause)


def brier_score_cause(y_train, y_test, estimate, times, cause: int):
    """The time-dependent Brier score of predicted cumulative incidences of ``cause``
    (competing risks; Graf et al.'s censoring weights as :func:`brier_score` uses them):
    at each of ``times``, the mean over test rows of (1{T <= t, cause} - F(t))^2 / G(T)
    for a row whose event (of any cause) came by t, F(t)^2 / G(t) for a row still followed
    at t, and 0 for a row censored before t; G the censoring distribution of ``y_train``.
    ``estimate``: each test row's incidence of ``cause`` at ``times`` (n x len(times), as
    ``predict_cumulative_incidence(X, cause, times)`` gives it). With one cause it is
    :func:`brier_score` of the survival 1 - F. Returns (times, scores). An ``entry`` field
    of ``y_test`` limits each time's mean to the rows entered by then, as
    :func:`brier_score`."""
    train_time, train_code = check_event_codes(y_train)
    time, code = check_event_codes(y_test)
    cause = _checked_cause(cause, code)
    times = np.unique(np.atleast_1d(np.asarray(times, dtype=np.float64)))
    if times.max() >= time.max() or times.min() < time.min():
        raise ValueError(
            f"all times must be within the test follow-up [{time.min():g}; {time.max():g}["
        )
    estimate = np.asarray(estimate, dtype=np.float64)
    if estimate.ndim == 1 and times.size == 1:
        estimate = estimate.reshape(-1, 1)
    if estimate.shape != (time.size, times.size) or not np.isfinite(estimate).all():
        raise ValueError(
            f"estimate has shape {estimate.shape}; expected ({time.size}, {times.size}) "
            "finite incidences: one per test row and time"
        )
    censoring = censoring_survival(train_code > 0, train_time)
    at_times = _censoring_at(censoring, times)
    at_times[at_times == 0] = np.inf
    at_rows = _censoring_at(censoring, time)
    at_rows[at_rows == 0] = np.inf
    ended = code > 0
    entered = _entered_by(y_test, times)
    scores = np.empty(times.size)
    for i, t in enumerate(times):
        case = (time <= t) & ended
        control = time > t
        outcome = (case & (code == cause)).astype(np.float64)
        scores[i] = np.mean(
            (
                np.square(outcome - estimate[:, i]) * case / at_rows
                + np.square(estimate[:, i]) * control / at_times[i]
            )[entered[:, i]]
        )
    return times, scores


def competing_figures(y, risk, incidences, times) -> dict:
    """What ``treekit evaluate`` and the HTML report show of a competing-risk model on
    follow-up ``y`` (time and event code): the rows and events, and per cause with an
    event among them its Wolbers concordance (:func:`concordance_index_cause`) of its
    column of ``risk`` (n x causes, ``predict``'s) and the Brier score
    (:func:`brier_score_cause`) of its incidence at each of ``times`` (``incidences``:
    causes x n x len(times))."""
    time, code = check_event_codes(y)
    risk = np.asarray(risk, dtype=np.float64)
    figures = {"rows": float(time.size), "events": float((code > 0).sum())}
    for k in range(1, risk.shape[1] + 1):
        if not (code == k).any():
            continue
        figures[f"cause {k} events"] = float((code == k).sum())
        figures[f"cause {k} concordance (Wolbers)"] = concordance_index_cause(y, risk[:, k - 1], k)
        _, scores = brier_score_cause(y, y, incidences[k - 1], times, k)
        for t, score in zip(np.unique(times), scores, strict=True):
            figures[f"cause {k} Brier score at {t:g}"] = float(score)
    return figures
