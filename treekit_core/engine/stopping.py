"""Stopping rules with scikit-learn's meaning, plus the handout's gain threshold beta."""

from __future__ import annotations

import math
import numbers

import attrs


def _check_max_depth(inst, attribute, value):
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"max_depth must be None or an int >= 1, got {value!r}")


def _check_max_leaf_nodes(inst, attribute, value):
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 2:
        raise ValueError(f"max_leaf_nodes must be None or an int >= 2, got {value!r}")


def _check_min_samples_split(inst, attribute, value):
    if isinstance(value, bool):
        raise ValueError(
            f"min_samples_split must be an int >= 2 or a float in (0, 1], got {value!r}"
        )
    if isinstance(value, numbers.Integral):
        if value < 2:
            raise ValueError(
                f"min_samples_split must be an int >= 2 or a float in (0, 1], got {value!r}"
            )
    elif not (isinstance(value, numbers.Real) and 0.0 < value <= 1.0):
        raise ValueError(
            f"min_samples_split must be an int >= 2 or a float in (0, 1], got {value!r}"
        )


def _check_min_samples_leaf(inst, attribute, value):
    if isinstance(value, bool):
        raise ValueError(
            f"min_samples_leaf must be an int >= 1 or a float in (0, 1), got {value!r}"
        )
    if isinstance(value, numbers.Integral):
        if value < 1:
            raise ValueError(
                f"min_samples_leaf must be an int >= 1 or a float in (0, 1), got {value!r}"
            )
    elif not (isinstance(value, numbers.Real) and 0.0 < value < 1.0):
        raise ValueError(
            f"min_samples_leaf must be an int >= 1 or a float in (0, 1), got {value!r}"
        )


def _check_fraction(inst, attribute, value):
    if not (isinstance(value, numbers.Real) and 0.0 <= value <= 0.5):
        raise ValueError(f"min_weight_fraction_leaf must be a float in [0, 0.5], got {value!r}")


def _check_non_negative(inst, attribute, value):
    if not (isinstance(value, numbers.Real) and value >= 0.0 and math.isfinite(value)):
        raise ValueError(f"{attribute.name} must be a finite float >= 0, got {value!r}")


def _check_min_gain(inst, attribute, value):
    if value is not None and not (isinstance(value, numbers.Real) and math.isfinite(value)):
        raise ValueError(f"min_gain must be None or a finite float, got {value!r}")


#: A depth no tree reaches (the grow loop's node budget stops far earlier).
UNLIMITED_DEPTH = 2**31 - 1


@attrs.frozen
class StoppingRules:
    """When a node becomes a leaf. Fractions are resolved against the training set."""

    max_depth: int | None = attrs.field(default=None, validator=_check_max_depth)
    min_samples_split: int | float = attrs.field(default=2, validator=_check_min_samples_split)
    min_samples_leaf: int | float = attrs.field(default=1, validator=_check_min_samples_leaf)
    min_weight_fraction_leaf: float = attrs.field(default=0.0, validator=_check_fraction)
    min_impurity_decrease: float = attrs.field(default=0.0, validator=_check_non_negative)
    min_gain: float | None = attrs.field(default=None, validator=_check_min_gain)
    #: Grow best first up to this many leaves (None: depth first, no limit).
    max_leaf_nodes: int | None = attrs.field(default=None, validator=_check_max_leaf_nodes)

    def resolve(self, n_samples: int, total_weight: float) -> "ResolvedRules":
        """The rules in kernel units. Counts beyond the training set act as the training
        set's size plus one (no node holds more samples), so any Python int is accepted
        without overflowing the kernels' 64-bit integers."""
        if isinstance(self.min_samples_leaf, numbers.Integral):
            min_leaf = int(self.min_samples_leaf)
        else:
            min_leaf = int(math.ceil(self.min_samples_leaf * n_samples))
        if isinstance(self.min_samples_split, numbers.Integral):
            min_split = int(self.min_samples_split)
        else:
            min_split = max(2, int(math.ceil(self.min_samples_split * n_samples)))
        beyond = n_samples + 1
        min_leaf, min_split = min(min_leaf, beyond), min(min_split, 2 * beyond)
        return ResolvedRules(
            max_depth=min(self.max_depth, UNLIMITED_DEPTH)
            if self.max_depth is not None
            else UNLIMITED_DEPTH,
            min_samples_split=max(min_split, 2 * min_leaf),
            min_samples_leaf=min_leaf,
            min_weight_leaf=self.min_weight_fraction_leaf * total_weight,
            min_impurity_decrease=float(self.min_impurity_decrease),
            min_gain=self.min_gain,
            total_weight=float(total_weight),
        )


@attrs.frozen
class ResolvedRules:
    """The stopping rules in the units kernels compare against (``StoppingRules.resolve``):
    what a splitter's ``prepare(data, criterion, rules)`` and ``find_split(state, node,
    rules)`` receive as ``rules``. ``max_depth`` (a large number when unlimited),
    ``min_samples_split`` and ``min_samples_leaf`` in rows, ``min_weight_leaf`` in weight
    (``min_weight_fraction_leaf`` times the training weight), ``min_impurity_decrease``
    and ``min_gain`` (None when unset) as given, ``total_weight`` the training weight. A
    splitter honours ``min_samples_leaf`` and ``min_weight_leaf`` in every child; the grow
    loop applies the others."""

    max_depth: int
    min_samples_split: int
    min_samples_leaf: int
    min_weight_leaf: float
    min_impurity_decrease: float
    min_gain: float | None
    total_weight: float
