"""The base of every component, and what all kinds share."""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

#: Decision index meaning "no class"; never a valid class index.
ABSTAIN = -1


def json_value(value):
    """A JSON-able copy of a parameter value (numpy arrays and scalars become Python ones)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    return value


@attrs.define(slots=False)
class Component:
    """Base of every component kind.

    A component is an attrs class: its attributes are its parameters, validated when it is
    constructed. It holds no fitted state; what it learns from training data it returns
    as a plain dict that the tree stores, so a model is saved as JSON.
    """

    name: ClassVar[str] = ""
    """Registry name (unique within the kind). Users compose by this name; read when the
    registry is assembled and in every message that names the component."""

    kind: ClassVar[str] = ""
    """Which step the component performs; set by each kind's base class. Read in messages
    (``splitter 'c45' ...``)."""

    description: ClassVar[str] = ""
    """One line, read by ``treekit plugins`` to list the component."""

    sees_features: ClassVar[bool] = False
    """Whether the component reads X (set by the kinds that do: splitter, propagator,
    evaluator, confidence). Read by ``fit`` and ``predict`` with :attr:`handles_missing`."""

    handles_missing: ClassVar[bool] = False
    """Whether the component copes with NaN in X. Read by ``fit`` and ``predict``: NaN is
    accepted only when every component that sees X (:attr:`sees_features`) says True."""

    provides: ClassVar[frozenset] = frozenset()
    """Capabilities this component offers to the others (see
    :data:`treekit_core.components.CAPABILITIES`). Read by the composition check at fit."""

    requires: ClassVar[dict] = {}
    """Kind -> capabilities this component needs from that kind's component. Read by the
    composition check at fit, which refuses a composition naming both components."""

    def get_params(self) -> dict:
        """The component's parameters as a JSON-able dict (attribute name -> value). Called
        when a model is saved and when a composition is described."""
        return {f.name: json_value(getattr(self, f.name)) for f in attrs.fields(type(self))}

    @classmethod
    def parameter_names(cls) -> list[str]:
        """Names of the parameters, for messages that suggest the nearest one."""
        return [f.name for f in attrs.fields(cls)]

    def requirements(self) -> dict:
        """Kind -> capabilities needed from that kind, as the composition check reads them.
        Default: :attr:`requires`. A kind whose needs follow from another declared member
        (a propagator producing fractional weights) adds them here."""
        return dict(self.requires)

    def check_data(self, data) -> None:
        """Raise ValueError when this component cannot handle the training data. Called once
        per fit, after the composition check, with the :class:`TrainingData`."""

    def check_composition(self, composition) -> None:
        """Raise CompositionError when the other components' *parameters* contradict this
        one's. Called once per fit; capabilities are checked generically through
        :attr:`provides` / :attr:`requires`, so only parameter conflicts belong here."""
