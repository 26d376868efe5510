"""The public ``export_text`` and ``export_dot``: a fitted estimator or a bare tree as
readable rules or a graphviz picture."""

from __future__ import annotations

from treekit_core.engine import tree_text
from treekit_core.engine.tree import Tree


def _refuse_forest(model, name: str, verb: str) -> None:
    """A forest holds many trees: ``name`` takes one of them."""
    if hasattr(model, "estimators_"):
        raise TypeError(
            f"{name} {verb} one tree, and a forest holds several: pass one of them, "
            f"{name}(forest.estimators_[i], feature_names, forest.classes_)"
        )


def export_text(tree_or_model, *args, **kwargs) -> str:
    """Readable rules, one line per node. Given a fitted estimator (``TreeClassifier``),
    its own :meth:`export_text` with its feature names, classes and nominal categories
    (keyword arguments: ``decimals``, ``show_distribution``, ``style``); given a
    :class:`~treekit_core.engine.tree.Tree` (``model.tree_``, a forest's
    ``estimators_[i]``), :func:`treekit_core.engine.tree_text.export_text` with the names
    passed."""
    if isinstance(tree_or_model, Tree):
        return tree_text.export_text(tree_or_model, *args, **kwargs)
    _refuse_forest(tree_or_model, "export_text", "shows")
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


def export_dot(tree_or_model, *args, **kwargs) -> str:
    """The tree in graphviz dot. Given a fitted single-tree estimator, its tree with its
    feature names, classes, nominal categories and leaf wording (a regressor's values, a
    survival tree's events and median survival; keyword argument: ``decimals``); given a
    :class:`~treekit_core.engine.tree.Tree`,
    :func:`treekit_core.engine.tree_text.export_dot` with the names passed."""
    if isinstance(tree_or_model, Tree):
        return tree_text.export_dot(tree_or_model, *args, **kwargs)
    _refuse_forest(tree_or_model, "export_dot", "draws")
    if not callable(getattr(tree_or_model, "_leaf_text", None)):
        raise TypeError(
            "export_dot takes a fitted tree estimator or a Tree, got "
            f"{type(tree_or_model).__name__}"
        )
    if args or set(kwargs) - {"decimals"}:
        raise TypeError(
            "export_dot(model, ...) takes only decimals= after the model: the model gives the names"
        )
    model = tree_or_model
    model._check_fitted()
    decimals = kwargs.get("decimals", 4)
    return tree_text.export_dot(
        model.tree_,
        list(model.feature_names_in_) if hasattr(model, "feature_names_in_") else None,
        getattr(model, "classes_", None),
        getattr(model, "categories_", {}),
        decimals,
        model._leaf_text(decimals),
    )
