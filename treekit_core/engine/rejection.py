"""Rejecting risky decisions: a threshold on any confidence score, and risk-coverage curves.

A sample is accepted when its confidence is >= the threshold, else the estimator abstains.
The threshold is given directly or chosen on training data (resubstitution, as Tóth &
Pataki) or on out-of-fold predictions (K-fold cross-validation, honest) by one rule:

* ``keep_correct=q``: keep a fraction q of the correctly classified samples (the paper's
  rule). Scores are ranked; tied scores are kept or rejected together, so the kept fraction
  is the smallest achievable fraction >= q.
* ``coverage=c``: accept a fraction c of all samples. Where the rows of a leaf share one
  score, coverage moves in steps (accepting a leaf accepts all its rows): the rule takes
  the reachable step nearest to c (accepting none and accepting all are steps too; on a
  tie, the larger coverage).
* ``max_error=e``: the lowest threshold (largest coverage) whose error on the accepted
  samples is <= e.

With ``cv=K`` the rule is applied to out-of-fold scores (keep_correct and max_error need
to know which decisions are correct, honestly); what it chose is carried to the final
model as a *coverage* of rows it has not seen (a coverage rule asks for one directly). The
out-of-fold threshold itself does not carry over: the final model is fitted on more rows
and its scores differ (a pruned tree's leaves are purer than its folds'). The final model
takes the step of its own training scores whose coverage of unseen rows, as the fold
copies show it (``OutOfFold.held_out_coverage`` in the estimators), is nearest.
"""

from __future__ import annotations

import math
import numbers

import attrs
import numpy as np


def _fraction(instance, attribute, value):
    if value is not None and not (isinstance(value, numbers.Real) and 0.0 <= value <= 1.0):
        raise ValueError(f"reject {attribute.name} must be a fraction in [0, 1], got {value!r}")


def _folds(instance, attribute, value):
    if value is not None and not (isinstance(value, numbers.Integral) and value >= 2):
        raise ValueError(f"reject cv must be None (training data) or an int >= 2, got {value!r}")


@attrs.frozen
class RejectRule:
    threshold: float | None = None
    keep_correct: float | None = attrs.field(default=None, validator=_fraction)
    coverage: float | None = attrs.field(default=None, validator=_fraction)
    max_error: float | None = attrs.field(default=None, validator=_fraction)
    cv: int | None = attrs.field(default=None, validator=_folds)
    seed: int = 0

    def __attrs_post_init__(self):
        if self.threshold is not None and not (
            isinstance(self.threshold, numbers.Real) and math.isfinite(self.threshold)
        ):
            raise ValueError(f"reject threshold must be a finite number, got {self.threshold!r}")
        chosen = [
            name
            for name in ("threshold", "keep_correct", "coverage", "max_error")
            if getattr(self, name) is not None
        ]
        if len(chosen) != 1:
            raise ValueError(
                "reject needs exactly one of threshold, keep_correct, coverage, max_error; "
                f"got {chosen or 'none'}"
            )

    def describe(self) -> str:
        """The rule as its settings, for messages (``max_error=0.05, cv=5``)."""
        return ", ".join(
            f"{name}={value!r}"
            for name, value in attrs.asdict(self).items()
            if value is not None and name != "seed"
        )

    @classmethod
    def from_param(cls, value) -> "RejectRule | None":
        if value is None or isinstance(value, RejectRule):
            return value
        if isinstance(value, numbers.Real):
            return cls(threshold=float(value))
        if isinstance(value, dict):
            unknown = set(value) - {f.name for f in attrs.fields(cls)}
            if unknown:
                raise ValueError(
                    f"reject has unknown keys {sorted(unknown)}; known: "
                    f"threshold, keep_correct, coverage, max_error, cv, seed"
                )
            return cls(**value)
        raise ValueError(f"reject must be None, a threshold, a dict or a RejectRule, got {value!r}")

    def choose(self, scores, correct, weights=None) -> float:
        if self.threshold is not None:
            return float(self.threshold)
        if self.keep_correct is not None:
            return keep_fraction_threshold(
                scores[correct], self.keep_correct, None if weights is None else weights[correct]
            )
        if self.coverage is not None:
            return coverage_threshold(scores, self.coverage, weights)
        return max_error_threshold(scores, correct, self.max_error, weights)


def accepted_fraction(scores, thresholds, weights=None):
    """The weight fraction of ``scores`` >= each of ``thresholds`` (a number for a number,
    an array for an array): one sort, then a binary search per threshold."""
    scores = np.asarray(scores, dtype=np.float64)
    weights = np.ones(scores.size) if weights is None else np.asarray(weights, dtype=np.float64)
    order = np.argsort(scores, kind="stable")
    # at_or_above[i]: the weight of the sorted scores from position i on
    at_or_above = np.append(np.cumsum(weights[order][::-1])[::-1], 0.0)
    total = at_or_above[0]
    found = at_or_above[np.searchsorted(scores[order], thresholds, side="left")]
    fractions = found / total if total > 0 else np.zeros_like(found)
    return float(fractions) if np.ndim(thresholds) == 0 else fractions


def score_steps(scores, weights=None):
    """(thresholds, coverages): every distinct score, ascending, then +inf (accept none),
    each with the weight fraction of ``scores`` at or above it. Rows sharing a score (a
    leaf's) are accepted or rejected together, so these are the coverages reachable."""
    scores = np.asarray(scores, dtype=np.float64)
    weights = np.ones(scores.size) if weights is None else np.asarray(weights, dtype=np.float64)
    values, inverse = np.unique(scores, return_inverse=True)
    mass = np.bincount(inverse, weights=weights, minlength=values.size)
    kept = np.cumsum(mass[::-1])[::-1] / mass.sum()  # kept[j]: fraction with score >= values[j]
    return np.append(values, np.inf), np.append(kept, 0.0)


def nearest_step(coverages, wanted: float, larger=None) -> int:
    """The index of the coverage nearest to ``wanted``; on a tie, the one whose ``larger``
    (default: the coverage itself) is largest."""
    coverages = np.asarray(coverages, dtype=np.float64)
    larger = coverages if larger is None else np.asarray(larger)
    distance = np.abs(coverages - wanted)
    nearest = np.flatnonzero(distance <= distance.min() + 1e-12)
    return int(nearest[np.argmax(larger[nearest])])


def coverage_threshold(scores, fraction, weights=None) -> float:
    """The threshold whose coverage (weight fraction of ``scores`` >= it) is the reachable
    step nearest to ``fraction``: a score value, or +inf (accept none); on a tie between
    two steps, the larger coverage."""
    if np.size(scores) == 0:
        return -np.inf
    thresholds, coverages = score_steps(scores, weights)
    return float(thresholds[nearest_step(coverages, fraction)])


def keep_fraction_threshold(scores, fraction, weights=None) -> float:
    """The largest threshold t (a score value) that keeps a weight fraction >= ``fraction``
    of ``scores`` with score >= t; ties fall on the same side."""
    if np.size(scores) == 0:
        return -np.inf
    thresholds, coverages = score_steps(scores, weights)
    eligible = np.flatnonzero(coverages[:-1] >= fraction - 1e-12)
    return float(thresholds[eligible[-1]] if eligible.size else thresholds[0])


def max_error_threshold(scores, correct, max_error, weights=None) -> float:
    scores = np.asarray(scores, dtype=np.float64)
    weights = np.ones(scores.size) if weights is None else np.asarray(weights, dtype=np.float64)
    values, inverse = np.unique(scores, return_inverse=True)
    errors = np.bincount(
        inverse, weights=weights * ~np.asarray(correct, bool), minlength=values.size
    )
    mass = np.bincount(inverse, weights=weights, minlength=values.size)
    accepted_errors = np.cumsum(errors[::-1])[::-1]
    accepted = np.cumsum(mass[::-1])[::-1]
    ok = np.flatnonzero(accepted_errors <= max_error * accepted + 1e-12)
    return float(values[ok[0]]) if ok.size else np.inf


@attrs.frozen
class RiskCoverage:
    """Error on the accepted samples (risk) against the fraction accepted (coverage), as
    the threshold sweeps the scores from high to low."""

    thresholds: np.ndarray
    coverage: np.ndarray
    risk: np.ndarray

    @property
    def area(self) -> float:
        """Area under the risk-coverage curve (lower is better), by the trapezoid rule."""
        return (
            float(np.trapezoid(self.risk, self.coverage))
            if self.coverage.size > 1
            else float(self.risk[0])
        )


def risk_coverage(scores, correct, weights=None) -> RiskCoverage:
    scores = np.asarray(scores, dtype=np.float64)
    weights = np.ones(scores.size) if weights is None else np.asarray(weights, dtype=np.float64)
    values, inverse = np.unique(scores, return_inverse=True)
    mass = np.bincount(inverse, weights=weights, minlength=values.size)[::-1]
    errors = np.bincount(
        inverse, weights=weights * ~np.asarray(correct, bool), minlength=values.size
    )[::-1]
    accepted = np.cumsum(mass)
    return RiskCoverage(values[::-1], accepted / weights.sum(), np.cumsum(errors) / accepted)
