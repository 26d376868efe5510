"""treekit: decision trees in which every step is a pluggable component.

This module is the public API. Plugins, the example plugin and user code import from here,
from ``treekit_core.kernels`` (building blocks for plugin kernels), ``treekit_core.builtins``
(the built-in components, to subclass or reuse), ``treekit_core.datasets``,
``treekit_core.testing`` (the authoring kit) and ``treekit_core.tools`` (CLI, metrics,
pictures, export). Everything else (``engine``, ``estimators``, ``registry``, kernel
modules) is private and may change in any release.

Importing this package imports numpy, pluggy and attrs only; numba kernels are imported and
(if not cached) compiled the first time a tree is fitted or evaluated. The kernel helpers
below (``jit``, ``compile_impurity``, ``IMPURITY_TYPE``, ``apply_tree``, ``answers_at``,
``rows_reaching``, ``tree_leaves_from``) load numba when they are first accessed.
"""

from treekit_core.components import (
    ABSTAIN,
    CAPABILITIES,
    FEATURE_THRESHOLD,
    KINDS,
    MISSING_BRANCH,
    NODE_TEST_FIELDS,
    REGISTERED_KINDS,
    Component,
    Confidence,
    Criterion,
    ElementwiseLoss,
    Evaluator,
    Labeler,
    Loss,
    MonotoneValue,
    Propagator,
    Pruner,
    Question,
    QuestionTextContext,
    ReadsEvidence,
    Split,
    Splitter,
    Target,
    TargetRows,
    Unsplit,
    one_hot,
    state_array,
)
from treekit_core.engine.calibration import CalibrationRule
from treekit_core.engine.categorical import category_levels, fit_categories, resolve_categorical
from treekit_core.engine.categorical import encode as encode_categories
from treekit_core.engine.composition import Composition, CompositionError, PruningContext
from treekit_core.engine.grow import Node
from treekit_core.engine.masses import pair_masses
from treekit_core.engine.rejection import RejectRule
from treekit_core.engine.stopping import StoppingRules
from treekit_core.engine.training_data import TrainingData
from treekit_core.engine.tree import Tree, leaf_boxes, node_boxes, tree_from_table
from treekit_core.engine.validation import MAX_TOTAL_WEIGHT, check_sample_weight
from treekit_core.estimators.base import ComposedEstimator
from treekit_core.estimators.boosted import (
    BoostingClassifier,
    BoostingRegressor,
    BoostingSurvival,
)
from treekit_core.estimators.boosting import BoostingEstimator
from treekit_core.estimators.decisions import ClassifierFamily, Decision, OutOfFold
from treekit_core.estimators.ensemble import EnsembleEstimator
from treekit_core.estimators.errors import AbstentionError, NotFittedError
from treekit_core.estimators.extra_trees import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    ExtraTreesSurvival,
)
from treekit_core.estimators.forest import ForestClassifier, ForestRegressor
from treekit_core.estimators.inputs import class_weights, encode_target_rows
from treekit_core.estimators.isolation import IsolationForest, OutlierFamily
from treekit_core.estimators.model_file import ModelFileError
from treekit_core.estimators.pairwise_dag import PairwiseDAG
from treekit_core.estimators.parameter_docs import document_parameters
from treekit_core.estimators.params import ParamsMixin
from treekit_core.estimators.regression import RegressorFamily
from treekit_core.estimators.rpart_parms import rpart_parms
from treekit_core.estimators.single_tree import SingleTreeEstimator
from treekit_core.estimators.step_functions import FollowUpWarning
from treekit_core.estimators.survival import (
    ForestSurvival,
    SurvivalFamily,
    SurvivalTree,
    concordance_index,
)
from treekit_core.estimators.text import export_dot, export_text
from treekit_core.estimators.treatment_effects import (
    CausalForest,
    CausalTree,
    TreatmentEffectFamily,
)
from treekit_core.estimators.tree_classifier import TreeClassifier
from treekit_core.estimators.tree_regressor import TreeRegressor
from treekit_core.hookspecs import hookimpl
from treekit_core.registry import (
    PLUGIN_API_VERSION,
    PluginError,
    get_registry,
    registered,
    reset_registry,
)
from treekit_core.version import __version__ as __version__

#: The public modules, exactly (``treekit_core.kernels`` is public, its kernel modules are
#: not); the rest of the package is private. tests/test_architecture.py holds plugins to it.
PUBLIC_MODULES = (
    "treekit_core",
    "treekit_core.kernels",
    "treekit_core.builtins",
    "treekit_core.datasets",
    "treekit_core.export",
    "treekit_core.testing",
    "treekit_core.testing.pytest_plugin",
    "treekit_core.tools",
    "treekit_core.tools.cli",
    "treekit_core.tools.export",
    "treekit_core.tools.metrics",
    "treekit_core.tools.plots",
)

#: Names loaded on first access because they import numba.
_KERNEL_HELPERS = {
    "jit": "treekit_core.kernels.compiling",
    "compile_impurity": "treekit_core.kernels.compiling",
    "IMPURITY_TYPE": "treekit_core.kernels.compiling",
    "IMPURITY_SIGNATURE": "treekit_core.kernels.compiling",
    "apply_tree": "treekit_core.builtins.evaluators",
    "answers_at": "treekit_core.engine.questions",
    "rows_reaching": "treekit_core.engine.questions",
    "tree_leaves_from": "treekit_core.engine.questions",
}


def __getattr__(name):
    if name in _KERNEL_HELPERS:
        import importlib

        return getattr(importlib.import_module(_KERNEL_HELPERS[name]), name)
    raise AttributeError(f"module 'treekit_core' has no attribute {name!r}")


__all__ = [
    "ABSTAIN",
    "AbstentionError",
    "CAPABILITIES",
    "ClassifierFamily",
    "Component",
    "ComposedEstimator",
    "Composition",
    "CompositionError",
    "Confidence",
    "Criterion",
    "Decision",
    "EnsembleEstimator",
    "OutOfFold",
    "pair_masses",
    "Evaluator",
    "FEATURE_THRESHOLD",
    "ForestClassifier",
    "ForestRegressor",
    "ExtraTreesClassifier",
    "ExtraTreesRegressor",
    "ExtraTreesSurvival",
    "IsolationForest",
    "CausalForest",
    "CausalTree",
    "TreatmentEffectFamily",
    "OutlierFamily",
    "BoostingClassifier",
    "BoostingEstimator",
    "BoostingRegressor",
    "BoostingSurvival",
    "IMPURITY_SIGNATURE",
    "IMPURITY_TYPE",
    "KINDS",
    "ElementwiseLoss",
    "Labeler",
    "Loss",
    "MISSING_BRANCH",
    "ModelFileError",
    "Node",
    "NotFittedError",
    "PLUGIN_API_VERSION",
    "PairwiseDAG",
    "PluginError",
    "Propagator",
    "Pruner",
    "PruningContext",
    "Question",
    "QuestionTextContext",
    "REGISTERED_KINDS",
    "ReadsEvidence",
    "NODE_TEST_FIELDS",
    "Split",
    "Unsplit",
    "Splitter",
    "StoppingRules",
    "Target",
    "TargetRows",
    "MonotoneValue",
    "TrainingData",
    "MAX_TOTAL_WEIGHT",
    "check_sample_weight",
    "RejectRule",
    "CalibrationRule",
    "Tree",
    "TreeClassifier",
    "TreeRegressor",
    "RegressorFamily",
    "SingleTreeEstimator",
    "ParamsMixin",
    "SurvivalTree",
    "ForestSurvival",
    "SurvivalFamily",
    "FollowUpWarning",
    "concordance_index",
    "answers_at",
    "apply_tree",
    "compile_impurity",
    "export_dot",
    "export_text",
    "category_levels",
    "class_weights",
    "document_parameters",
    "encode_target_rows",
    "encode_categories",
    "fit_categories",
    "resolve_categorical",
    "rpart_parms",
    "get_registry",
    "hookimpl",
    "jit",
    "leaf_boxes",
    "node_boxes",
    "one_hot",
    "registered",
    "reset_registry",
    "rows_reaching",
    "state_array",
    "tree_from_table",
    "tree_leaves_from",
]
