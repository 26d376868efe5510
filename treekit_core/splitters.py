"""Built-in splitter ``exhaustive``: every midpoint between consecutive distinct values."""
from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.components import Split, Splitter


@attrs.define(slots=False)
class Exhaustive(Splitter):
    """CART's search: for every feature, every midpoint between consecutive distinct values.

    Honours min_samples_leaf (counted in rows) and min_weight_fraction_leaf (in weight).
    Works with fractional sample weights. Ties are broken by the first feature (in
    candidate order) and the leftmost threshold.
    """

    name: ClassVar[str] = "exhaustive"
    description: ClassVar[str] = "every midpoint between consecutive distinct values (CART)"

    def prepare(self, data, criterion, rules):
        from treekit_core.kernels.split_search import best_split_of_node

        return (best_split_of_node, criterion.compiled_impurity(),
                criterion.impurity_params(data.n_classes), data)

    def find_split(self, state, node, rules):
        kernel, impurity, params, data = state
        feature, threshold, drop = kernel(
            impurity, params, data.X, data.evidence, node.rows, node.row_weights,
            node.class_sums, node.weight, node.features, rules.min_samples_leaf,
            rules.min_weight_leaf,
        )
        if feature < 0:
            return None
        return Split(int(feature), float(threshold), float(drop))
