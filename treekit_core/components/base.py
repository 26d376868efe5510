"""The base of every component, and what all kinds share."""

from __future__ import annotations

import math
from typing import ClassVar

import attrs
import numpy as np

#: Decision index meaning "no class"; never a valid class index.
ABSTAIN = -1


_NON_FINITE_TEXT = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def json_value(value, non_finite_as_text: bool = False):
    """A JSON-able copy of ``value``: numpy arrays and scalars become Python lists and
    numbers, tuples lists, dict keys strings; with ``non_finite_as_text`` NaN and +-inf
    become the strings ``"nan"``, ``"inf"``, ``"-inf"`` (strict JSON has no such numbers;
    the model file writes them so). The one JSON cleaning of treekit: component parameters,
    estimator parameters and model files all go through it."""
    if isinstance(value, np.ndarray):
        return _array_json(value, non_finite_as_text)
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        value = value.item()
    if isinstance(value, float) and non_finite_as_text and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (list, tuple)):
        return [json_value(v, non_finite_as_text) for v in value]
    if isinstance(value, dict):
        return {str(k): json_value(v, non_finite_as_text) for k, v in value.items()}
    return value


def _array_json(array: np.ndarray, non_finite_as_text: bool):
    """:func:`json_value` of a numpy array in whole-array steps: its list, non-finite
    floats written as text only where there are any (a tree's arrays hold hundreds of
    thousands of numbers)."""
    if array.dtype.kind == "f" and non_finite_as_text:
        finite = np.isfinite(array)
        if not finite.all():
            cells = array.astype(object)
            cells[np.isnan(array)] = "nan"
            cells[np.isposinf(array)] = "inf"
            cells[np.isneginf(array)] = "-inf"
            return cells.tolist()
    if array.dtype.kind in "fiub":
        return array.tolist()
    return [json_value(v, non_finite_as_text) for v in array.tolist()]


def from_json_value(value):
    """Inverse of ``json_value(..., non_finite_as_text=True)`` for numeric lists: the
    strings ``"nan"``, ``"inf"``, ``"-inf"`` become the numbers (other strings are kept).
    A list of numbers alone (what numpy reads as a numeric array) is returned as it is,
    without a look at each element."""
    if isinstance(value, list):
        if value and not isinstance(value[0], (dict, str)):
            try:
                kind = np.asarray(value).dtype.kind
            except (ValueError, TypeError, OverflowError):  # ragged, or not numbers
                kind = "O"
            if kind in "fiub":
                return value
        return [from_json_value(v) for v in value]
    if isinstance(value, str) and value in _NON_FINITE_TEXT:
        return _NON_FINITE_TEXT[value]
    return value


def state_array(
    state, key: str, shape: tuple, where: str, *, allow_inf=False, minimum=None, integer=False
) -> np.ndarray:
    """``state[key]`` as a float array of exactly ``shape``, finite (or +-inf when
    ``allow_inf``; never NaN), at least ``minimum``, integer-valued when ``integer``;
    otherwise a ValueError saying ``model file: <where>.<key> ...`` and what was expected."""
    field = f"model file: {where}.{key}"
    if not isinstance(state, dict) or key not in state:
        raise ValueError(f"{field} is missing")
    try:
        values = np.asarray(state[key], dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{field} is not an array of numbers") from None
    if values.shape != tuple(shape):
        raise ValueError(f"{field} has shape {values.shape}, expected {tuple(shape)}")
    bad = np.isnan(values) | (~np.isfinite(values) if not allow_inf else False)
    if np.any(bad):
        raise ValueError(f"{field} holds {'NaN' if allow_inf else 'NaN or infinite'} values")
    if minimum is not None and (values < minimum).any():
        raise ValueError(f"{field} holds values below {minimum}")
    if integer and (values != np.round(values)).any():
        raise ValueError(f"{field} must hold integers")
    return values


#: The registry's answers to "is this component registered under its name?" and "make the
#: component of this kind, name and parameters": pickling needs both, and the registry sits
#: in the layer above, so it links them here when it is imported (:func:`link_registry`).
#: ``import treekit_core`` imports the registry, so they are there before any unpickling.
_REGISTRY_LINK: dict = {}


def link_registry(is_registered, recreate) -> None:
    """Called once by :mod:`treekit_core.registry` with its two functions."""
    _REGISTRY_LINK.update(is_registered=is_registered, recreate=recreate)


def recreate_component(kind: str, name: str, params: dict):
    """A component from its kind, name and parameters, through the registry: what a
    pickled component is unpickled with."""
    return _REGISTRY_LINK["recreate"](kind, name, params)


@attrs.define(slots=False)
class FittedAfterGrowth:
    """What the components that learn their state after growth and pruning (the evaluator
    and the confidence: ``fit(tree, data, labeler)``) share."""

    @property
    def reads_training_rows(self) -> bool:
        """Whether ``fit`` reads the training rows (X, the target's rows, the weights) and
        not only the tree: True unless the component says otherwise. Read by
        ``Composition.check_finish_without_rows`` (``fit_grown_tree``), which finishes a
        tree grown elsewhere without its rows and refuses such a component, naming it."""
        return True


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

    capability_descriptions: ClassVar[dict] = {}
    """Name -> one line saying what a capability means, for the capabilities this component
    provides or requires beyond the core's (:data:`treekit_core.components.CAPABILITIES`),
    so a third party's capability is explained, not repeated, when a composition is refused
    (a capability no component describes is named alone). Read by the composition check."""

    def __reduce_ex__(self, protocol):
        """Pickled by kind, name and parameters and re-created through the registry (so a
        missing plugin gives the registry's clear error, as loading a JSON model does); a
        component that is not registered under its name is pickled by its class (object's
        own reduction: this is ``__reduce_ex__``, not ``__reduce__``, which object's would
        call back without end)."""
        is_registered = _REGISTRY_LINK.get("is_registered")
        if is_registered is None or not is_registered(self):
            return object.__reduce_ex__(self, protocol)
        return recreate_component, (self.kind, self.name, self.get_params())

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

    def check_state(self, state, tree) -> None:
        """Raise ValueError naming the field when ``state`` (what this component's ``fit``
        returned, read back from a model file) does not fit ``tree``: lengths against the
        tree's node, feature and class counts, finiteness, ranges. Called when a model is
        loaded, before any kernel reads the state. Default: accept (components whose ``fit``
        returns ``{}``). :func:`state_array` does the usual checks."""

    def check_composition(self, composition) -> None:
        """Raise CompositionError when the other components' *parameters* contradict this
        one's. Called once per fit; capabilities are checked generically through
        :attr:`provides` / :attr:`requires`, so only parameter conflicts belong here."""
