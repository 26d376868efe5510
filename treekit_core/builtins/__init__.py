"""The core's own components, registered through the same hooks as any plugin.

One module per kind (``targets``, ``criteria``, ``splitters``, ``propagators``, ``labelers``,
``evaluators``, ``confidences``, ``questions``) and the pruners in their own folder. This package is
public: a plugin may subclass or reuse a built-in (the soft search reuses C4.5's choice).
"""

from treekit_core.builtins.c45_nominal import c45_nominal_split
from treekit_core.builtins.competing_risk_target import CompetingRisks
from treekit_core.builtins.confidences import Probability
from treekit_core.builtins.criteria import (
    AbsoluteError,
    Entropy,
    Exponential,
    Gini,
    Gray,
    Logrank,
    LogrankCause,
    Misclassification,
    Poisson,
    RpartPoisson,
    SquaredError,
    Variance,
)
from treekit_core.builtins.evaluators import HardEvaluator
from treekit_core.builtins.grown_rows import grown_leaves, keep_grown_rows, leaves_of_grown_rows
from treekit_core.builtins.isolation import Isolation, IsolationCriterion
from treekit_core.builtins.label_sets import ClassLabelSets
from treekit_core.builtins.labelers import CostMatrix, Majority
from treekit_core.builtins.losses import BUILTIN_LOSSES
from treekit_core.builtins.newton import NewtonGain, NewtonStep
from treekit_core.builtins.nominal_subsets import (
    EXACT_LIMIT,
    best_nominal_split,
    compiled_nominal_search,
    nominal_question_fields,
    nominal_question_wins,
    nominal_questions,
    nominal_search_kernel,
)
from treekit_core.builtins.propagators import HardPropagator
from treekit_core.builtins.pruners.cost_complexity import CostComplexity
from treekit_core.builtins.pruners.mdl import MDL
from treekit_core.builtins.pruners.no_pruning import NoPruning
from treekit_core.builtins.pruners.pessimistic import Pessimistic
from treekit_core.builtins.pruners.split_complexity import SplitComplexity
from treekit_core.builtins.questions import BelowCut, Multiway, Subset, Threshold
from treekit_core.builtins.random_splitter import RandomCuts
from treekit_core.builtins.splitters import C45, Exhaustive, c45_choice, refuse_scored_nominal
from treekit_core.builtins.surrogates import SurrogateEvaluator, SurrogatePropagator
from treekit_core.builtins.targets import (
    ClassLabels,
    Mean,
    Median,
    OrdinalLabels,
    PoissonMean,
    RpartExponential,
    RpartPoissonRate,
    SurvivalCurves,
    check_class_statistics,
)
from treekit_core.builtins.treatment_effect import (
    CausalTreeCriterion,
    GrfCausalCriterion,
    TreatmentEffect,
)
from treekit_core.hookspecs import hookimpl

__all__ = [
    "EXACT_LIMIT",
    "AbsoluteError",
    "C45",
    "ClassLabels",
    "ClassLabelSets",
    "CompetingRisks",
    "MDL",
    "CostComplexity",
    "Entropy",
    "Exhaustive",
    "Exponential",
    "Gini",
    "Gray",
    "HardEvaluator",
    "HardPropagator",
    "Logrank",
    "LogrankCause",
    "CausalTreeCriterion",
    "CostMatrix",
    "GrfCausalCriterion",
    "Majority",
    "Mean",
    "OrdinalLabels",
    "Median",
    "Misclassification",
    "Multiway",
    "NewtonGain",
    "NewtonStep",
    "Poisson",
    "PoissonMean",
    "NoPruning",
    "Pessimistic",
    "Probability",
    "RpartPoisson",
    "RpartExponential",
    "RpartPoissonRate",
    "SplitComplexity",
    "SquaredError",
    "Subset",
    "SurvivalCurves",
    "SurrogateEvaluator",
    "SurrogatePropagator",
    "Threshold",
    "TreatmentEffect",
    "BelowCut",
    "Variance",
    "best_nominal_split",
    "nominal_question_wins",
    "nominal_questions",
    "c45_choice",
    "c45_nominal_split",
    "check_class_statistics",
    "refuse_scored_nominal",
    "nominal_question_fields",
    "nominal_search_kernel",
    "compiled_nominal_search",
    "grown_leaves",
    "keep_grown_rows",
    "leaves_of_grown_rows",
]


@hookimpl
def treekit_targets():
    return [
        ClassLabels,
        ClassLabelSets,
        OrdinalLabels,
        Mean,
        PoissonMean,
        RpartPoissonRate,
        Median,
        RpartExponential,
        SurvivalCurves,
        CompetingRisks,
        Isolation,
        TreatmentEffect,
        NewtonStep,
    ]


@hookimpl
def treekit_criteria():
    return [
        Gini,
        Entropy,
        Misclassification,
        Variance,
        SquaredError,
        AbsoluteError,
        Poisson,
        RpartPoisson,
        Exponential,
        Logrank,
        LogrankCause,
        Gray,
        IsolationCriterion,
        CausalTreeCriterion,
        GrfCausalCriterion,
        NewtonGain,
    ]


@hookimpl
def treekit_splitters():
    return [Exhaustive, C45, RandomCuts]


@hookimpl
def treekit_propagators():
    return [HardPropagator, SurrogatePropagator]


@hookimpl
def treekit_pruners():
    return [NoPruning, CostComplexity, Pessimistic, MDL, SplitComplexity]


@hookimpl
def treekit_labelers():
    return [Majority, CostMatrix]


@hookimpl
def treekit_evaluators():
    return [HardEvaluator, SurrogateEvaluator]


@hookimpl
def treekit_confidences():
    return [Probability]


@hookimpl
def treekit_losses():
    return list(BUILTIN_LOSSES)


@hookimpl
def treekit_questions():
    return [Threshold, BelowCut, Subset, Multiway]
