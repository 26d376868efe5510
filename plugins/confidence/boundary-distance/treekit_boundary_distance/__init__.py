"""Boundary-distance confidence (Tóth & Pataki, 2006).

The confidence of a decision is the distance from the sample to the closest decision
boundary that separates different classes, i.e. to the nearest point of a leaf region with
another decision. Each leaf region of an axis-aligned tree is a box, and the nearest point
of a box is the sample clipped into it, so the distance is exact: no projection points and
no epsilon pushes. Boxes are precomputed once after fitting.
"""

from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core import Confidence, hookimpl, leaf_boxes, state_array

#: The treekit plugin API this plugin is written for (see treekit_core's CHANGELOG.md).
TREEKIT_PLUGIN_API = 4

METRICS = {"euclidean": 0, "chebyshev": 1, "manhattan": 2}


def _check_scale(instance, attribute, value):
    if isinstance(value, str):
        if value not in ("none", "std", "range"):
            raise ValueError(
                "scale must be 'none', 'std', 'range' or a list of per-feature scales, got "
                f"{value!r}"
            )
        return
    values = np.asarray(value, dtype=np.float64)
    if values.ndim != 1 or not np.isfinite(values).all() or (values <= 0).any():
        raise ValueError(
            f"scale must be 'none', 'std', 'range' or positive per-feature scales, got {value!r}"
        )


@attrs.define(slots=False)
class BoundaryDistance(Confidence):
    """Parameters: ``scale`` ("none": raw units as in the paper; "std" or "range": per-feature
    scales from the training data; or a list of per-feature scales), ``metric``
    ("euclidean", "chebyshev", "manhattan") and ``abstain_is_different`` (whether the
    regions of abstaining leaves count as another decision; default True)."""

    name: ClassVar[str] = "boundary_distance"
    description: ClassVar[str] = (
        "distance to the nearest region with another decision (Tóth & Pataki)"
    )
    needs_single_tree: ClassVar[bool] = True
    handles_missing: ClassVar[bool] = True
    requires: ClassVar[dict] = {
        "splitter": frozenset({"axis_aligned"}),
        "evaluator": frozenset({"hard_routing"}),
        "labeler": frozenset({"crisp_labels"}),
    }
    scale: object = attrs.field(default="none", validator=_check_scale)
    metric: str = attrs.field(default="euclidean", validator=attrs.validators.in_(tuple(METRICS)))
    abstain_is_different: bool = attrs.field(
        default=True, validator=attrs.validators.instance_of(bool)
    )

    @property
    def reads_training_rows(self) -> bool:
        """The leaf boxes come from the tree; the scales "std" and "range" from the rows."""
        return isinstance(self.scale, str) and self.scale != "none"

    def check_data(self, data) -> None:
        data.refuse_nominal(self)

    def feature_scales(self, X) -> np.ndarray:
        d = X.shape[1]
        if isinstance(self.scale, str):
            if self.scale == "none":
                return np.ones(d)
            spread = (
                np.nanstd(X, axis=0)
                if self.scale == "std"
                else np.nanmax(X, axis=0) - np.nanmin(X, axis=0)
            )
            return np.where(spread > 0, spread, 1.0)
        values = np.asarray(self.scale, dtype=np.float64)
        if values.size != d:
            raise ValueError(
                f"confidence 'boundary_distance': scale has {values.size} values for {d} features"
            )
        return values

    def fit(self, tree, data, labeler):
        leaves, lower, upper = leaf_boxes(tree)
        return {
            "lower": lower,
            "upper": upper,
            "decision": tree.decision[leaves].astype(np.float64),
            "scale": self.feature_scales(data.X),
        }

    def check_state(self, state, tree):
        leaves, d = int(tree.n_leaves), tree.n_features
        for key in ("lower", "upper"):
            state_array(state, key, (leaves, d), "confidence", allow_inf=True)
        state_array(state, "decision", (leaves,), "confidence", minimum=-1, integer=True)
        if (np.asarray(state["decision"]) >= tree.n_statistics).any():
            raise ValueError("model file: confidence.decision holds a class index out of range")
        state_array(state, "scale", (d,), "confidence")
        if (np.asarray(state["scale"]) <= 0).any():
            raise ValueError("model file: confidence.scale must hold values > 0")

    def score(self, tree, X, proba, decision):
        from treekit_boundary_distance.kernels import nearest_other_box
        from treekit_core.kernels import for_row_chunks

        state = tree.component_state["confidence"]
        X = np.ascontiguousarray(X, dtype=np.float64)
        lower = np.ascontiguousarray(state["lower"])
        out = np.empty(X.shape[0])
        # a sample is compared with every leaf box: it costs about a walk row per box
        for_row_chunks(
            nearest_other_box,
            X.shape[0],
            X,
            np.asarray(decision, dtype=np.int64),
            lower,
            np.ascontiguousarray(state["upper"]),
            np.asarray(state["decision"], dtype=np.int64),
            np.asarray(state["scale"], dtype=np.float64),
            METRICS[self.metric],
            self.abstain_is_different,
            out,
            cost=float(max(1, lower.shape[0])),
        )
        return out


@hookimpl
def treekit_confidences():
    return [BoundaryDistance]
