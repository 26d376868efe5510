"""Curves as functions of time, as scikit-survival returns them, and the warning for
times past the training follow-up."""

from __future__ import annotations

import warnings

import numpy as np


class StepFunction:
    """A right-continuous step function on the training grid (scikit-survival's
    ``StepFunction``): ``f(t)`` is the value at the last grid time <= t; before the first,
    ``before`` (0 for a cumulative hazard, 1 for a survival function)."""

    def __init__(self, x, y, before=0.0):
        self.x, self.y, self.before = np.asarray(x), np.asarray(y), before

    def __call__(self, t):
        t = np.asarray(t, dtype=np.float64)
        position = np.searchsorted(self.x, t, side="right") - 1
        values = np.where(position >= 0, self.y[np.maximum(position, 0)], self.before)
        return values if values.ndim else float(values)

    def __repr__(self):
        return f"StepFunction(x={self.x!r}, y={self.y!r})"


class FollowUpWarning(UserWarning):
    """A prediction asked at times past the last training time: the curves there are
    their last value, which no training row observed."""


def warn_past_follow_up(times, grid) -> None:
    """Warn once (:class:`FollowUpWarning`) where some of ``times`` lie past the last time
    of ``grid``, the training times."""
    last = float(grid[-1]) if len(grid) else 0.0
    past = np.asarray(times)[np.asarray(times) > last]
    if past.size:
        warnings.warn(
            f"{past.size} of the times asked ({_listed(past)}) lie past the last training "
            f"time {last:g}: the curves are held at their last value there, which no "
            "training row observed",
            FollowUpWarning,
            stacklevel=3,
        )


def _listed(values, most: int = 3) -> str:
    shown = ", ".join(f"{v:g}" for v in values[:most])
    return shown + (", ..." if len(values) > most else "")
