"""The pruner: turns a grown tree into the final tree."""

from __future__ import annotations

from typing import ClassVar

import attrs

from treekit_core.components.base import Component


@attrs.define(slots=False)
class Pruner(Component):
    """Turns a grown tree into the final tree (may refit the composition, e.g. for CV)."""

    kind: ClassVar[str] = "pruner"
    provides: ClassVar[frozenset] = frozenset({"fractional_weights"})

    def prune(self, tree, context):  # pragma: no cover - abstract
        """Return the pruned :class:`treekit_core.Tree`; never a larger one. Called once per
        fit, after the tree is grown and labelled.

        ``context`` is a :class:`treekit_core.PruningContext`: the training data, the
        composition (to regrow on folds), the labeler and a random generator.
        """
        raise NotImplementedError
