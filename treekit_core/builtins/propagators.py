"""Built-in propagator ``hard``: a sample goes to the branch its answer names."""

from __future__ import annotations

from typing import ClassVar

import attrs

from treekit_core.components import Propagator
from treekit_core.engine.questions import route_rows
from treekit_core.registry import get_registry


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
        question = get_registry().question(split.question)  # as any plugin resolves it
        return route_rows(data.X, node.rows, node.row_weights, split, question)
