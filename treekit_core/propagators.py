"""Built-in propagator ``hard``: a sample goes left when x[feature] <= threshold."""
from __future__ import annotations

from typing import ClassVar

import attrs

from treekit_core.components import Propagator


@attrs.define(slots=False)
class Hard(Propagator):
    name: ClassVar[str] = "hard"
    description: ClassVar[str] = "each training sample goes to exactly one child"

    def propagate(self, state, data, node, split):
        goes_left = data.X[node.rows, split.feature] <= split.threshold
        goes_right = ~goes_left
        return ((node.rows[goes_left], node.row_weights[goes_left]),
                (node.rows[goes_right], node.row_weights[goes_right]))
