"""Survival curves of a tree's leaves from the training rows that reach them.

A leaf's cumulative hazard is the Nelson-Aalen estimator of its rows' weights, H(t) =
sum over times t_k <= t of d_k / n_k (events over weight at risk), and its survival the
Kaplan-Meier estimator, S(t) = prod over t_k <= t of (1 - d_k / n_k), both as
scikit-survival's ``SurvivalTree`` computes them on the grid of every distinct training
time. They only change at the leaf's own event times, so a leaf keeps its jumps (grid
index, H and S after the jump): a few numbers per training row in all, where a dense grid
per leaf would take leaves x times.
"""

from __future__ import annotations

import numpy as np

from treekit_core.components.base import state_array


def unique_times(event: np.ndarray, time: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(every distinct time, event or censored, ascending; whether an event happened at
    it), compared by exact equality (scikit-survival's ``unique_times_``,
    ``is_event_time_``)."""
    grid = np.unique(time)
    has_event = np.zeros(grid.size, dtype=bool)
    has_event[np.searchsorted(grid, time[event])] = True
    return grid, has_event


def leaf_jumps(event, time, grid, rows, nodes, weights, n_nodes) -> dict:
    """The Nelson-Aalen and Kaplan-Meier jumps of every node given rows: ``rows``,
    ``nodes``, ``weights`` say which training row reaches which node with what weight (a
    row may reach several, with shares). Returns the arrays of a survival target's state:
    ``starts`` (n_nodes + 1 offsets into the jump arrays), ``jump_index`` (grid positions),
    ``hazard`` and ``survival`` after each jump."""
    index = np.searchsorted(grid, time)
    order = np.argsort(nodes, kind="stable")
    rows, nodes, weights = rows[order], nodes[order], weights[order]
    bounds = np.searchsorted(nodes, np.arange(n_nodes + 1))
    starts, jump_index, hazard, survival = [0], [], [], []
    for node in range(n_nodes):
        members = slice(bounds[node], bounds[node + 1])
        at = index[rows[members]]
        w = weights[members]
        died = event[rows[members]]
        if not died.any():
            starts.append(starts[-1])
            continue
        present = np.unique(at)  # the node's own times, ascending
        position = np.searchsorted(present, at)
        at_risk = np.cumsum(np.bincount(position, weights=w, minlength=present.size)[::-1])[::-1]
        deaths = np.bincount(position[died], weights=w[died], minlength=present.size)
        jumps = deaths > 0
        ratio = deaths[jumps] / at_risk[jumps]
        jump_index.append(present[jumps])
        hazard.append(np.cumsum(ratio))
        survival.append(np.cumprod(1.0 - ratio))
        starts.append(starts[-1] + int(jumps.sum()))

    def joined(parts, dtype):
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)

    return {
        "starts": np.asarray(starts, dtype=np.int64),
        "jump_index": joined(jump_index, np.int64),
        "hazard": joined(hazard, np.float64),
        "survival": joined(survival, np.float64),
    }


def curves_on_grid(state: dict, nodes: np.ndarray, n_grid: int, which: str) -> np.ndarray:
    """Each node's ``which`` curve ("hazard" or "survival") at every grid time
    (len(nodes) x n_grid): 0 hazard and survival 1 before the node's first jump."""
    # (a model file gives every array as floats)
    starts = np.asarray(state["starts"], dtype=np.int64)
    jumps = np.asarray(state["jump_index"], dtype=np.int64)
    values = np.asarray(state[which], dtype=np.float64)
    before = 0.0 if which == "hazard" else 1.0
    out = np.full((nodes.size, n_grid), before)
    for i, node in enumerate(nodes):
        lo, hi = starts[node], starts[node + 1]
        if hi == lo:
            continue
        position = np.searchsorted(jumps[lo:hi], np.arange(n_grid), side="right") - 1
        known = position >= 0
        out[i, known] = values[lo:hi][position[known]]
    return out


def risk_scores(state: dict, nodes: np.ndarray) -> np.ndarray:
    """Each node's sum of its cumulative hazard over the grid's event times
    (scikit-survival's risk score), from its jumps: a jump's hazard counts once for every
    event time from it to the node's next jump. O(jumps), no grid per node."""
    starts = np.asarray(state["starts"], dtype=np.int64)
    jumps = np.asarray(state["jump_index"], dtype=np.int64)
    hazard = np.asarray(state["hazard"], dtype=np.float64)
    # event times up to (not including) each grid position
    before = np.concatenate([[0], np.cumsum(np.asarray(state["is_event_time"]) == 1)])
    out = np.zeros(nodes.size)
    for i, node in enumerate(nodes):
        lo, hi = starts[node], starts[node + 1]
        if hi == lo:
            continue
        ends = np.append(jumps[lo + 1 : hi], before.size - 1)
        out[i] = float(np.dot(hazard[lo:hi], before[ends] - before[jumps[lo:hi]]))
    return out


def check_jumps(state: dict, n_nodes: int, n_grid: int, where: str) -> None:
    """Refuse a model file's survival state that cannot come from :func:`leaf_jumps`,
    naming the field: offsets, grid positions, hazards >= 0 and increasing, survival in
    [0, 1] and decreasing."""
    starts = state_array(state, "starts", (n_nodes + 1,), where, minimum=0, integer=True)
    if starts[0] != 0 or (np.diff(starts) < 0).any():
        raise ValueError(f"model file: {where}.starts must rise from 0")
    total = int(starts[-1])
    jumps = state_array(state, "jump_index", (total,), where, minimum=0, integer=True)
    if (jumps >= n_grid).any():
        raise ValueError(f"model file: {where}.jump_index points past the {n_grid} grid times")
    hazard = state_array(state, "hazard", (total,), where, minimum=0.0)
    survival = state_array(state, "survival", (total,), where, minimum=0.0)
    if (survival > 1.0).any():
        raise ValueError(f"model file: {where}.survival holds values above 1")
    for node in range(n_nodes):
        part = slice(int(starts[node]), int(starts[node + 1]))
        if (np.diff(jumps[part]) <= 0).any() or (np.diff(hazard[part]) < 0).any():
            raise ValueError(
                f"model file: {where}: node {node}'s jumps must rise in time and hazard"
            )
        if (np.diff(survival[part]) > 0).any():
            raise ValueError(f"model file: {where}: node {node}'s survival must not rise")
