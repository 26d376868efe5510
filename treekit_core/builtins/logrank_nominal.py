"""Nominal features for a criterion searched from a node's rows by the log-rank statistic
(``Criterion.row_search == "logrank_search"``): no sum of statistics scores a log-rank cut,
so the subset and multi-way searches of :mod:`.nominal_subsets` (impurity drops from
summed statistics) cannot serve it.

Subset questions "x in S": every candidate subset becomes a 0/1 column (missing where the
value is) and the log-rank kernel scores them as it scores threshold cuts (|U| / sqrt(V),
a feature's statistic scaled by its known weight share, min_samples_leaf on each side, the
first strictly best on ties). Candidates: with at most ``EXACT_LIMIT`` categories present
at the node, all 2^(m-1) - 1 subsets (the first present category stays left: no mirrored
duplicates); beyond, the m - 1 prefixes of the categories ordered by their hazard, the
weighted events over the weighted follow-up time (a heuristic: no theorem makes the best
log-rank subset a prefix of any order). Categories absent from the node go to the heavier
side, as in the impurity searches.

Multi-way questions (one branch per category): the K-sample log-rank statistic of the
categories present, chi-squared with K - 1 degrees of freedom, reported as the normal
deviate with the same p-value (for two categories exactly |U| / sqrt(V)), so that it
competes with the binary cuts of numeric features on one scale; scaled by the known
weight share. Every category present needs min_samples_leaf rows.
"""

from __future__ import annotations

import numpy as np

from treekit_core.builtins.nominal_subsets import (
    EXACT_LIMIT,
    order_prefixes,
    subsets_keeping_first,
)
from treekit_core.components import Split

#: Candidate subsets scored by one kernel call (columns of the 0/1 matrix).
CANDIDATE_BLOCK = 256


def logrank_nominal_split(kernel, event, time, entry, data, node, rules, features, mode):
    """(Split or None, score) of the best nominal question on ``features`` at ``node``:
    subset questions (``mode="subset"``) or multi-way ones; ``event``, ``time`` and
    ``entry`` are the training rows' follow-up (the target's columns the log-rank search
    reads; a row is at risk in (entry, time]; ``event`` may hold cause codes: the subset
    questions are then scored by the composite statistic of every cause, the multi-way
    ones by the any-event K-sample test)."""
    best, best_score = None, -np.inf
    for feature in features:
        feature = int(feature)
        x = data.X[node.rows, feature]
        known = ~np.isnan(x)
        codes = np.where(known, np.nan_to_num(x), -1).astype(np.int64)
        m = int(data.n_categories[feature])
        if mode == "multiway":
            split, score = _multiway(event, time, entry, node, rules, feature, codes, known, m)
        else:
            split, score = _subset(
                kernel, event, time, entry, node, rules, feature, codes, known, m
            )
        if split is not None and score > best_score:
            best, best_score = split, score
    return best, best_score


def category_hazards(event, time, weights, codes, m, entry=None) -> np.ndarray:
    """Each category's weighted events over its weighted follow-up time (from entry to the
    end of follow-up; 0 without follow-up)."""
    if entry is not None:
        time = time - entry
    deaths = np.bincount(codes, weights=weights * event, minlength=m)
    exposure = np.bincount(codes, weights=weights * time, minlength=m)
    return np.divide(deaths, exposure, out=np.zeros(m), where=exposure > 0)


def candidate_subsets(present, hazards) -> list:
    """Subsets worth scoring (lists of codes): every one containing the first present
    category, up to :data:`EXACT_LIMIT` categories; beyond, the prefixes of the hazard
    order (ties by code)."""
    categories = np.flatnonzero(present)
    if categories.size > EXACT_LIMIT:
        return order_prefixes(categories, hazards[categories])
    return subsets_keeping_first(categories)


def _subset(kernel, event, time, entry, node, rules, feature, codes, known, m):
    weights = node.row_weights
    event_rows, time_rows, entry_rows = event[node.rows], time[node.rows], entry[node.rows]
    counts = np.bincount(codes[known], minlength=m)
    present = counts > 0
    if present.sum() < 2:
        return None, -np.inf
    hazards = category_hazards(
        event_rows[known] > 0, time_rows[known], weights[known], codes[known], m, entry_rows[known]
    )
    subsets = candidate_subsets(present, hazards)
    rows = np.arange(node.rows.size, dtype=np.int64)
    best, best_statistic, best_share = None, -np.inf, 0.5
    for start in range(0, len(subsets), CANDIDATE_BLOCK):
        block = subsets[start : start + CANDIDATE_BLOCK]
        columns = np.empty((node.rows.size, len(block)))
        for c, subset in enumerate(block):
            columns[:, c] = np.where(np.isin(codes, subset), 0.0, 1.0)
        columns[~known] = np.nan
        found, _, statistic, share = kernel(
            event_rows,
            time_rows,
            entry_rows,
            columns,
            rows,
            weights,
            np.arange(len(block), dtype=np.int64),
            rules.min_samples_leaf,
            rules.min_weight_leaf,
        )
        if found >= 0 and statistic > best_statistic:
            best, best_statistic, best_share = block[int(found)], float(statistic), float(share)
    if best is None:
        return None, -np.inf
    mask = 0
    for code in best:
        mask |= 1 << int(code)
    if best_share >= 0.5:  # absent categories follow the heavier side
        for code in np.flatnonzero(~present):
            mask |= 1 << int(code)
    split = Split(feature, -2.0, best_statistic, {"category_mask": float(mask)}, "subset")
    split.branch_shares = (best_share, 1.0 - best_share)
    return split, best_statistic


def k_sample_logrank(event, time, weights, groups, k, entry=None) -> float:
    """The K-sample log-rank chi-squared statistic of ``groups`` (codes 0..k-1, each
    present), weighted: over the event times, observed minus expected events per group and
    their covariance (hypergeometric, with the ties correction), the quadratic form on the
    first k - 1 groups. A row is at risk in (entry, time] (``entry`` None: from 0)."""
    order = np.argsort(time, kind="mergesort")
    time, event, weights, groups = time[order], event[order], weights[order], groups[order]
    distinct, first = np.unique(time, return_index=True)
    at_risk = np.zeros((distinct.size, k))  # weight of each group still at risk
    np.add.at(at_risk, (np.searchsorted(distinct, time), groups), weights)
    at_risk = np.cumsum(at_risk[::-1], axis=0)[::-1]
    if entry is not None and (entry > 0).any():  # less the rows not yet entered
        entry = entry[order]
        later = entry > 0
        waiting = np.zeros((distinct.size + 1, k))
        first_at = np.searchsorted(distinct, entry[later], side="right")
        np.add.at(waiting, (first_at, groups[later]), weights[later])
        at_risk = at_risk - np.cumsum(waiting[::-1], axis=0)[::-1][1:]
    deaths = np.zeros((distinct.size, k))
    np.add.at(deaths, (np.searchsorted(distinct, time), groups), weights * event)
    total_at_risk, total_deaths = at_risk.sum(axis=1), deaths.sum(axis=1)
    used = (total_deaths > 0) & (total_at_risk > 0)
    n, d, n_g, d_g = total_at_risk[used], total_deaths[used], at_risk[used], deaths[used]
    share = n_g / n[:, None]
    observed_minus_expected = (d_g - d[:, None] * share).sum(axis=0)
    ties = np.where(n > 1, (n - d) / np.maximum(n - 1, 1e-300), 0.0) * d
    covariance = np.einsum("t,ti,ij->ij", ties, share, np.eye(k)) - np.einsum(
        "t,ti,tj->ij", ties, share, share
    )
    head = slice(0, k - 1)
    try:
        solved = np.linalg.solve(covariance[head, head], observed_minus_expected[head])
    except np.linalg.LinAlgError:
        return 0.0
    return float(max(observed_minus_expected[head] @ solved, 0.0))


def _multiway(event, time, entry, node, rules, feature, codes, known, m):
    from scipy.stats import chi2, norm

    weights = node.row_weights[known]
    used = codes[known]
    counts = np.bincount(used, minlength=m)
    weight = np.bincount(used, weights=weights, minlength=m)
    present = np.flatnonzero(counts > 0)
    if present.size < 2:
        return None, -np.inf
    if (counts[present] < rules.min_samples_leaf).any() or (
        weight[present] < max(rules.min_weight_leaf, 1e-300)
    ).any():
        return None, -np.inf
    groups = np.searchsorted(present, used)
    statistic = k_sample_logrank(
        event[node.rows][known] > 0,
        time[node.rows][known],
        weights,
        groups,
        present.size,
        entry[node.rows][known],
    )
    if not statistic > 0:
        return None, -np.inf
    # the normal deviate of the same p-value: |U| / sqrt(V) for two groups
    deviate = float(norm.isf(chi2.sf(statistic, present.size - 1) / 2.0))
    if not np.isfinite(deviate):  # a p-value below the smallest float: the chi value
        deviate = float(np.sqrt(statistic))
    score = deviate * weight.sum() / node.row_weights.sum()
    split = Split(feature, -2.0, score, question="multiway", n_branches=m)
    split.branch_shares = tuple(weight / weight.sum())
    return split, score
