"""Built-in losses for gradient boosting (issue 60): scikit-learn's definitions, so that
``BoostingRegressor(loss=l, splitter="exhaustive")`` reproduces its
``GradientBoostingRegressor(loss=l)`` and ``BoostingClassifier`` its
``GradientBoostingClassifier``.

========================  ===============================  ==============================
loss                      gradient at raw f (row y)        leaf value
========================  ===============================  ==============================
``squared_error``         f - y (hessian 1)                Newton: the leaf's mean residual
``absolute_error``        +1 if f > y else -1              weighted median of y - f
``huber`` (``alpha``)     f - y within delta, else         median m of y - f, plus the mean
                          +-delta (delta: the alpha        of sign(r - m) min(delta,
                          quantile of abs(y - f))          abs(r - m))
``quantile`` (``alpha``)  -alpha if y >= f, else 1-alpha   weighted alpha-quantile of y - f
``poisson``               exp(f) - y (hessian exp(f))      Newton (log link)
``gamma``                 1 - y exp(-f) (hessian y e^-f)   Newton (log link)
``log_loss``              p - y (hessian p (1 - p))        Newton; multinomial: (K-1)/K of it
``cox``                   Breslow's partial likelihood     the mean negative gradient
                          (see :class:`Cox`)               (``newton=True``: Newton)
========================  ===============================  ==============================

``Loss.loss`` (``train_score_``) is scikit-learn's gradient boosting's: the mean squared
error, the binomial deviance (twice the mean log loss), the mean multinomial log loss, the
mean absolute, Huber and pinball losses, half the Poisson and gamma deviances (up to
terms in y alone). Quantiles are scikit-learn's ``_weighted_percentile`` (the inverted
CDF: the smallest value whose cumulative weight reaches the share).
"""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.components.loss import Loss


# numpy's own (importing treekit loads no scipy): the logistic and softmax functions
def expit(x):
    """1 / (1 + exp(-x)) (scipy's expit, as scikit-learn's log loss computes it): where
    exp(-x) overflows, 1 / inf is 0, the limit. numpy's vectorised exp, in place: 1.7 ms
    at 1M rows, against 14 for the two branches of the stable form picked by a mask."""
    p = np.negative(x)
    with np.errstate(over="ignore"):
        np.exp(p, out=p)
    p += 1.0
    np.divide(1.0, p, out=p)
    return p


def logsumexp(raw, axis=1):
    top = raw.max(axis=axis, keepdims=True)
    return (top + np.log(np.exp(raw - top).sum(axis=axis, keepdims=True))).squeeze(axis)


def softmax(raw, axis=1):
    e = np.exp(raw - raw.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def weighted_percentile(values, weight, rank: float) -> float:
    """scikit-learn's ``_weighted_percentile(values, weight, rank)`` (rank in percent):
    the smallest value whose cumulative weight reaches rank / 100 of the total (a rank of
    0 takes the first value of positive weight). ``weight`` None (rows the user gave no
    weights): numpy's ``percentile`` (linear interpolation), as scikit-learn's
    ``DummyRegressor`` starts gradient boosting without sample weights."""
    if weight is None:
        return float(np.percentile(values, rank))
    order = np.argsort(values, kind="stable")
    cdf = np.cumsum(weight[order])
    target = rank / 100 * cdf[-1]
    if target == 0:
        target = np.nextafter(target, target + 1)
    index = min(int(np.searchsorted(cdf, target)), values.size - 1)
    return float(values[order[index]])


def _per_leaf(leaf, n_nodes, weight, rows_value):
    """{leaf: (its rows' values, weights)} over the rows of positive weight."""
    kept = weight > 0
    leaf, weight, rows_value = leaf[kept], weight[kept], rows_value[kept]
    order = np.argsort(leaf, kind="stable")
    bounds = np.searchsorted(leaf[order], np.arange(n_nodes + 1))
    return {
        node: (
            rows_value[order[bounds[node] : bounds[node + 1]]],
            weight[order[bounds[node] : bounds[node + 1]]],
        )
        for node in range(n_nodes)
        if bounds[node + 1] > bounds[node]
    }


def _check_alpha(instance, attribute, value):
    if not (isinstance(value, (int, float)) and 0 < value < 1):
        raise ValueError(f"loss parameter {attribute.name!r} must be in (0, 1), got {value!r}")


@attrs.define(frozen=True)
class SquaredError(Loss):
    name: ClassVar[str] = "squared_error"
    description: ClassVar[str] = "half the squared error; leaves: the mean residual"

    def initial_raw(self, y, weight, n_classes):
        return np.array([np.average(y, weights=weight)])

    def gradient_hessian(self, y, raw, state):
        return raw - y[:, None], np.ones_like(raw)

    def loss(self, y, raw, weight, state=None):
        """The mean squared error (scikit-learn's ``train_score_``: twice half of it)."""
        return float(np.average((y - raw[:, 0]) ** 2, weights=weight))


class _ResidualQuantileLeaves:
    """Leaves valued by a quantile of the residuals y - f (scikit-learn's line search for
    the absolute, Huber and pinball losses)."""

    def leaf_values(self, y, raw, gradient, hessian, weight, leaf, n_nodes, column, l2, state):
        values = np.zeros(n_nodes)
        residual = y - raw[:, column]
        for node, (r, w) in _per_leaf(leaf, n_nodes, weight, residual).items():
            values[node] = self._leaf_value(r, w, state)
        return values


@attrs.define(frozen=True)
class AbsoluteError(_ResidualQuantileLeaves, Loss):
    name: ClassVar[str] = "absolute_error"
    description: ClassVar[str] = "the absolute error; leaves: the median residual"

    def initial_raw(self, y, weight, n_classes):
        return np.array([weighted_percentile(y, weight, 50)])

    def gradient_hessian(self, y, raw, state):
        return np.where(raw > y[:, None], 1.0, -1.0), np.ones_like(raw)

    def _leaf_value(self, residual, weight, state):
        return weighted_percentile(residual, weight, 50)

    def loss(self, y, raw, weight, state=None):
        return float(np.average(np.abs(y - raw[:, 0]), weights=weight))


@attrs.define(frozen=True)
class Huber(_ResidualQuantileLeaves, Loss):
    name: ClassVar[str] = "huber"
    description: ClassVar[str] = "Huber's loss, delta the alpha-quantile of abs residuals"
    alpha: float = attrs.field(default=0.9, validator=_check_alpha)

    def initial_raw(self, y, weight, n_classes):
        return np.array([weighted_percentile(y, weight, 50)])

    def round_state(self, y, raw, weight):
        return {"delta": weighted_percentile(np.abs(y - raw[:, 0]), weight, 100 * self.alpha)}

    def gradient_hessian(self, y, raw, state):
        delta = state["delta"]
        residual = raw - y[:, None]
        clipped = np.where(residual >= 0, delta, -delta)
        return np.where(np.abs(residual) <= delta, residual, clipped), np.ones_like(raw)

    def _leaf_value(self, residual, weight, state):
        median = weighted_percentile(residual, weight, 50)
        diff = residual - median
        term = np.sign(diff) * np.minimum(state["delta"], np.abs(diff))
        return median + float(np.average(term, weights=weight))

    def loss(self, y, raw, weight, state=None):
        error = np.abs(y - raw[:, 0])
        # the round's delta (scikit-learn scores a round with the delta it was grown with)
        delta = (state or self.round_state(y, raw, weight))["delta"]
        return float(
            np.average(
                np.where(error <= delta, 0.5 * error**2, delta * (error - 0.5 * delta)),
                weights=weight,
            )
        )


@attrs.define(frozen=True)
class Quantile(_ResidualQuantileLeaves, Loss):
    name: ClassVar[str] = "quantile"
    description: ClassVar[str] = "the pinball loss of the alpha-quantile"
    alpha: float = attrs.field(default=0.9, validator=_check_alpha)

    def initial_raw(self, y, weight, n_classes):
        return np.array([weighted_percentile(y, weight, 100 * self.alpha)])

    def gradient_hessian(self, y, raw, state):
        above = y[:, None] >= raw
        return np.where(above, -self.alpha, 1.0 - self.alpha), np.ones_like(raw)

    def _leaf_value(self, residual, weight, state):
        return weighted_percentile(residual, weight, 100 * self.alpha)

    def loss(self, y, raw, weight, state=None):
        diff = y - raw[:, 0]
        pinball = np.where(diff >= 0, self.alpha * diff, (self.alpha - 1.0) * diff)
        return float(np.average(pinball, weights=weight))


class _LogLink:
    """A count or a positive measurement on the log scale."""

    onnx_link: ClassVar[str] = "exp"

    def initial_raw(self, y, weight, n_classes):
        """The log of the (weighted) mean: the best constant of both deviances."""
        return np.array([np.log(np.average(y, weights=weight))])

    def link(self, raw):
        return np.exp(raw[:, 0])


@attrs.define(frozen=True)
class Poisson(_LogLink, Loss):
    name: ClassVar[str] = "poisson"
    prefers_newton_gain: ClassVar[bool] = True
    description: ClassVar[str] = "half the Poisson deviance, log link; Newton leaves"

    def check_y(self, y):
        if (y < 0).any() or y.sum() <= 0:
            raise ValueError("loss 'poisson' needs y >= 0 with a positive sum (counts or rates)")

    def gradient_hessian(self, y, raw, state):
        mean = np.exp(raw)
        return mean - y[:, None], mean

    def loss(self, y, raw, weight, state=None):
        return float(np.average(np.exp(raw[:, 0]) - y * raw[:, 0], weights=weight))


@attrs.define(frozen=True)
class Gamma(_LogLink, Loss):
    name: ClassVar[str] = "gamma"
    prefers_newton_gain: ClassVar[bool] = True
    description: ClassVar[str] = "half the gamma deviance, log link; Newton leaves"

    def check_y(self, y):
        if (y <= 0).any():
            raise ValueError("loss 'gamma' needs y > 0 (positive measurements)")

    def gradient_hessian(self, y, raw, state):
        scaled = y[:, None] * np.exp(-raw)
        return 1.0 - scaled, scaled

    def loss(self, y, raw, weight, state=None):
        return float(np.average(raw[:, 0] + y * np.exp(-raw[:, 0]), weights=weight))


@attrs.define(frozen=True)
class LogLoss(Loss):
    """The binomial (two classes: one raw column, the log-odds of the second) or
    multinomial (K columns, scikit-learn's symmetric link: raw = log p - mean log p) log
    loss; y holds class codes 0..K-1."""

    name: ClassVar[str] = "log_loss"
    description: ClassVar[str] = "the log loss (binomial or multinomial); Newton leaves"
    reads: ClassVar[str] = "class labels"
    onnx_link: ClassVar[str] = "logistic"  # one raw column; more: softmax (onnx_model.py)
    prefers_newton_gain: ClassVar[bool] = True

    def n_raw(self, n_classes):
        return 1 if n_classes <= 2 else n_classes

    def initial_raw(self, y, weight, n_classes):
        shares = np.array([np.average(y == k, weights=weight) for k in range(n_classes)])
        eps = np.finfo(np.float64).eps
        shares = np.clip(shares, eps, 1 - eps)
        if n_classes <= 2:
            return np.array([np.log(shares[1] / (1 - shares[1]))])
        logs = np.log(shares)
        return logs - logs.mean()

    def gradient_hessian(self, y, raw, state):
        if raw.shape[1] == 1:  # expit's p - [y = 1] and p (1 - p), one pass on the threads
            from treekit_core.kernels.row_passes import logistic_gradient_hessian, on_row_threads

            gradient, hessian = np.empty(raw.shape), np.empty(raw.shape)
            y_numbers = np.ascontiguousarray(y, dtype=np.float64)
            # one contiguous column each (n x 1 arrays: views)
            arguments = (np.ascontiguousarray(raw[:, 0]), y_numbers, gradient[:, 0], hessian[:, 0])
            on_row_threads(logistic_gradient_hessian, y.size, *arguments)
            return gradient, hessian
        p = softmax(raw, axis=1)
        onehot = y[:, None] == np.arange(raw.shape[1])
        return p - onehot, p * (1 - p)

    def gradient_hessian_scored(self, y, raw, state, weight, scored_state):
        if raw.shape[1] > 1:
            return super().gradient_hessian_scored(y, raw, state, weight, scored_state)
        # the gradient, the hessian and the deviance from one exp a row, on the threads:
        # the same gradient and deviance bits as the two passes apart
        from treekit_core.kernels.row_passes import binomial_deviance_mean

        gradient, hessian = np.empty(raw.shape), np.empty(raw.shape)
        half_deviance = binomial_deviance_mean(raw, y, weight, gradient, hessian)
        return gradient, hessian, 2 * half_deviance

    def leaf_values(self, y, raw, gradient, hessian, weight, leaf, n_nodes, column, l2, state):
        values = super().leaf_values(
            y, raw, gradient, hessian, weight, leaf, n_nodes, column, l2, state
        )
        K = raw.shape[1]
        return values * ((K - 1) / K) if K > 1 else values

    def link(self, raw):
        if raw.shape[1] == 1:
            p = expit(raw[:, 0])
            return np.column_stack([1 - p, p])
        return softmax(raw, axis=1)

    def loss(self, y, raw, weight, state=None):
        if raw.shape[1] == 1:  # the binomial deviance (scikit-learn's train_score_)
            # log(1 + exp(f)) rearranged not to overflow, within 3 ulp of np.logaddexp;
            # compiled, on the threads, the same bits on any number of them
            from treekit_core.kernels.row_passes import binomial_deviance_mean

            return 2 * binomial_deviance_mean(raw, y, weight)
        picked = raw[np.arange(y.size), y.astype(np.int64)]
        return float(np.average(logsumexp(raw, axis=1) - picked, weights=weight))


@attrs.define(frozen=True, eq=False)
class RiskSets:
    """The follow-up times in order, which every round of Cox's partial likelihood reads:
    the stable order of the times, the events in that order, and for each sorted row the
    first and the last row tied with its time (its risk set starts at the first; the events
    up to the last have it in theirs). The times do not change between rounds, so a fit
    sorts them once (:meth:`Cox.fit_state`)."""

    order: np.ndarray
    event: np.ndarray
    first_tied: np.ndarray
    last_tied: np.ndarray

    @classmethod
    def of(cls, time, event):
        order = np.argsort(time, kind="stable")
        t = time[order]
        return cls(
            order=order,
            event=event[order],
            first_tied=np.searchsorted(t, t, side="left"),
            last_tied=np.searchsorted(t, t, side="right") - 1,
        )


def _cox_parts(sets, raw, weight):
    """(negative gradient, hessian, the weighted partial log-likelihood's negative) of
    Cox's partial likelihood with Breslow's ties at the log hazard ratios ``raw``, the
    follow-up times given as their :class:`RiskSets`: a row's risk set is every row with
    time >= its own (ties included); with weights w, S_j sums w r over row j's risk set
    (r = exp(raw)) and row m's negative gradient is d_m - r_m sum over events j with
    t_j <= t_m of w_j / S_j (per unit of its own weight, which the tree applies), its
    hessian r_m A_m - r_m^2 B_m with the sums of w_j / S_j and w_j / S_j^2. ``weight``
    None: every row weighs 1."""
    order, d = sets.order, sets.event
    r = np.exp(raw[order])
    w = np.ones(r.size) if weight is None else weight[order]
    at_risk = np.cumsum((w * r)[::-1])[::-1][sets.first_tied]
    events = w * d
    first = np.cumsum(np.where(d > 0, events / at_risk, 0.0))[sets.last_tied]
    second = np.cumsum(np.where(d > 0, events / at_risk**2, 0.0))[sets.last_tied]
    negative, hessian = np.empty_like(r), np.empty_like(r)
    negative[order] = d - r * first
    hessian[order] = r * first - r * r * second
    loss = -float(np.sum(events * (raw[order] - np.log(at_risk))))
    return negative, hessian, loss


@attrs.define(frozen=True)
class Cox(Loss):
    """Cox's partial likelihood (Breslow's ties) for censored follow-up: the raw
    prediction is the log hazard ratio, starting from 0; a leaf adds the weighted mean of
    its rows' negative gradient (scikit-survival's ``coxph`` boosting), or with
    ``newton=True`` the Newton step of its summed gradients and hessians. ``loss``: the
    negative partial log-likelihood, summed (scikit-survival's ``train_score_``)."""

    name: ClassVar[str] = "cox"
    description: ClassVar[str] = "Cox's partial likelihood (Breslow ties), log hazard ratios"
    reads: ClassVar[str] = "censored follow-up"
    newton: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))

    def check_y(self, y):
        if not (y[:, 1] > 0).any():
            raise ValueError("loss 'cox' needs at least one event in y")

    def initial_raw(self, y, weight, n_classes):
        return np.zeros(1)

    def fit_state(self, y, weight):
        return {"risk_sets": RiskSets.of(y[:, 0], y[:, 1])}

    def round_state(self, y, raw, weight):
        return {"weight": weight}

    def _as_gradient_hessian(self, negative, hessian):
        """The (gradient, hessian) columns the rounds read from _cox_parts' rows."""
        if not self.newton:
            hessian = np.ones_like(hessian)  # leaves: the mean negative gradient
        return -negative[:, None], hessian[:, None]

    @staticmethod
    def _risk_sets(y, state):
        """The fit's risk sets (:meth:`fit_state`), or y's own outside a fit."""
        return state.get("risk_sets") or RiskSets.of(y[:, 0], y[:, 1])

    def gradient_hessian(self, y, raw, state):
        sets, weight = self._risk_sets(y, state), state.get("weight")
        negative, hessian, _ = _cox_parts(sets, raw[:, 0], weight)
        return self._as_gradient_hessian(negative, hessian)

    def gradient_hessian_scored(self, y, raw, state, weight, scored_state):
        # the risk sums of the gradient are the score's where both weigh the rows alike:
        # one pass (a weight of 1 is no weight: the same bits)
        round_weight = state.get("weight")
        alike = weight is round_weight or (
            weight is None and (round_weight is None or bool(np.all(round_weight == 1.0)))
        )
        if not alike:
            return super().gradient_hessian_scored(y, raw, state, weight, scored_state)
        sets = self._risk_sets(y, state)
        negative, hessian, loss = _cox_parts(sets, raw[:, 0], round_weight)
        return (*self._as_gradient_hessian(negative, hessian), loss)

    def loss(self, y, raw, weight, state=None):
        # sorts y's own times: the fit's validation rows are scored with the round's state
        return _cox_parts(RiskSets.of(y[:, 0], y[:, 1]), raw[:, 0], weight)[2]


BUILTIN_LOSSES = [SquaredError, AbsoluteError, Huber, Quantile, Poisson, Gamma, LogLoss, Cox]
