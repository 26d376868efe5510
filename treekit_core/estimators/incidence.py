"""What a survival estimator predicts when its target holds several causes of event (the
``competing_risks`` target, capability ``cumulative_incidence``; issue 62): each cause's
cumulative incidence and cause-specific cumulative hazard, as step functions on the
training grid or at the times asked."""

from __future__ import annotations

import numpy as np

from treekit_core.estimators.step_functions import StepFunction, warn_past_follow_up


class IncidencePredictions:
    """Placed in the survival family: ``predict_cumulative_incidence`` and
    ``predict_cause_specific_hazard``, refused (naming the target) where the target
    keeps one kind of event."""

    def _cause_target(self, cause):
        """(the target, ``cause`` checked against the causes it was fitted on)."""
        self._check_fitted()
        target = self.composition_.target
        if "cumulative_incidence" not in target.provides:
            raise ValueError(
                f"{type(self).__name__} was fitted with target {target.name!r}, which keeps "
                "one kind of event: fit with target='competing_risks' for the incidence of "
                "each cause"
            )
        state = self._trees()[0].component_state.get("target", {})
        return target, target.check_cause(state, cause)

    def _cause_curves(self, X, cause, kind, times, return_array):
        target, cause = self._cause_target(cause)
        if times is not None:
            times = np.asarray(times, dtype=np.float64).reshape(-1)
            if not np.isfinite(times).all():
                raise ValueError("times must be finite numbers (no NaN or infinity)")
            warn_past_follow_up(times, self.unique_times_)
        with self._checked_for_predict(X) as checked:
            mixtures = (self._mixtures(tree, checked) for tree in self._trees())
            curves = self._mixed_target_curves(
                mixtures,
                "incidence" if kind == "incidence" else "hazard",
                checked.shape[0],
                times,
                lambda state, tree, nodes, grid: target.cause_curves(
                    state, tree, nodes, grid, cause, kind
                ),
                lambda state, tree, nodes: target.cause_steps(state, tree, nodes, cause, kind),
            )
        if times is not None:
            curves[:, times < self.unique_times_[0]] = 0.0  # exactly, not a sum of shares
            return curves
        if return_array:
            return curves
        grid = self.unique_times_
        return np.array([StepFunction(grid, c, 0.0) for c in curves], dtype=object)

    def predict_cumulative_incidence(self, X, cause=1, times=None, return_array=False):
        """Every sample's cumulative incidence of ``cause`` (an event code the model was
        fitted on): its leaf's Aalen-Johansen curve (the mixture of the leaves it reaches),
        averaged over the trees. With ``times``, an n x len(times) array of the curves'
        values at the last training time <= each (0 before the first; a time past the last
        training time warns, :class:`FollowUpWarning`); without, one :class:`StepFunction`
        per sample on ``unique_times_`` (the n x len(unique_times_) array with
        ``return_array``)."""
        return self._cause_curves(X, cause, "incidence", times, return_array)

    def predict_cause_specific_hazard(self, X, cause=1, times=None, return_array=False):
        """Every sample's cause-specific cumulative hazard of ``cause`` (Nelson-Aalen, the
        other causes censoring), as :meth:`predict_cumulative_incidence` returns curves."""
        return self._cause_curves(X, cause, "cause_hazard", times, return_array)
