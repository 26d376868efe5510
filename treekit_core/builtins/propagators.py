"""Built-in propagator ``hard``: a sample goes left when x[feature] <= threshold."""

from __future__ import annotations

from typing import ClassVar

import attrs

from treekit_core.components import Propagator
from treekit_core.engine.questions import left_share


@attrs.define(slots=False)
class HardPropagator(Propagator):
    """A sample goes to the child its answer names; a sample with a missing tested value
    goes to both, weighted by the split's missing share (C4.5)."""

    name: ClassVar[str] = "hard"
    description: ClassVar[str] = (
        "each training sample goes to exactly one child (missing values: both, C4.5)"
    )
    handles_missing: ClassVar[bool] = True
    provides: ClassVar[frozenset] = frozenset({"hard_partition"})

    def propagate(self, state, data, node, split):
        share = left_share(data.X[node.rows], split)
        if not data.has_missing:
            goes_left = share > 0.5
            return (
                (node.rows[goes_left], node.row_weights[goes_left]),
                (node.rows[~goes_left], node.row_weights[~goes_left]),
            )
        left_w, right_w = node.row_weights * share, node.row_weights * (1.0 - share)
        keep_left, keep_right = left_w > 0, right_w > 0
        return (
            (node.rows[keep_left], left_w[keep_left]),
            (node.rows[keep_right], right_w[keep_right]),
        )
