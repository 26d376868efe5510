"""Built-in pruner ``none``."""

from __future__ import annotations

from typing import ClassVar

import attrs

from treekit_core.components import Pruner


@attrs.define(slots=False)
class NoPruning(Pruner):
    name: ClassVar[str] = "none"
    description: ClassVar[str] = "keep the grown tree as it is"

    def prune(self, tree, context):
        return tree
