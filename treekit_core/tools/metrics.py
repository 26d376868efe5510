"""Diagnostic figures (Cambridge handout): sensitivity, specificity, PPV, NPV, accuracy.

Figures are computed on the samples the estimator decided; abstentions are counted apart and
reported as coverage = decided / all. For K classes every class is taken one-vs-rest.
"""

from __future__ import annotations

import attrs
import numpy as np


def _ratio(num: float, den: float) -> float:
    return float(num) / float(den) if den > 0 else float("nan")


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

    def to_text(self, digits: int = 3) -> str:
        width = max(12, max(len(str(c)) for c in self.classes) + 2)
        head = (
            f"{'class':>{width}} {'sensitivity':>12} {'specificity':>12} "
            f"{'PPV':>8} {'NPV':>8} {'support':>8}"
        )
        lines = [head]
        for f in self.per_class:
            lines.append(
                f"{str(f.label):>{width}} {f.sensitivity:>12.{digits}f} "
                f"{f.specificity:>12.{digits}f} "
                f"{f.ppv:>8.{digits}f} {f.npv:>8.{digits}f} {f.support:>8g}"
            )
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
