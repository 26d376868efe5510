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


def leaf_jumps(event, time, grid, rows, nodes, weights, n_nodes, cause=None, entry=None) -> dict:
    """The Nelson-Aalen and Kaplan-Meier jumps of every node given rows: ``rows``,
    ``nodes``, ``weights`` say which training row reaches which node with what weight (a
    row may reach several, with shares). Returns the arrays of a survival target's state:
    ``starts`` (n_nodes + 1 offsets into the jump arrays), ``jump_index`` (grid positions),
    ``hazard`` and ``survival`` after each jump, ``greenwood`` (Greenwood's sum
    sum_{t_k <= t} d_k / (n_k (n_k - d_k)), the variance of log S: survfit's confidence
    bands read it; infinite once a node's survival reaches 0), and ``last_index``, each
    node's last
    follow-up time (a grid position; -1 for a node no row reaches): where its curve ends,
    which survival quantiles read (:func:`survival_quantiles`).

    ``cause`` (competing risks: each row's cause code, 0 censored, 1..K; ``event`` is then
    code > 0): also, per cause k, ``incidence_k``, the Aalen-Johansen cumulative incidence
    F_k(t) = sum_{t_j <= t} S(t_j-) d_kj / n_j after each jump, and ``cause_hazard_k``, the
    cause-specific Nelson-Aalen hazard sum_{t_j <= t} d_kj / n_j (weighted: d_kj the
    weight of the cause-k events at t_j, n_j the weight at risk, S the all-cause
    Kaplan-Meier curve). A cause changes only where some event happens, so its values
    ride on the all-cause jumps: the same offsets serve every curve.

    ``entry`` (delayed entry, 0 from the start): a row is at risk at the node's times in
    (entry, time] only (``survival::survfit(Surv(entry, time, event) ~ 1)``)."""
    index = np.searchsorted(grid, time)
    order = np.argsort(nodes, kind="stable")
    rows, nodes, weights = rows[order], nodes[order], weights[order]
    bounds = np.searchsorted(nodes, np.arange(n_nodes + 1))
    starts, jump_index, hazard, survival, greenwood = [0], [], [], [], []
    n_causes = 0 if cause is None else int(cause.max(initial=0))
    incidence = [[] for _ in range(n_causes)]
    cause_hazard = [[] for _ in range(n_causes)]
    last_index = np.full(n_nodes, -1, dtype=np.int64)
    for node in range(n_nodes):
        members = slice(bounds[node], bounds[node + 1])
        at = index[rows[members]]
        w = weights[members]
        died = event[rows[members]]
        if at.size:
            last_index[node] = at.max()
        if not died.any():
            starts.append(starts[-1])
            continue
        present = np.unique(at)  # the node's own times, ascending
        position = np.searchsorted(present, at)
        at_risk = np.cumsum(np.bincount(position, weights=w, minlength=present.size)[::-1])[::-1]
        if entry is not None:
            entered = entry[rows[members]]
            later = entered > 0
            if later.any():  # less the weight not yet entered at each time
                first = np.searchsorted(grid[present], entered[later], side="right")
                waiting = np.bincount(first, weights=w[later], minlength=present.size + 1)
                # not yet entered at position k: the rows whose first position is past k
                at_risk = at_risk - np.cumsum(waiting[::-1])[::-1][1:]
        deaths = np.bincount(position[died], weights=w[died], minlength=present.size)
        jumps = deaths > 0
        ratio = deaths[jumps] / at_risk[jumps]
        jump_index.append(present[jumps])
        hazard.append(np.cumsum(ratio))
        survival.append(np.cumprod(1.0 - ratio))
        left = at_risk[jumps] - deaths[jumps]  # surviving the jump: 0 makes S 0, se inf
        safe = np.where(left > 0, left, 1.0)
        term = np.where(left > 0, deaths[jumps] / (at_risk[jumps] * safe), np.inf)
        greenwood.append(np.cumsum(term))
        starts.append(starts[-1] + int(jumps.sum()))
        if n_causes:
            codes = cause[rows[members]]
            before = np.concatenate([[1.0], survival[-1][:-1]])  # S(t_j-) at each jump
            for k in range(n_causes):
                mine = codes == k + 1
                deaths_k = np.bincount(position[mine], weights=w[mine], minlength=present.size)
                share = deaths_k[jumps] / at_risk[jumps]
                incidence[k].append(np.cumsum(before * share))
                cause_hazard[k].append(np.cumsum(share))

    def joined(parts, dtype):
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)

    out = {
        "starts": np.asarray(starts, dtype=np.int64),
        "jump_index": joined(jump_index, np.int64),
        "hazard": joined(hazard, np.float64),
        "survival": joined(survival, np.float64),
        "greenwood": joined(greenwood, np.float64),
        "last_index": last_index,
    }
    for k in range(n_causes):
        out[f"incidence_{k + 1}"] = joined(incidence[k], np.float64)
        out[f"cause_hazard_{k + 1}"] = joined(cause_hazard[k], np.float64)
    return out


def jumps_of_nodes(state: dict, nodes, jump_keys: tuple) -> dict:
    """A :func:`leaf_jumps` state restricted to ``nodes`` (ids of the tree it was made
    for), in that order: each node's run of the ``jump_keys`` arrays, ``starts`` rebuilt,
    ``last_index`` taken; every other entry (the grid) kept."""
    starts = np.asarray(state["starts"], dtype=np.int64)
    nodes = np.asarray(nodes, dtype=np.int64)
    lengths = starts[nodes + 1] - starts[nodes]
    flat = expand_runs(starts[nodes], lengths)
    out = dict(state)
    out["starts"] = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    for key in jump_keys:
        out[key] = np.asarray(state[key])[flat]
    if "last_index" in state:
        out["last_index"] = np.asarray(state["last_index"])[nodes]
    return out


#: The normal quantile of survfit's default 95% bands (qnorm(0.975)).
Z_95 = 1.959963984540054


def survival_bands(state: dict, nodes, times, z: float = Z_95):
    """(lower, upper) of each node's Kaplan-Meier curve at ``times`` (as
    :func:`curves_at_times`; 1 before the first training time): survfit's default band,
    conf.type "log": S exp(-+z se) with se the square root of Greenwood's sum, the upper
    capped at 1, NaN where S is 0 (as survfit's NA). Needs the state's ``greenwood``
    (states written before it lack it)."""
    survival = curves_at_times(state, nodes, times, "survival")
    greenwood = curves_at_times(state, nodes, times, "greenwood")
    spread = np.exp(z * np.sqrt(greenwood))
    with np.errstate(invalid="ignore", divide="ignore"):
        lower = np.where(survival > 0, survival / spread, np.nan)
        upper = np.where(survival > 0, np.minimum(survival * spread, 1.0), np.nan)
    return lower, upper


def starting_value(which: str) -> float:
    """A curve's value before its first jump: survival 1; a hazard or an incidence 0."""
    return 1.0 if which == "survival" else 0.0


#: survival::quantile.survfit's default tolerance: a curve within it of a level is at it.
QUANTILE_TOLERANCE = float(np.sqrt(np.finfo(np.float64).eps))


def survival_quantiles(grid, survival, q, last_time=None) -> np.ndarray:
    """The time each curve (a row of ``survival``, its values at the ``grid`` times, 1
    before the first) falls to ``q``, as ``survival::quantile.survfit`` finds it at
    ``probs = 1 - q``: the first grid time where the curve is at or below q, except where
    it equals q (within :data:`QUANTILE_TOLERANCE`) over an interval, where it is the
    midpoint of that interval; an interval that runs to the end of the curve ends at
    ``last_time`` (per curve; default the last grid time), the curve's last follow-up.
    Infinity where the curve never reaches q; 0 for q = 1."""
    grid = np.asarray(grid, dtype=np.float64)
    survival = np.atleast_2d(np.asarray(survival, dtype=np.float64))
    n = survival.shape[0]
    if last_time is None:
        last_time = np.full(n, grid[-1] if grid.size else 0.0)
    out = np.full(n, np.inf)
    if q >= 1.0:
        return np.zeros(n)
    tol = QUANTILE_TOLERANCE
    p = 1.0 - q  # survfit's scale: the distribution function
    for i in range(n):
        # survfit's points: 0 at time 0, then the distribution function at every time,
        # each value kept at its first time only (a repeated value is a censored time)
        cdf = np.concatenate([[0.0], 1.0 - survival[i]])
        keep = np.concatenate([[True], np.diff(cdf) != 0])
        times = np.concatenate([[0.0], grid])[keep]
        values = cdf[keep]
        first_near = np.searchsorted(values + tol, p, side="left")
        first_past = np.searchsorted(values - tol, p, side="left")
        if first_past >= values.size:  # never at or beyond p (beyond the tolerance)
            if first_near < values.size and abs(p - values[-1]) < tol:
                out[i] = (times[first_near] + last_time[i]) / 2.0
            continue
        out[i] = (times[first_near] + times[first_past]) / 2.0
    return out


def expand_runs(first: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices first[k], first[k] + 1, ..., first[k] + lengths[k] - 1 for every k,
    concatenated: every jump of the nodes (or leaves) whose jumps start at ``first``."""
    ends = np.cumsum(lengths)
    return np.repeat(first, lengths) + (
        np.arange(ends[-1] if ends.size else 0) - np.repeat(ends - lengths, lengths)
    )


def _node_jumps(starts, nodes):
    """(jumps per node, offsets of each node's run, the node's position per jump, the
    jumps' indices) of ``nodes`` in a state whose node k's jumps are starts[k]..starts[k+1]."""
    lengths = starts[nodes + 1] - starts[nodes]
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    return (
        lengths,
        offsets,
        np.repeat(np.arange(nodes.size), lengths),
        expand_runs(starts[nodes], lengths),
    )


def curves_on_grid(
    state: dict, nodes: np.ndarray, n_grid: int, which: str, positions=None
) -> np.ndarray:
    """Each node's ``which`` curve ("hazard" or "survival") at the grid positions
    ``positions`` (default every one of the ``n_grid``: len(nodes) x len(positions)): the
    value after the node's last jump at or before the position; 0 hazard and survival 1
    before its first. Vectorised over nodes and positions (one search of every jump), and
    only as wide as the positions asked: three asked times cost three columns, not the
    whole grid."""
    # (a model file gives every array as floats)
    starts = np.asarray(state["starts"], dtype=np.int64)
    jumps = np.asarray(state["jump_index"], dtype=np.int64)
    values = np.asarray(state[which], dtype=np.float64)
    before = starting_value(which)
    nodes = np.asarray(nodes, dtype=np.int64)
    _, offsets, segment, flat = _node_jumps(starts, nodes)
    if positions is None:  # the whole grid: each node's jumps carried forward
        last = np.zeros((nodes.size, n_grid), dtype=np.int64)
        last[segment, jumps[flat]] = np.arange(1, flat.size + 1)  # 1 + the jump's index
        np.maximum.accumulate(last, axis=1, out=last)
        return np.concatenate([[before], values[flat]])[last]
    positions = np.asarray(positions, dtype=np.int64)
    # the jumps of the nodes asked, one segment each, keyed (segment, grid position): the
    # keys rise through the segments, so one search finds every (node, position)'s jump
    span = np.int64(n_grid + 1)
    keys = segment * span + jumps[flat]
    asked = np.arange(nodes.size)[:, None] * span + positions[None, :]
    found = np.searchsorted(keys, asked, side="right") - 1
    inside = found >= offsets[:-1][:, None]  # a jump of this node at or before the position
    return np.where(inside, values[flat][np.maximum(found, 0)], before)


def curves_at_times(state: dict, nodes, times, which: str) -> np.ndarray:
    """Each of ``nodes``' ``which`` curve at ``times`` (the training grid's, or any): the
    value at the last training time <= each (the starting value before the first),
    computed at those times only (:func:`curves_on_grid`)."""
    training = np.asarray(state["grid"], dtype=np.float64)
    times = np.asarray(times, dtype=np.float64)
    if times.shape == training.shape and np.array_equal(times, training):  # every grid time
        return curves_on_grid(state, nodes, training.size, which)
    positions = np.searchsorted(training, times, "right") - 1
    known = positions >= 0
    out = np.full((len(nodes), len(times)), starting_value(which))
    out[:, known] = curves_on_grid(state, nodes, training.size, which, positions[known])
    return out


def curve_steps(state: dict, nodes: np.ndarray, which: str) -> tuple:
    """Each node's ``which`` curve as its steps: (offsets, len(nodes) + 1 into the next
    two; grid positions of the jumps; the curve's change at each), so that a curve is its
    value before the first jump (0 hazard, survival 1) plus the changes up to a time. A
    mixture of curves is then the same mixture of changes, a few per leaf where a dense
    curve has a value at every training time."""
    starts = np.asarray(state["starts"], dtype=np.int64)
    jumps = np.asarray(state["jump_index"], dtype=np.int64)
    values = np.asarray(state[which], dtype=np.float64)
    nodes = np.asarray(nodes, dtype=np.int64)
    lengths, offsets, _, flat = _node_jumps(starts, nodes)
    taken = values[flat]
    previous = np.concatenate([[0.0], taken[:-1]])
    previous[offsets[:-1][lengths > 0]] = starting_value(which)  # segment starts
    return offsets, jumps[flat], taken - previous


def last_follow_up(state: dict, nodes: np.ndarray, grid: np.ndarray, unreached: float):
    """Each of ``nodes``' last follow-up time (where its curve ends, which the quantiles'
    midpoint rule reads): the grid time of its ``last_index``; ``unreached`` for a node no
    training row reached; the last grid time in a state without ``last_index`` (model
    files written before it was kept)."""
    nodes = np.asarray(nodes, dtype=np.int64)
    if "last_index" not in state:
        return np.full(nodes.size, grid[-1])
    index = np.asarray(state["last_index"], dtype=np.int64)[nodes]
    return np.where(index >= 0, grid[np.maximum(index, 0)], unreached)


def integrated_curves(state: dict, nodes: np.ndarray, which: str, grid) -> np.ndarray:
    """Each node's ``which`` curve integrated over time from 0 to the last ``grid`` time
    (a step function: each value after a jump times the time to the node's next jump, or
    to the end). For an incidence, the expected time lost to the cause by then
    (randomForestSRC's ``predicted`` for competing risks). Starting value 0 only."""
    starts = np.asarray(state["starts"], dtype=np.int64)
    jumps = np.asarray(state["jump_index"], dtype=np.int64)
    values = np.asarray(state[which], dtype=np.float64)
    grid = np.asarray(grid, dtype=np.float64)
    out = np.zeros(len(nodes))
    for i, node in enumerate(np.asarray(nodes, dtype=np.int64)):
        lo, hi = starts[node], starts[node + 1]
        if hi > lo:
            at = grid[jumps[lo:hi]]
            out[i] = float(np.dot(values[lo:hi], np.diff(np.append(at, grid[-1]))))
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
    if (hazard > n_grid).any():  # each jump adds events / at risk <= 1
        raise ValueError(
            f"model file: {where}.hazard holds {hazard.max():.3g}; a cumulative hazard "
            f"rises by at most 1 at each of the {n_grid} grid times"
        )
    survival = state_array(state, "survival", (total,), where, minimum=0.0)
    if (survival > 1.0).any():
        raise ValueError(f"model file: {where}.survival holds values above 1")
    # Kaplan-Meier's product of (1 - d/n) is at most exp(-sum d/n), the Nelson-Aalen
    # hazard's survival: a file where a leaf's survival is above it holds two curves that
    # cannot come from the same rows
    if (survival > np.exp(-hazard) * (1 + 1e-9) + 1e-12).any():
        raise ValueError(
            f"model file: {where}.survival is above exp(-hazard) at some jump: the survival "
            "and hazard curves disagree"
        )
    if "greenwood" in state:  # (model files written before the bands were kept lack it)
        greenwood = state_array(state, "greenwood", (total,), where, minimum=0.0, allow_inf=True)
        for node in range(n_nodes):
            part = slice(int(starts[node]), int(starts[node + 1]))
            if (np.diff(greenwood[part]) < 0).any():
                raise ValueError(f"model file: {where}: node {node}'s greenwood must not fall")
    if "last_index" in state:  # (model files written before it was kept lack it)
        last = state_array(state, "last_index", (n_nodes,), where, minimum=-1, integer=True)
        if (last >= n_grid).any():
            raise ValueError(f"model file: {where}.last_index points past the {n_grid} grid times")
        offsets = starts.astype(np.int64)
        ends = np.flatnonzero(np.diff(offsets) > 0)
        if (last[ends] < jumps[offsets[ends + 1] - 1]).any():
            raise ValueError(f"model file: {where}.last_index precedes a node's last jump")
    for node in range(n_nodes):
        part = slice(int(starts[node]), int(starts[node + 1]))
        if (np.diff(jumps[part]) <= 0).any() or (np.diff(hazard[part]) < 0).any():
            raise ValueError(
                f"model file: {where}: node {node}'s jumps must rise in time and hazard"
            )
        if (np.diff(survival[part]) > 0).any():
            raise ValueError(f"model file: {where}: node {node}'s survival must not rise")
