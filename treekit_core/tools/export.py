"""A fitted tree as text (like scikit-learn's export_text) and as graphviz dot: the public
home of :mod:`treekit_core.engine.tree_text`, which the estimators use below this layer."""

from treekit_core.engine.tree_text import (
    branch_texts,
    j48_leaf_label,
    j48_text,
    leaf_label,
    node_labels,
)
from treekit_core.estimators.text import export_dot, export_text

__all__ = [
    "branch_texts",
    "export_dot",
    "export_text",
    "j48_leaf_label",
    "j48_text",
    "leaf_label",
    "node_labels",
]
