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

from treekit_core.estimators.regression import r2_score


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
