"""The propagator: sends a node's training samples to its children."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from treekit_core.components.base import Component

#: The kinds that must handle fractional sample weights when the propagator produces them.
_FRACTIONAL_WEIGHT_READERS = ("criterion", "splitter", "pruner")


@attrs.define(slots=False)
class Propagator(Component):
    """Sends a node's training samples to its children (hard: one child; soft: both,
    weighted)."""

    kind: ClassVar[str] = "propagator"
    sees_features: ClassVar[bool] = True

    produces_fractional_weights: ClassVar[bool] = False
    """True when a sample may reach several children with parts of its weight (soft
    propagation). Read at fit: the criterion, splitter and pruner must then provide
    ``fractional_weights``, and the stopping rules count rows by the fraction of their
    weight that reached the node."""

    node_field_names: ClassVar[tuple] = ()
    """Names of the per-node values this propagator adds to :attr:`Split.node_fields` in
    :meth:`propagate` (e.g. surrogate splits). Read once per fit by the grow loop, which
    stores one column per name in the tree, NaN at nodes that do not set it."""

    def requirements(self) -> dict:
        needs = {kind: frozenset(caps) for kind, caps in self.requires.items()}
        if self.produces_fractional_weights:
            for kind in _FRACTIONAL_WEIGHT_READERS:
                needs[kind] = needs.get(kind, frozenset()) | {"fractional_weights"}
        return needs

    def prepare(self, data) -> Any:
        """Precompute what propagation needs. Called once per grown tree; the result is
        passed to every :meth:`propagate`. Default: None."""
        return None

    def propagate(self, state, data, node, split):  # pragma: no cover - abstract
        """Return ``((left_rows, left_weights), (right_rows, right_weights))``. Called once
        per split node, after the splitter found ``split``, before the tree records it: the
        propagator may add node fields to ``split`` and re-ask a threshold question as
        another kind answering alike, its threshold moved within the gap the node's rows
        leave (rpart's surrogate propagator asks ``below_cut``: x < cut)."""
        raise NotImplementedError

    def node_notes(self, tree, node, context) -> list[str]:
        """Extra lines ``export_text`` prints under an internal node's question (e.g. its
        surrogate splits); ``context`` is a QuestionTextContext. Called once per internal
        node by ``TreeClassifier.export_text``. Default: none."""
        return []
