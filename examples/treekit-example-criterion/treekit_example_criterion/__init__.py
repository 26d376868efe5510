"""Tsallis entropy of order q: (1 - sum_k p_k^q) / (q - 1); q -> 1 gives Shannon (nats),
q = 2 Gini. And a loss for gradient boosting: the pseudo-Huber loss, its gradient and
hessian plain Python functions of one row that treekit compiles."""

from typing import ClassVar

import attrs
import numpy as np

from treekit_core import Criterion, ElementwiseLoss, hookimpl

#: The treekit plugin API this plugin is written for (see treekit_core's CHANGELOG.md).
TREEKIT_PLUGIN_API = 4


def tsallis(class_sums, total_weight, params):
    if total_weight <= 0.0:
        return 0.0
    s = 0.0
    for k in range(class_sums.shape[0]):
        s += (class_sums[k] / total_weight) ** params[0]
    return (1.0 - s) / (params[0] - 1.0)


@attrs.define(slots=False)
class Tsallis(Criterion):
    name: ClassVar[str] = "tsallis"
    description: ClassVar[str] = "Tsallis entropy of order q"
    symmetric: ClassVar[bool] = True
    q: float = attrs.field(default=2.0, validator=attrs.validators.gt(1.0))
    impurity = staticmethod(tsallis)

    def impurity_params(self, n_classes):
        return np.array([self.q])


@hookimpl
def treekit_criteria():
    return [Tsallis]


# -- a loss for gradient boosting, written as plain Python row functions ------------------
def pseudo_huber_gradient(y, raw, params):
    r = raw - y
    return r / np.sqrt(1.0 + (r / params[0]) ** 2)


def pseudo_huber_hessian(y, raw, params):
    u = 1.0 + ((raw - y) / params[0]) ** 2
    return 1.0 / (u * np.sqrt(u))


def pseudo_huber_loss(y, raw, params):
    delta = params[0]
    return delta * delta * (np.sqrt(1.0 + ((raw - y) / delta) ** 2) - 1.0)


@attrs.define(frozen=True)
class PseudoHuber(ElementwiseLoss):
    """The pseudo-Huber loss delta^2 (sqrt(1 + (r / delta)^2) - 1), r = raw - y: squared
    error near 0, absolute error far out, smooth everywhere (Newton leaves)."""

    name: ClassVar[str] = "pseudo_huber"
    description: ClassVar[str] = "the pseudo-Huber loss, smooth between squared and absolute"
    delta: float = attrs.field(default=1.0, validator=attrs.validators.gt(0.0))
    row_gradient = staticmethod(pseudo_huber_gradient)
    row_hessian = staticmethod(pseudo_huber_hessian)
    row_loss = staticmethod(pseudo_huber_loss)

    def loss_params(self):
        return np.array([self.delta])

    def initial_raw(self, y, weight, n_classes):
        """The best constant: Newton steps from the median (the loss is convex)."""
        w = np.ones_like(y) if weight is None else weight
        c = float(np.median(y))
        params = self.loss_params()
        for _ in range(50):
            step = np.sum(w * pseudo_huber_gradient(y, c, params)) / np.sum(
                w * pseudo_huber_hessian(y, c, params)
            )
            c -= step
            if abs(step) <= 1e-12 * max(1.0, abs(c)):
                break
        return np.array([c])


@hookimpl
def treekit_losses():
    return [PseudoHuber]
