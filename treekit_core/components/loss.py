"""The loss contract: what gradient boosting reads from a loss (issue 60).

A loss says how wrong a raw prediction is, row by row: its gradient and hessian at the
current raw prediction (each round's tree is grown on the negative gradient), the raw
prediction every row starts from, the value a leaf adds (by default the Newton step of its
rows' summed gradients and hessians), the link from the raw prediction to what ``predict``
returns, and the loss itself (``train_score_``, ``validation_score_``, early stopping).
Arrays are float64; ``raw`` is n x :meth:`Loss.n_raw` (one column per class for a
multinomial loss, else one).
"""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.components.base import Component

#: A leaf whose summed hessian is below this in magnitude adds 0 (scikit-learn's
#: ``_safe_divide``: a pure leaf of a classifier, where p (1 - p) is 0).
TINY_HESSIAN = 1e-150


@attrs.define(frozen=True)
class Loss(Component):
    """Base of every loss. A subclass defines at least :meth:`gradient_hessian`,
    :meth:`initial_raw` and :meth:`loss` (and :meth:`link` where it is not the identity)."""

    kind: ClassVar[str] = "loss"

    reads: ClassVar[str] = "numbers"
    """What y holds: ``"numbers"`` (one per row), ``"class labels"`` (the estimator passes
    their codes 0..K-1 as numbers) or ``"censored follow-up"`` (an n x 2 array of (time,
    event 0/1) rows). Read by ``fit`` when it encodes y: each boosting estimator refuses a
    loss that reads what it does not take, naming the loss."""

    onnx_link: ClassVar[str | None] = "identity"
    """:meth:`link` as ONNX's operators write it after the trees' raw sums: ``"identity"``,
    ``"exp"``, ``"logistic"`` (one raw column: P(second class)), ``"softmax"``; None: no
    such operator (the model is not exported). Read by ``treekit_core.export.to_onnx``."""

    prefers_newton_gain: ClassVar[bool] = False
    """Whether the hessian varies from row to row and the leaves are Newton steps (the log
    loss, Poisson, gamma), so that a tree grown by the Newton gain (criterion ``newton``)
    fits a round better than one grown by the squared error of the gradient. Read by the
    boosting estimators when they choose the trees' criterion (``criterion`` None): the
    Newton gain with a splitter that provides ``binned_search`` (HistGradientBoosting's
    and LightGBM's trees), squared error otherwise (scikit-learn's ``GradientBoosting*``).
    Where the hessian is constant both make the same splits, squared error summing one
    statistic less; a loss with leaves of its own (a median) keeps squared error."""

    def check_y(self, y: np.ndarray) -> None:
        """Refuse responses outside the loss's domain (a Poisson count below 0), naming the
        loss. Called by ``fit`` once y is checked numeric, before the first round."""

    def n_raw(self, n_classes: int) -> int:
        """Columns of the raw prediction: 1, or one per class for a multinomial loss
        (``n_classes``: 0 for a numeric y). Called by ``fit`` before the first round; each
        round grows that many trees."""
        return 1

    def initial_raw(self, y: np.ndarray, weight, n_classes: int) -> np.ndarray:
        """The raw prediction every row starts from (length :meth:`n_raw`): the constant
        that minimises the weighted loss (the mean for squared error, the median for the
        absolute error, the log-odds of the class shares). ``weight`` is None where the
        user gave no weights (scikit-learn then takes numpy's interpolated median). Called
        by ``fit`` once."""
        raise NotImplementedError(f"loss {self.name!r} defines no initial_raw")

    def fit_state(self, y: np.ndarray, weight: np.ndarray) -> dict:
        """What every round of one fit shares and the raw prediction does not change (Cox's
        follow-up times in order, sorted once rather than every round). Called by ``fit``
        once, before the first round; its entries are in every round's state, beside
        :meth:`round_state`'s (which win where both name one). Default: nothing."""
        return {}

    def round_state(self, y: np.ndarray, raw: np.ndarray, weight: np.ndarray) -> dict:
        """What one round's gradients and leaves share (Huber's delta, a quantile of the
        absolute residuals). Called by ``fit`` at the start of every round; the dict, with
        :meth:`fit_state`'s entries, is passed to :meth:`gradient_hessian` and
        :meth:`leaf_values` of that round."""
        return {}

    def gradient_hessian(self, y: np.ndarray, raw: np.ndarray, state: dict) -> tuple:
        """(gradient, hessian), each n x :meth:`n_raw`, of the loss of every row at
        ``raw`` (unweighted: the rows' weights are applied by the tree and the leaves).
        Called by ``fit`` once per round, before its trees are grown."""
        raise NotImplementedError(f"loss {self.name!r} defines no gradient_hessian")

    def gradient_hessian_scored(
        self, y: np.ndarray, raw: np.ndarray, state: dict, weight, scored_state: dict
    ) -> tuple:
        """(gradient, hessian, loss): :meth:`gradient_hessian` at ``raw`` with this round's
        ``state``, and :meth:`loss` of the same rows at the same ``raw`` with ``weight``
        (None: unweighted) and ``scored_state`` (the previous round's, whose
        ``train_score_`` entry this is: ``raw`` is what that round left). Called by ``fit``
        at the start of every round after its first, in place of the two calls; a loss
        whose two passes over the rows share work overrides it (the binomial log loss:
        one exp a row). Default: the two calls."""
        gradient, hessian = self.gradient_hessian(y, raw, state)
        return gradient, hessian, self.loss(y, raw, weight, scored_state)

    def leaf_values(
        self,
        y: np.ndarray,
        raw: np.ndarray,
        gradient: np.ndarray,
        hessian: np.ndarray,
        weight: np.ndarray,
        leaf: np.ndarray,
        n_nodes: int,
        column: int,
        l2_regularization: float,
        state: dict,
    ) -> np.ndarray:
        """The value each node adds to column ``column`` of the raw prediction of the rows
        it holds (length ``n_nodes``; only leaves are read), before the learning rate.
        ``leaf``: each row's leaf (int32 or int64, read-only: the growth's own where the
        splitter says it); ``weight``: each row's weight in this round (0 out of its
        subsample). The default is the Newton step -sum(w g) / (sum(w h) + l2), 0
        where that denominator is below :data:`TINY_HESSIAN`. Called by ``fit`` once per
        tree, after it is grown."""
        from treekit_core.kernels.row_passes import weighted_leaf_sums  # numba, when used

        # np.bincount(leaf, weights=weight * gradient[:, column]) as one compiled pass
        g = weighted_leaf_sums(leaf, weight, gradient, column, n_nodes)
        h = weighted_leaf_sums(leaf, weight, hessian, column, n_nodes)
        h = h + l2_regularization
        safe = np.abs(h) >= TINY_HESSIAN
        return np.where(safe, -g / np.where(safe, h, 1.0), 0.0)

    def link(self, raw: np.ndarray) -> np.ndarray:
        """What ``predict`` returns for a raw prediction: the number (identity, exp), or
        the class probabilities (n x K). Called by ``predict`` / ``predict_proba`` and
        their staged forms. Default: the identity of the one raw column (the link
        :attr:`onnx_link` names by default)."""
        return raw[:, 0]

    def loss(self, y: np.ndarray, raw: np.ndarray, weight, state: dict | None = None) -> float:
        """The weighted mean loss of the rows at ``raw`` (``weight`` None: unweighted), as
        scikit-learn's gradient boosting reports it (``train_score_``); ``state``: the
        round's (:meth:`round_state`; Huber's delta), None outside a round. Called by
        ``fit`` after every round for ``train_score_`` and, with early stopping,
        ``validation_score_``."""
        raise NotImplementedError(f"loss {self.name!r} defines no loss")


#: The kernels an :class:`ElementwiseLoss` runs, specialised to its row functions (the
#: module's globals ``row_gradient``, ``row_hessian`` and ``row_loss``, compiled with
#: treekit's jit and cached on this generated file: once per machine).
ELEMENTWISE_SOURCE = """
from treekit_core.kernels.compiling import jit


@jit()
def gradient_hessian_rows(y, raw, params, gradient, hessian, start, stop):
    for i in range(start, stop):
        gradient[i] = row_gradient(y[i], raw[i], params)
        hessian[i] = row_hessian(y[i], raw[i], params)


@jit()
def loss_rows(y, raw, params, out, start, stop):
    for i in range(start, stop):
        out[i] = row_loss(y[i], raw[i], params)
"""


@attrs.define(frozen=True)
class ElementwiseLoss(Loss):
    """A loss of one raw column whose gradient, hessian and loss are plain Python functions
    of one row, ``f(y, raw, params) -> float`` (``params``: :meth:`loss_params`), written as
    static methods ``row_gradient``, ``row_hessian`` and ``row_loss``: treekit compiles
    them into its row kernels once per machine (numba, cached as criteria are), so a loss
    written in Python runs at compiled speed. A subclass still defines
    :meth:`~Loss.initial_raw` (and :meth:`~Loss.link` where it is not the identity; numpy,
    once per fit or predict)."""

    def loss_params(self) -> np.ndarray:
        """The numbers the row functions read as ``params`` (float64 array). Called by
        :meth:`gradient_hessian` and :meth:`loss` once per call."""
        return np.zeros(0)

    def _kernels(self):
        from treekit_core.kernels.generated import generated_module

        cls = type(self)
        functions = {
            "row_gradient": cls.row_gradient,
            "row_hessian": cls.row_hessian,
            "row_loss": cls.row_loss,
        }
        return generated_module("loss", ELEMENTWISE_SOURCE, functions, f"loss {self.name!r}")

    def gradient_hessian(self, y, raw, state):
        """The row functions over every row (compiled, on the fit's threads: each row's
        result is the same on any number). Called by ``fit`` once per round."""
        from treekit_core.kernels.row_passes import on_row_threads

        y, column = np.ascontiguousarray(y, np.float64), np.ascontiguousarray(raw[:, 0])
        gradient, hessian = np.empty_like(column), np.empty_like(column)
        kernel, params = self._kernels().gradient_hessian_rows, self.loss_params()
        on_row_threads(kernel, y.size, y, column, params, gradient, hessian)
        return gradient[:, None], hessian[:, None]

    def loss(self, y, raw, weight, state=None):
        """The weighted mean of ``row_loss`` (compiled, on the fit's threads). Called by
        ``fit`` after every round."""
        from treekit_core.kernels.row_passes import on_row_threads

        y, column = np.ascontiguousarray(y, np.float64), np.ascontiguousarray(raw[:, 0])
        out = np.empty_like(column)
        on_row_threads(self._kernels().loss_rows, y.size, y, column, self.loss_params(), out)
        return float(np.average(out, weights=weight))
