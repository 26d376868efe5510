"""The core's own components, registered through the same hooks as any plugin."""
from treekit_core import (
    confidences, cost_complexity, criteria, evaluators, labelers, mdl, pessimistic, propagators, pruners, splitters,
)
from treekit_core.hookspecs import hookimpl


@hookimpl
def treekit_criteria():
    return [criteria.Gini, criteria.Entropy, criteria.Misclassification, criteria.Variance]


@hookimpl
def treekit_splitters():
    return [splitters.Exhaustive, splitters.C45]


@hookimpl
def treekit_propagators():
    return [propagators.Hard]


@hookimpl
def treekit_pruners():
    return [pruners.NoPruning, cost_complexity.CostComplexity, pessimistic.Pessimistic, mdl.MDL]


@hookimpl
def treekit_labelers():
    return [labelers.Majority]


@hookimpl
def treekit_evaluators():
    return [evaluators.Hard]


@hookimpl
def treekit_confidences():
    return [confidences.Probability]
