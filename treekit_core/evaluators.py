"""Built-in evaluator ``hard``: each sample reaches one leaf and takes its distribution."""
from __future__ import annotations

from typing import ClassVar

import attrs
import numpy as np

from treekit_core.components import Evaluator


def apply_tree(tree, X) -> np.ndarray:
    """Leaf id reached by every row of X (hard routing)."""
    from treekit_core.kernels.routing import apply_hard, pack_nodes

    nodes = pack_nodes(tree.children_left, tree.children_right, tree.feature, tree.threshold)
    return apply_hard(np.asarray(X, dtype=np.float64), nodes)


@attrs.define(slots=False)
class Hard(Evaluator):
    name: ClassVar[str] = "hard"
    description: ClassVar[str] = "route each sample to exactly one leaf"

    def predict_distribution(self, tree, X):
        return tree.value[apply_tree(tree, X)]
