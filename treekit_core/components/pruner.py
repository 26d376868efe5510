"""The pruner: turns a grown tree into the final tree."""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

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

    def path_table(self, state: dict) -> dict:
        """The pruner's record (``component_state["pruner"]``) as columns of equal length,
        one row per candidate subtree, so ``pandas.DataFrame(model.pruning_path_)`` works.
        Called by ``pruning_path_`` (and so ``cp_table`` and ``treekit path``). The default
        makes every value a column: a scalar becomes one row."""
        columns = {key: np.atleast_1d(np.asarray(value)) for key, value in state.items()}
        lengths = {column.shape[0] for column in columns.values()}
        if len(lengths) > 1:
            raise ValueError(
                f"pruner {self.name!r} records columns of lengths {sorted(lengths)}; override "
                "path_table to say which belong together"
            )
        return columns
