"""dtreeviz pictures of treekit trees.

dtreeviz draws through graphviz's ``dot`` program (a system program, not a Python
package) and asks matplotlib for the font Arial, which most Linux machines lack (one
warning per text drawn). The wrappers here default the font to DejaVu Sans, which
matplotlib ships, and say in one line that ``dot`` is missing instead of a traceback.
"""

from __future__ import annotations

import shutil

import numpy as np

from treekit_core.estimators.tree_classifier import TreeClassifier
from treekit_core.export.sklearn_tree import to_sklearn


def dtreeviz_model(model, X, y, *, tree_index=None, feature_names=None, class_names=None, **kwargs):
    """``dtreeviz.model(...)`` for a treekit tree (or tree ``tree_index`` of a forest),
    drawn from its scikit-learn twin (:func:`treekit_core.export.to_sklearn`, whose
    requirements apply). ``X`` and ``y`` are the training data dtreeviz draws in each node
    (nominal columns as category codes); other keyword arguments go to ``dtreeviz.model``.
    Call ``.view()`` on the result for the picture (its ``.dot`` source needs nothing more;
    ``.svg()``, ``.save()`` and ``.show()`` need graphviz's ``dot`` program)."""
    import dtreeviz

    if hasattr(model, "estimators_"):
        if tree_index is None:
            raise ValueError("a forest has several trees: say which with tree_index=")
        model = _one_tree(model, tree_index)
    twin = to_sklearn(model, missing=kwargs.pop("missing", "larger_share"))
    if feature_names is None:
        feature_names = list(getattr(model, "feature_names_in_", [])) or [
            f"x[{j}]" for j in range(model.n_features_in_)
        ]
    if not hasattr(model, "classes_"):  # a regressor: dtreeviz draws y in every node
        return _Pictures(
            dtreeviz.model(
                twin,
                X_train=np.asarray(X, dtype=np.float64),
                y_train=np.asarray(y, dtype=np.float64),
                feature_names=feature_names,
                target_name=kwargs.pop("target_name", "y"),
                **kwargs,
            )
        )
    twin.classes_ = np.arange(model.n_classes_)  # dtreeviz wants class indices; names below
    if class_names is None:
        class_names = [str(c) for c in model.classes_]
    encoded = np.searchsorted(model.classes_, np.asarray(y))
    return _Pictures(
        dtreeviz.model(
            twin,
            X_train=np.asarray(X, dtype=np.float64),
            y_train=encoded,
            feature_names=feature_names,
            class_names=class_names,
            **kwargs,
        )
    )


#: A font matplotlib ships with, so drawing never falls back font by font.
FONT = "DejaVu Sans"


class _Pictures:
    """dtreeviz's model, whose pictures default to :data:`FONT`; everything else is
    dtreeviz's own."""

    def __init__(self, model):
        self._model = model

    def view(self, *args, **kwargs):
        kwargs.setdefault("fontname", FONT)
        return _Rendered(self._model.view(*args, **kwargs))

    def __getattr__(self, name):
        return getattr(self._model, name)


class _Rendered:
    """dtreeviz's rendered picture; drawing it (``svg``, ``save``, ``show``) first checks
    that graphviz's ``dot`` is installed."""

    def __init__(self, rendered):
        self._rendered = rendered

    def _drawn(self, name):
        if shutil.which("dot") is None:
            raise RuntimeError(
                "dtreeviz draws through graphviz's 'dot' program, which is not installed: "
                "apt install graphviz (Debian, Ubuntu), brew install graphviz (macOS) or "
                "conda install graphviz; the picture's source is .dot without it"
            )
        return getattr(self._rendered, name)

    def svg(self, *args, **kwargs):
        return self._drawn("svg")(*args, **kwargs)

    def save(self, *args, **kwargs):
        return self._drawn("save")(*args, **kwargs)

    def show(self, *args, **kwargs):
        return self._drawn("show")(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._rendered, name)


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
