"""Tsallis entropy of order q: (1 - sum_k p_k^q) / (q - 1); q -> 1 gives Shannon (nats),
q = 2 Gini."""

from typing import ClassVar

import attrs
import numpy as np

from treekit_core import Criterion, hookimpl

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
