"""The public ``export_text``: a fitted estimator or a bare tree as readable rules."""

from __future__ import annotations

from treekit_core.engine import tree_text
from treekit_core.engine.tree import Tree


def export_text(tree_or_model, *args, **kwargs) -> str:
    """Readable rules, one line per node. Given a fitted estimator (``TreeClassifier``),
    its own :meth:`export_text` with its feature names, classes and nominal categories
    (keyword arguments: ``decimals``, ``show_distribution``, ``style``); given a
    :class:`~treekit_core.engine.tree.Tree` (``model.tree_``, a forest's
    ``estimators_[i]``), :func:`treekit_core.engine.tree_text.export_text` with the names
    passed."""
    if isinstance(tree_or_model, Tree):
        return tree_text.export_text(tree_or_model, *args, **kwargs)
    if hasattr(tree_or_model, "estimators_"):
        raise TypeError(
            "export_text shows one tree, and a forest holds several: pass one of them, "
            "export_text(forest.estimators_[i], feature_names, forest.classes_)"
        )
    method = getattr(tree_or_model, "export_text", None)
    if not callable(method):
        raise TypeError(
            "export_text takes a fitted TreeClassifier or a Tree, got "
            f"{type(tree_or_model).__name__}"
        )
    if args:
        raise TypeError(
            "export_text(model, ...) takes keyword arguments after the model (decimals=, "
            "show_distribution=, style=): the model gives the names"
        )
    return method(**kwargs)
