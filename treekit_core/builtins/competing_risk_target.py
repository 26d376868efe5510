"""The competing-risks target (issue 62): follow-up that ends in one of several kinds of
event, each leaf holding the Aalen-Johansen cumulative incidence of every cause and the
cause-specific Nelson-Aalen hazards (:func:`~treekit_core.builtins.survival_curves.leaf_jumps`
with ``cause``), beside the all-cause curves a survival tree keeps.

A row of ``y`` is a time and an event code (0 censored, 1..K the cause), and optionally a
delayed entry. The target's rows are (any event, time, entry, event code, cause 1 event,
..., cause K event), so the all-cause columns are the survival target's (the ``logrank``
criterion splits on any event, and with one cause the tree is the survival target's),
``logrank_cause`` reads the column of its cause, or, for every cause combined, the codes.
"""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.builtins.survival_curves import (
    curve_steps,
    curves_at_times,
    integrated_curves,
    jumps_of_nodes,
    leaf_jumps,
    unique_times,
)
from treekit_core.builtins.targets import SurvivalCurves, check_statistics_width
from treekit_core.components import TargetRows
from treekit_core.components.base import state_array
from treekit_core.engine.validation import check_entry, check_event_codes, split_entry

#: The column of the target's rows that holds each row's event code (0 censored).
CODE_COLUMN = 3
#: Columns of the target's rows before the first cause's: (any event, time, entry, code).
CAUSE_COLUMN_OFFSET = 4


def n_causes_of(n_columns: int) -> int:
    """The number of causes the target's rows (or a node's statistics) of ``n_columns``
    columns hold."""
    return n_columns - CAUSE_COLUMN_OFFSET


def cause_column(cause: int) -> int:
    """The column of the target's rows that holds cause ``cause``'s events."""
    return CAUSE_COLUMN_OFFSET + int(cause) - 1


@attrs.define(slots=False)
class CompetingRisks(SurvivalCurves):
    """Follow-up ending in one of K kinds of event (competing risks): ``y`` a time and an
    event code per row (0 censored, 1..K the cause) as two columns (time, event), a frame
    with columns ``time`` and ``event`` (or ``status``), or a structured array with those
    fields, and optionally each row's delayed entry (``fit(..., entry=)`` or a field
    ``entry``). A node's statistics are the weighted sums of its rows (any event, time,
    entry, event code, one event column per cause). A leaf keeps, on the grid of every
    distinct training time, the all-cause Nelson-Aalen and Kaplan-Meier curves (as the
    ``survival`` target), and per cause the Aalen-Johansen cumulative incidence
    F_k(t) = sum_{t_j <= t} S(t_j-) d_kj / n_j and the cause-specific hazard
    sum_{t_j <= t} d_kj / n_j (cmprsk's ``cuminc`` with unit weights). ``predict`` gives
    per cause the incidence integrated to the last training time (the expected time lost
    to the cause, randomForestSRC's ``predicted``)."""

    name: ClassVar[str] = "competing_risks"
    description: ClassVar[str] = (
        "follow-up ending in one of several causes: Aalen-Johansen incidence per cause and leaf"
    )
    provides: ClassVar[frozenset] = SurvivalCurves.provides | {"cumulative_incidence"}

    def encode(self, y, n_samples, entry=None, **given):
        y, field = split_entry(y)
        time, code = check_event_codes(y, n_samples)
        entry = check_entry(entry, time, field)
        if n_samples and not (code > 0).any():
            raise ValueError(
                "y holds no event: every one of its times is censored (event code 0), so no "
                "incidence can rise and no log-rank cut can be scored"
            )
        n_causes = int(code.max(initial=1))
        columns = [(code > 0).astype(np.float64), time, entry, code.astype(np.float64)]
        columns += [(code == k).astype(np.float64) for k in range(1, n_causes + 1)]
        return TargetRows(np.column_stack(columns), None)

    def fit_state(self, y, rows, tree, memberships):
        """The survival target's state (grid, event flags, all-cause jumps) and, per cause
        k, ``incidence_k`` and ``cause_hazard_k`` at the same jumps; ``n_causes``."""
        event, time = rows[:, 0] > 0, rows[:, 1]
        n_causes = n_causes_of(rows.shape[1])
        code = rows[:, CODE_COLUMN].astype(np.int64)
        grid, has_event = unique_times(event, time)
        jumps = leaf_jumps(
            event, time, grid, *memberships, tree.n_nodes, cause=code, entry=rows[:, 2]
        )
        return {
            "grid": grid,
            "is_event_time": has_event.astype(np.float64),
            "n_causes": float(n_causes),
            **jumps,
        }

    def strata(self, rows, labeler):
        """Folds and bootstrap samples keep the share of each cause (and of censoring)."""
        return rows[:, CODE_COLUMN].astype(np.int64)

    def state_of_nodes(self, state, nodes):
        """The runs of ``nodes``' jumps, the causes' curves with them."""
        causes = range(1, self.n_causes(state) + 1)
        keys = tuple(key for key in self.jump_keys if key in state) + tuple(
            f"{kind}_{k}" for k in causes for kind in ("incidence", "cause_hazard")
        )
        return jumps_of_nodes(state, nodes, keys)

    def n_causes(self, state) -> int:
        """The causes a fitted state holds."""
        return int(state["n_causes"])

    def check_cause(self, state, cause) -> int:
        """``cause`` as an int in 1..K, or a ValueError naming the parameter."""
        n_causes = self.n_causes(state)
        if isinstance(cause, bool) or not isinstance(cause, (int, np.integer)):
            raise ValueError(f"cause must be an event code 1..{n_causes}, got {cause!r}")
        if not 1 <= int(cause) <= n_causes:
            raise ValueError(
                f"cause is {int(cause)}; the model was fitted on event codes 1..{n_causes}"
            )
        return int(cause)

    def cause_curves(self, state, tree, nodes, grid, cause: int, kind: str):
        """Each of ``nodes``' ``kind`` curve of ``cause`` at the ``grid`` times (0 before
        the node's first event): ``"incidence"`` (Aalen-Johansen) or ``"cause_hazard"``
        (cause-specific Nelson-Aalen). Called by ``predict_cumulative_incidence`` and
        ``predict_cause_specific_hazard`` for a tree, or at times asked."""
        return curves_at_times(state, nodes, grid, f"{kind}_{cause}")

    def cause_steps(self, state, tree, nodes, cause: int, kind: str):
        """:meth:`cause_curves` as the nodes' steps (:func:`curve_steps`): what a forest's
        curves on the training grid mix. Called by the same predictions."""
        return curve_steps(state, nodes, f"{kind}_{cause}")

    def risk_scores(self, state, tree, nodes):
        """Per node (a row) and cause (a column): the cumulative incidence integrated from
        0 to the last training time, the expected time lost to that cause by then."""
        grid = np.asarray(state["grid"], dtype=np.float64)
        return np.column_stack(
            [
                integrated_curves(state, nodes, f"incidence_{k}", grid)
                for k in range(1, self.n_causes(state) + 1)
            ]
        )

    def check_state(self, state, tree) -> None:
        """The survival target's checks, then per cause: incidences in [0, 1] rising at a
        node's jumps and summing to at most 1 - the all-cause survival, cause-specific
        hazards rising and summing to the all-cause hazard."""
        if not state:
            return
        super().check_state(state, tree)
        n_causes = state_array(state, "n_causes", (), "target", minimum=1, integer=True)
        n_causes = int(n_causes)
        if n_causes != n_causes_of(tree.statistics.shape[1]):
            raise ValueError(
                f"model file: target.n_causes is {n_causes}; the tree's statistics hold "
                f"{n_causes_of(tree.statistics.shape[1])} causes"
            )
        starts = np.asarray(state["starts"], dtype=np.int64)
        total = int(starts[-1])
        incidence_sum = np.zeros(total)
        hazard_sum = np.zeros(total)
        for k in range(1, n_causes + 1):
            incidence = state_array(state, f"incidence_{k}", (total,), "target", minimum=0.0)
            hazard = state_array(state, f"cause_hazard_{k}", (total,), "target", minimum=0.0)
            incidence_sum += incidence
            hazard_sum += hazard
            for node in np.flatnonzero(np.diff(starts) > 0):
                part = slice(int(starts[node]), int(starts[node + 1]))
                if (np.diff(incidence[part]) < 0).any() or (np.diff(hazard[part]) < 0).any():
                    raise ValueError(
                        f"model file: target: node {node}'s incidence_{k} and cause_hazard_{k} "
                        "must not fall"
                    )
        survival = np.asarray(state["survival"], dtype=np.float64)
        if (incidence_sum > 1.0 - survival + 1e-9).any():
            raise ValueError(
                "model file: target: the causes' incidences sum past 1 - survival at some jump"
            )
        hazard = np.asarray(state["hazard"], dtype=np.float64)
        if (np.abs(hazard_sum - hazard) > 1e-9 * np.maximum(hazard, 1.0)).any():
            raise ValueError(
                "model file: target: the cause-specific hazards do not sum to the hazard"
            )

    def check_tree(self, tree, labels) -> None:
        """At least one cause: statistics (any event, follow-up, entry, code, one per cause),
        each >= 0, the causes' events summing to the events; one value per node."""
        width = tree.statistics.shape[1]
        if width < CAUSE_COLUMN_OFFSET + 1:
            check_statistics_width(
                tree, CAUSE_COLUMN_OFFSET + 1, "events, follow-up, entry, code and one per cause"
            )
        if (tree.statistics < 0).any():
            raise ValueError("tree field 'statistics': negative events or follow-up")
        events = tree.statistics[:, 0]
        if (events > tree.weight * (1 + 1e-9) + 1e-12).any():
            raise ValueError("tree field 'statistics': more events than weight at a node")
        by_cause = tree.statistics[:, CAUSE_COLUMN_OFFSET:].sum(axis=1)
        if (np.abs(by_cause - events) > 1e-9 * np.maximum(events, 1.0)).any():
            raise ValueError("tree field 'statistics': the causes' events do not sum to the events")
        if tree.value.shape[1] != 1:
            raise ValueError("tree field 'value' must hold one event share per node")
