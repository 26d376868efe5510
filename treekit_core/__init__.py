"""treekit: decision trees in which every step is a pluggable component.

Importing this package imports numpy, pluggy and attrs only; numba kernels are imported and
(if not cached) compiled the first time a tree is fitted or evaluated.
"""
from treekit_core.components import (
    ABSTAIN, Component, Confidence, Criterion, Evaluator, Labeler, Propagator, Pruner, Split, Splitter,
)
from treekit_core.composition import Composition, CompositionError
from treekit_core.estimator import AbstentionError, Decision, NotFittedError, TreeClassifier
from treekit_core.forest import ForestClassifier
from treekit_core.hookspecs import hookimpl
from treekit_core.plugins import PluginError, get_registry, registered, reset_registry
from treekit_core.tree import Tree, export_text

__version__ = "0.1.0"

__all__ = [
    "ABSTAIN", "AbstentionError", "Component", "Composition", "CompositionError", "Confidence",
    "Criterion", "Decision", "Evaluator", "ForestClassifier", "Labeler", "NotFittedError", "PluginError", "Propagator",
    "Pruner", "Split", "Splitter", "Tree", "TreeClassifier", "export_text", "get_registry",
    "hookimpl", "registered", "reset_registry",
]
