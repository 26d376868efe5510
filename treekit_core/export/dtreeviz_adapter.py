"""dtreeviz pictures of treekit trees."""

from __future__ import annotations

import numpy as np

from treekit_core.estimators.tree_classifier import TreeClassifier
from treekit_core.export.sklearn_tree import to_sklearn


def dtreeviz_model(model, X, y, *, tree_index=None, feature_names=None, class_names=None, **kwargs):
    """``dtreeviz.model(...)`` for a treekit tree (or tree ``tree_index`` of a forest),
    drawn from its scikit-learn twin (:func:`treekit_core.export.to_sklearn`, whose
    requirements apply). ``X`` and ``y`` are the training data dtreeviz draws in each node
    (nominal columns as category codes); other keyword arguments go to ``dtreeviz.model``.
    Call ``.view()`` on the result for the picture."""
    import dtreeviz

    if hasattr(model, "estimators_"):
        if tree_index is None:
            raise ValueError("a forest has several trees: say which with tree_index=")
        model = _one_tree(model, tree_index)
    twin = to_sklearn(model, missing=kwargs.pop("missing", "larger_share"))
    twin.classes_ = np.arange(model.n_classes_)  # dtreeviz wants class indices; names below
    if feature_names is None:
        feature_names = list(getattr(model, "feature_names_in_", [])) or [
            f"x[{j}]" for j in range(model.n_features_in_)
        ]
    if class_names is None:
        class_names = [str(c) for c in model.classes_]
    encoded = np.searchsorted(model.classes_, np.asarray(y))
    return dtreeviz.model(
        twin,
        X_train=np.asarray(X, dtype=np.float64),
        y_train=encoded,
        feature_names=feature_names,
        class_names=class_names,
        **kwargs,
    )


def _one_tree(forest, index):
    if not (isinstance(index, int) and 0 <= index < len(forest.estimators_)):
        raise ValueError(
            f"tree_index must be an int in [0, {len(forest.estimators_)}), got {index!r}"
        )
    single = TreeClassifier()
    single.tree_ = forest.estimators_[index]
    single.composition_ = forest.composition_
    for name in ("classes_", "n_classes_", "n_features_in_", "feature_names_in_", "categories_"):
        if hasattr(forest, name):
            setattr(single, name, getattr(forest, name))
    single.reject_threshold_ = None
    return single
