"""The errors the estimators raise beyond ValueError."""

from __future__ import annotations


class NotFittedError(ValueError, AttributeError):
    """The estimator is used before fit (also scikit-learn's NotFittedError when
    scikit-learn is loaded: :mod:`treekit_core.engine.sklearn_compat`)."""


class AbstentionError(ValueError):
    """predict() was asked for labels from a composition that can abstain."""
