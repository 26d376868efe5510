"""Soft evaluation (SE) and the shared machinery of gated evaluators."""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core import Evaluator, state_array
from treekit_soft_search.spread import check_sigma, check_u, feature_spreads

#: Rows per call of the mixture kernel: bounds the memory of the hard answers of the
#: questions that are not softened (rows x such nodes, 4 bytes each).
CHUNK_ROWS = 65536
#: A soft traversal follows every path whose gates are not 0: a row costs about GATE_COST
#: rows of the core's threshold walk (predict_proba on 20 000 rows, grown-out tree: 843
#: against 2.6 ms), so passes of about a thousand rows and more use threads
#: (treekit_core.kernels.for_row_chunks weighs passes by it).
GATE_COST = 300.0


def softened_nodes(tree) -> np.ndarray:
    """Per node: True where a soft component may gate the question (a two-branch
    threshold); every other question is answered hard."""
    kinds = np.array([q.compares_threshold for q in tree.questions] + [False])
    return ~tree.is_leaf & kinds[tree.question]


def mixture(
    tree, X, mode, sigma, lower=None, upper=None, z_minus=None, z_plus=None, standard_points=None
):
    """Class distribution of every sample: leaf distributions weighted by the product of
    the gates on their paths (one compiled traversal for every gate kind); questions that
    are not thresholds route hard, through the core's routing."""
    from treekit_core import answers_at
    from treekit_core.kernels import for_row_chunks
    from treekit_soft_search.kernels import gated_mixture

    X = np.asarray(X, dtype=np.float64)
    n = tree.n_nodes
    filler = np.zeros(n)
    hard_nodes = np.flatnonzero(~tree.is_leaf & ~softened_nodes(tree))
    hard_column = np.full(n, -1, dtype=np.int64)
    hard_column[hard_nodes] = np.arange(hard_nodes.size)
    stack_size = tree.traversal_stack_size()
    fixed = (
        np.ascontiguousarray(tree.child_start),
        np.ascontiguousarray(tree.child_ids),
        np.ascontiguousarray(tree.child_shares),
        np.ascontiguousarray(np.maximum(tree.feature, 0)),
        np.ascontiguousarray(tree.threshold),
        hard_column,
    )
    gates = (
        np.ascontiguousarray(tree.value),
        mode,
        np.ascontiguousarray(sigma, dtype=np.float64),
        filler if lower is None else np.ascontiguousarray(lower, dtype=np.float64),
        filler if upper is None else np.ascontiguousarray(upper, dtype=np.float64),
        filler if z_minus is None else np.ascontiguousarray(z_minus, dtype=np.float64),
        filler if z_plus is None else np.ascontiguousarray(z_plus, dtype=np.float64),
        np.zeros(1)
        if standard_points is None
        else np.ascontiguousarray(standard_points, dtype=np.float64),
        stack_size,
    )
    # one column per node value (a regression tree stores 1 value but 2 statistics):
    # the kernel writes value.shape[1] columns, and numba does not check bounds
    out = np.zeros((X.shape[0], tree.value.shape[1]))
    for start in range(0, X.shape[0], CHUNK_ROWS):
        rows = X[start : start + CHUNK_ROWS]
        if hard_nodes.size:
            hard = answers_at(tree, np.ascontiguousarray(rows), hard_nodes)
        else:
            hard = np.zeros((rows.shape[0], 1), dtype=np.int32)
        part = out[start : start + CHUNK_ROWS]
        for_row_chunks(
            gated_mixture, rows.shape[0], rows, *fixed, hard, *gates, part, cost=GATE_COST
        )
    return out


@attrs.define(slots=False)
class SoftEvaluation(Evaluator):
    """P(c | x) = sum over leaves of p_leaf(c) times the product over the path's tests of
    Phi((theta - x_a) / sigma_e) (left) or 1 - Phi (right), sigma_e = u * mean(a)."""

    name: ClassVar[str] = "soft"
    description: ClassVar[str] = (
        "class distribution mixed over all leaves with Gaussian gates (Nunes et al. SE)"
    )
    handles_missing: ClassVar[bool] = True
    # a gate's share of the branch of larger values grows with the feature, and other
    # nodes' gates do not read it: mixtures keep monotonic constraints
    provides: ClassVar[frozenset] = frozenset({"monotone_routing"})
    requires: ClassVar[dict] = {"splitter": frozenset({"axis_aligned"})}
    u: float = attrs.field(default=0.1, validator=check_u)
    sigma: list | None = attrs.field(default=None, validator=check_sigma)

    @property
    def reads_training_rows(self) -> bool:
        """The spreads u x mean(a) come from the rows; given ``sigma`` (or u = 0), none."""
        return self.sigma is None and self.u > 0

    def fit(self, tree, data, labeler):
        return {"sigma": feature_spreads(data, self.u, self.sigma, "evaluator 'soft'")}

    def check_state(self, state, tree):
        state_array(state, "sigma", (tree.n_features,), "evaluator", minimum=0.0)

    def predict_distribution(self, tree, X):
        from treekit_soft_search.kernels import GAUSSIAN

        return mixture(tree, X, GAUSSIAN, tree.component_state["evaluator"]["sigma"])
