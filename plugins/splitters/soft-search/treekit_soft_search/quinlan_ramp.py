"""Quinlan's probabilistic (soft) thresholds, PLT (C4.5 release 8, st-thresh.c).

For every test x_a <= Z of a finished tree, with the node's training samples sorted by x_a:
E(t) = errors if the threshold moved to t (samples with x <= t classified by the left
subtree, the others by the right subtree); E0 = E(Z);
Limit = E0 + sqrt((E0 + 0.5)(N - E0 + 0.5) / (N + 1)).
Z- is where E first falls to Limit coming from below Z, Z+ where E last rises past Limit
above Z (linear interpolation between adjacent values; defaults: the smallest and largest
values). The left gate is 1 up to Z-, falls linearly to 1/2 at Z and to 0 at Z+.
"""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core import Evaluator, state_array
from treekit_soft_search.soft_evaluation import mixture, softened_nodes
from treekit_soft_search.tree_walks import route_from, rows_per_node


def error_curve(x, left_errors, right_errors):
    """Distinct sorted values v and E(v) = left errors of x <= v + right errors of x > v."""
    order = np.argsort(x, kind="mergesort")
    x, left_errors, right_errors = x[order], left_errors[order], right_errors[order]
    values = np.unique(x)
    ends = np.searchsorted(x, values, side="right")  # rows with x <= v
    cumulative_left = np.concatenate([[0.0], np.cumsum(left_errors)])
    cumulative_right = np.concatenate([[0.0], np.cumsum(right_errors)])
    errors = cumulative_left[ends] + (cumulative_right[-1] - cumulative_right[ends])
    return values, errors


def soft_bounds(values, errors, threshold, total_weight):
    """(Z-, Z+) from the error curve (see the module docstring)."""
    at = np.searchsorted(values, threshold, side="right") - 1  # largest value <= Z
    e0 = errors[max(at, 0)]
    limit = e0 + np.sqrt((e0 + 0.5) * (total_weight - e0 + 0.5) / (total_weight + 1))
    z_minus = values[0]
    for j in range(0, max(at, 0) + 1):  # coming from below Z
        if errors[j] <= limit:
            if j > 0:
                a, b = values[j - 1], values[j]
                z_minus = a + (b - a) * (errors[j - 1] - limit) / (errors[j - 1] - errors[j])
            break
    z_plus = values[-1]
    for j in range(values.size - 1, at, -1):  # coming from above Z
        if errors[j] <= limit:
            if j < values.size - 1:
                a, b = values[j], values[j + 1]
                z_plus = a + (b - a) * (limit - errors[j]) / (errors[j + 1] - errors[j])
            break
    return float(z_minus), float(z_plus), float(limit)


@attrs.define(slots=False)
class QuinlanRamp(Evaluator):
    """No parameters: the soft bounds come from the training data of each node."""

    name: ClassVar[str] = "quinlan_ramp"
    handles_missing: ClassVar[bool] = True
    description: ClassVar[str] = (
        "Quinlan's probabilistic thresholds: linear ramps between Z-, Z and Z+ (C4.5 PLT)"
    )
    provides: ClassVar[frozenset] = frozenset()
    requires: ClassVar[dict] = {"splitter": frozenset({"axis_aligned"})}

    def fit(self, tree, data, labeler):
        X = data.X
        z_minus = np.array(tree.threshold, dtype=np.float64)
        z_plus = np.array(tree.threshold, dtype=np.float64)
        softened = softened_nodes(tree)
        for node, rows in rows_per_node(tree, X).items():
            if not softened[node] or rows.size == 0:  # other questions route hard
                continue
            sub = X[rows]
            evidence = data.evidence[rows]
            weight = data.weight[rows]
            errors = [
                weight
                * labeler.sample_errors(evidence, tree.decision[route_from(tree, sub, int(child))])
                for child in tree.children(node)
            ]
            x = sub[:, tree.feature[node]]
            known = ~np.isnan(x)
            if known.sum() < 2:
                continue
            values, curve = error_curve(x[known], errors[0][known], errors[1][known])
            z_minus[node], z_plus[node], _ = soft_bounds(
                values, curve, tree.threshold[node], weight.sum()
            )
        return {"z_minus": z_minus, "z_plus": z_plus}

    def check_state(self, state, tree):
        for key in ("z_minus", "z_plus"):
            state_array(state, key, (tree.n_nodes,), "evaluator")

    def predict_distribution(self, tree, X):
        from treekit_soft_search.kernels import RAMP

        state = tree.component_state["evaluator"]
        return mixture(
            tree,
            X,
            RAMP,
            np.zeros(tree.n_features),
            z_minus=state["z_minus"],
            z_plus=state["z_plus"],
        )
