"""Calibrating any confidence to P(the decision is correct | score).

Tóth & Pataki want "a confidence number to every classification"; a score such as the
boundary distance ranks decisions but is no probability. With ``calibration=`` an estimator
learns, from out-of-fold scores (K-fold cross-validation of its own composition, as the
rejection rules do), a monotone map from the score to the probability that the decision is
correct, and ``decide()`` reports it as ``p_correct``:

* ``"isotonic"``: pool-adjacent-violators on the (score, correct) pairs, non-decreasing,
  linear between the pooled blocks' mean scores and constant beyond them;
* ``"platt"``: a logistic curve ``1 / (1 + exp(-(a * score + b)))`` fitted by maximum
  likelihood (Platt's targets ``(n+ + 1) / (n+ + 2)`` and ``1 / (n- + 2)`` keep it finite on
  separable data).
"""

from __future__ import annotations

import math
import numbers

import attrs
import numpy as np

METHODS = ("isotonic", "platt")


def _folds(instance, attribute, value):
    if not (isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 2):
        raise ValueError(f"calibration cv must be an int >= 2, got {value!r}")


@attrs.frozen
class CalibrationRule:
    """How to calibrate: ``method`` ("isotonic" or "platt"), ``cv`` folds, fold ``seed``."""

    method: str = attrs.field(validator=attrs.validators.in_(METHODS))
    cv: int = attrs.field(default=5, validator=_folds)
    seed: int = 0

    @classmethod
    def from_param(cls, value) -> "CalibrationRule | None":
        if value is None or isinstance(value, CalibrationRule):
            return value
        if isinstance(value, str):
            if value not in METHODS:
                raise ValueError(f"calibration must be one of {METHODS} or a dict, got {value!r}")
            return cls(method=value)
        if isinstance(value, dict):
            unknown = set(value) - {"method", "cv", "seed"}
            if unknown:
                raise ValueError(
                    f"calibration has unknown keys {sorted(unknown)}; known: method, cv, seed"
                )
            try:
                return cls(**value)
            except TypeError as exc:
                raise ValueError(f"calibration needs a method: {exc}") from None
        raise ValueError(f"calibration must be None, 'isotonic', 'platt' or a dict, got {value!r}")


def isotonic_points(scores, correct, weights) -> tuple[np.ndarray, np.ndarray]:
    """(mean score, P(correct)) of the pooled blocks of a weighted non-decreasing fit of
    ``correct`` (booleans, or any numbers: their fitted mean) on ``scores``."""
    order = np.argsort(scores, kind="stable")
    x, y, w = scores[order], correct[order].astype(np.float64), weights[order]
    # equal scores form one point first
    values, start = np.unique(x, return_index=True)
    w_sum = np.add.reduceat(w, start)
    y_mean = np.add.reduceat(w * y, start) / w_sum
    blocks = []  # [weight, weighted mean of y, weighted sum of x]
    for xv, yv, wv in zip(values, y_mean, w_sum, strict=True):
        blocks.append([wv, yv, wv * xv])
        while len(blocks) > 1 and blocks[-2][1] > blocks[-1][1]:
            w2, y2, x2 = blocks.pop()
            w1, y1, x1 = blocks.pop()
            blocks.append([w1 + w2, (w1 * y1 + w2 * y2) / (w1 + w2), x1 + x2])
    points_x = np.array([b[2] / b[0] for b in blocks])
    points_y = np.array([b[1] for b in blocks])
    return points_x, points_y


def platt_parameters(scores, correct, weights) -> tuple[float, float]:
    """(a, b) of P = 1 / (1 + exp(-(a s + b))), maximum likelihood with Platt's targets."""
    from scipy.optimize import minimize

    positives = float(weights[correct].sum())
    negatives = float(weights[~correct].sum())
    target = np.where(correct, (positives + 1) / (positives + 2), 1 / (negatives + 2))
    spread = float(np.std(scores)) or 1.0
    centre = float(np.mean(scores))
    z = (scores - centre) / spread  # fit on a standard scale, then map back

    def loss(theta):
        margin = theta[0] * z + theta[1]
        log_p = -np.logaddexp(0.0, -margin)
        log_q = -np.logaddexp(0.0, margin)
        value = -(weights * (target * log_p + (1 - target) * log_q)).sum()
        p = np.exp(log_p)
        residual = weights * (p - target)
        return value, np.array([(residual * z).sum(), residual.sum()])

    result = minimize(loss, np.zeros(2), jac=True, method="L-BFGS-B")
    a, b = result.x
    return float(a / spread), float(b - a * centre / spread)


@attrs.frozen
class Calibration:
    """A fitted map from confidence score to P(correct); stored in model files."""

    method: str
    points_x: np.ndarray = attrs.field(factory=lambda: np.zeros(0))
    points_y: np.ndarray = attrs.field(factory=lambda: np.zeros(0))
    a: float = 0.0
    b: float = 0.0

    @classmethod
    def fit(cls, method, scores, correct, weights=None) -> "Calibration":
        scores = np.asarray(scores, dtype=np.float64)
        correct = np.asarray(correct, dtype=bool)
        weights = np.ones(scores.size) if weights is None else np.asarray(weights, float)
        finite = np.isfinite(scores)
        if not finite.any():
            raise ValueError("calibration needs finite confidence scores; none were finite")
        # an infinite score (a point far from every boundary) calibrates like the largest
        top = scores[finite].max()
        scores = np.where(np.isposinf(scores), top, np.where(np.isneginf(scores), -top, scores))
        if method == "isotonic":
            x, y = isotonic_points(scores, correct, weights)
            return cls(method, x, y)
        a, b = platt_parameters(scores, correct, weights)
        return cls(method, a=a, b=b)

    def p_correct(self, scores) -> np.ndarray:
        scores = np.asarray(scores, dtype=np.float64)
        if self.method == "isotonic":
            x, y = self.points_x, self.points_y
            clipped = np.clip(np.nan_to_num(scores, posinf=x[-1], neginf=x[0]), x[0], x[-1])
            return np.interp(clipped, x, y)
        margin = self.a * np.nan_to_num(scores, posinf=1e300, neginf=-1e300) + self.b
        return np.exp(-np.logaddexp(0.0, -margin))

    def to_dict(self) -> dict:
        return {
            "method": self.method,
            "points_x": self.points_x.tolist(),
            "points_y": self.points_y.tolist(),
            "a": self.a,
            "b": self.b,
        }

    @classmethod
    def from_dict(cls, payload) -> "Calibration":
        """Read a model file's ``calibration`` field, every part checked."""
        where = "model file: calibration"
        if not isinstance(payload, dict) or payload.get("method") not in METHODS:
            raise ValueError(f"{where}: 'method' must be one of {METHODS}")
        try:
            x = np.asarray(payload.get("points_x", []), dtype=np.float64)
            y = np.asarray(payload.get("points_y", []), dtype=np.float64)
            a, b = float(payload.get("a", 0.0)), float(payload.get("b", 0.0))
        except (TypeError, ValueError):
            raise ValueError(f"{where}: points and a, b must be numbers") from None
        if payload["method"] == "isotonic":
            if x.ndim != 1 or x.shape != y.shape or x.size == 0:
                raise ValueError(f"{where}: points_x and points_y must be equal, non-empty lists")
            if not (np.isfinite(x).all() and np.isfinite(y).all()) or (np.diff(x) < 0).any():
                raise ValueError(f"{where}: points_x must rise and every point be finite")
            if ((y < 0) | (y > 1)).any() or (np.diff(y) < 0).any():
                raise ValueError(f"{where}: points_y must be non-decreasing probabilities")
        elif not (math.isfinite(a) and math.isfinite(b)):
            raise ValueError(f"{where}: a and b must be finite")
        return cls(payload["method"], x, y, a, b)
