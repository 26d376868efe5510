"""Leaf decision rules for imbalanced data.

``asymmetric_thresholds`` (Marcellin, Zighed & Ritschard): class k qualifies when its
proportion reaches its threshold, p_k >= delta_k (inclusive, with a 1e-12 tolerance for
floating point). One qualifying class is decided; several: the largest p_k / delta_k wins
(our choice for K classes, the paper treats two); none: the leaf abstains.

``cost_matrix`` (the decision of minimum expected cost, the baseline the paper compares
with) is CART's cost rule and is built into treekit_core (rpart's ``loss`` uses it); it is
re-exported here for code written against earlier versions of this plugin.

Both apply to leaf distributions and, unchanged, to the mixtures of soft evaluation and
forests, because they decide from a distribution.
"""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core import ABSTAIN, Labeler, hookimpl
from treekit_core.builtins import CostMatrix

__all__ = ["AsymmetricThresholds", "CostMatrix"]

#: The treekit plugin API this plugin is written for (see treekit_core's CHANGELOG.md).
TREEKIT_PLUGIN_API = 4

TOLERANCE = 1e-12


def _check_thresholds(instance, attribute, value):
    try:
        values = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"thresholds must be a list of numbers in (0, 1], one per class, got {value!r}"
        ) from None
    if values.ndim != 1 or values.size < 2:
        raise ValueError(
            f"thresholds must be a list with one value per class (at least two), got {value!r}"
        )
    if not ((values > 0) & (values <= 1)).all():
        raise ValueError(f"every threshold must be in (0, 1], got {value!r}")


@attrs.define(slots=False)
class AsymmetricThresholds(Labeler):
    """``thresholds``: the minimum proportion for deciding each class, in the order of
    ``classes_``. Two classes with cancer as ``classes_[1]``: ``[0.9, 0.2]`` decides cancer
    from 20% cancer on, healthy from 90% healthy on, and abstains in between."""

    name: ClassVar[str] = "asymmetric_thresholds"
    description: ClassVar[str] = (
        "decide a class when its proportion reaches its own threshold; else abstain"
    )
    thresholds: list = attrs.field(default=None, validator=_check_thresholds)

    @property
    def can_abstain(self) -> bool:
        return True

    def check_data(self, data) -> None:
        if len(self.thresholds) != data.n_statistics:
            raise ValueError(
                f"labeler 'asymmetric_thresholds': {len(self.thresholds)} thresholds for "
                f"{data.n_statistics} classes; give one per class in the order of classes_"
            )

    def decide(self, proba):
        delta = np.asarray(self.thresholds, dtype=np.float64)
        qualifies = proba >= delta - TOLERANCE
        ratio = np.where(qualifies, proba / delta, -np.inf)
        best = np.argmax(ratio, axis=1)
        return np.where(qualifies.any(axis=1), best, ABSTAIN).astype(np.int64)


@hookimpl
def treekit_labelers():
    return [AsymmetricThresholds]
