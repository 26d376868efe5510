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


def error_curve(x, left_errors, right_errors):
    """Distinct sorted values v and E(v) = left errors of x <= v + right errors of x > v."""
    from treekit_soft_search.kernels import error_curve_sorted

    order = np.argsort(x, kind="mergesort")
    values, errors = np.empty(x.size), np.empty(x.size)
    k = error_curve_sorted(
        *(np.ascontiguousarray(a[order], dtype=np.float64) for a in (x, left_errors, right_errors)),
        values,
        errors,
    )
    return values[:k], errors[:k]


def soft_bounds(values, errors, threshold, total_weight):
    """(Z-, Z+, Limit) from the error curve (see the module docstring)."""
    from treekit_soft_search.kernels import ramp_bounds

    return ramp_bounds(
        np.ascontiguousarray(values, dtype=np.float64),
        np.ascontiguousarray(errors, dtype=np.float64),
        float(threshold),
        float(total_weight),
    )


@attrs.define(slots=False)
class QuinlanRamp(Evaluator):
    """No parameters: the soft bounds come from the training data of each node."""

    name: ClassVar[str] = "quinlan_ramp"
    handles_missing: ClassVar[bool] = True
    description: ClassVar[str] = (
        "Quinlan's probabilistic thresholds: linear ramps between Z-, Z and Z+ (C4.5 PLT)"
    )
    # a gate's share of the branch of larger values grows with the feature, and other
    # nodes' gates do not read it: mixtures keep monotonic constraints
    provides: ClassVar[frozenset] = frozenset({"monotone_routing"})
    # the ramps are placed where the node's classification errors cross Quinlan's limit
    requires: ClassVar[dict] = {
        "splitter": frozenset({"axis_aligned"}),
        "target": frozenset({"class_decisions"}),
    }

    def fit(self, tree, data, labeler):
        """Every softened node's error curve over its training rows (all in one pass: the
        rows reaching each node, the leaf each subtree gives them, then one compiled sweep)."""
        from treekit_core import rows_reaching, tree_leaves_from
        from treekit_soft_search.kernels import ramps_of_nodes

        X = data.X
        z_minus = np.array(tree.threshold, dtype=np.float64)
        z_plus = np.array(tree.threshold, dtype=np.float64)
        node, row = rows_reaching(tree, X)
        reached = softened_nodes(tree)[node]
        node, row = node[reached], row[reached]
        total = np.bincount(node, weights=data.weight[row], minlength=tree.n_nodes).astype(float)
        x = X[row, tree.feature[node]]
        known = ~np.isnan(x)
        node, row, x = node[known], row[known], x[known]
        first_child = tree.child_start[node]
        errors = [
            data.weight[row]
            * labeler.sample_errors(
                data.evidence[row],
                tree.decision[tree_leaves_from(tree, X, row, tree.child_ids[first_child + b])],
            )
            for b in (0, 1)
        ]
        order = np.lexsort((x, node))  # by node, then by value; stable on ties
        node, x = node[order], x[order]
        segment_nodes, starts = np.unique(node, return_index=True)
        ramps_of_nodes(
            np.ascontiguousarray(x),
            np.ascontiguousarray(errors[0][order], dtype=np.float64),
            np.ascontiguousarray(errors[1][order], dtype=np.float64),
            np.append(starts, node.size).astype(np.int64),
            segment_nodes.astype(np.int64),
            np.ascontiguousarray(tree.threshold, dtype=np.float64),
            total,
            z_minus,
            z_plus,
        )
        return {"z_minus": z_minus, "z_plus": z_plus}

    def check_state(self, state, tree):
        """Z- and Z+ per node, finite, bracketing the node's threshold (Z- <= Z <= Z+)."""
        ends = {
            key: state_array(state, key, (tree.n_nodes,), "evaluator")
            for key in ("z_minus", "z_plus")
        }
        softened = softened_nodes(tree)
        threshold = tree.threshold[softened]
        for key, wrong in (
            ("z_minus", ends["z_minus"][softened] > threshold),
            ("z_plus", ends["z_plus"][softened] < threshold),
        ):
            if wrong.any():
                node = int(np.flatnonzero(softened)[np.argmax(wrong)])
                raise ValueError(
                    f"model file: evaluator.{key} of node {node} is {float(ends[key][node])!r}, "
                    f"on the wrong side of its threshold {float(tree.threshold[node])!r} (a "
                    "ramp brackets it)"
                )

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
