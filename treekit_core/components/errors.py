"""The errors treekit raises beyond ValueError's meaning, defined in the contract so that
every layer (and every plugin) raises and catches the same classes."""

from __future__ import annotations


class CompositionError(ValueError):
    """Components that cannot work together."""


class PluginError(ValueError):
    """A plugin or component name problem (unknown name, duplicate registration, a plugin
    written for another plugin API version)."""


class ModelFileError(ValueError):
    """A model file that does not hold a valid treekit model; the message names the field."""


class NotFittedError(ValueError, AttributeError):
    """The estimator is used before fit (also scikit-learn's NotFittedError when
    scikit-learn is loaded: :mod:`treekit_core.engine.sklearn_compat`)."""


class AbstentionError(ValueError):
    """predict() was asked for labels from a composition that can abstain."""
