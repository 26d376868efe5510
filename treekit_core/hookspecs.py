"""The hooks of treekit.

Two families of hooks exist:

* **Registration hooks** (``treekit_criteria`` ... ``treekit_questions``) are called once,
  when the registry is assembled (first use in a process, or after
  :func:`treekit_core.registry.reset_registry`). Each returns the component classes a
  plugin offers. Pluggy is never called per node or per candidate threshold.
* **Lifecycle hooks** (``treekit_fit_started``, ``treekit_node_split``,
  ``treekit_fit_finished``) are called while a tree is grown, for observers such as
  progress bars, logging or tracing. When no plugin implements them the grow loop does not
  call them at all, so they cost nothing.

A plugin is a module (or any object) holding functions decorated with
:data:`treekit_core.hookimpl`, declared as an entry point in the group ``treekit``::

    [project.entry-points.treekit]
    my-plugin = "my_plugin_module"
"""

from __future__ import annotations

import pluggy

PROJECT_NAME = "treekit"
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def treekit_targets():
    """Return the target classes this plugin offers (what a tree predicts).

    Called once per registry assembly, with no arguments.

    :return: a list of :class:`treekit_core.components.Target` subclasses.
    """


@hookspec
def treekit_criteria():
    """Return the criterion classes this plugin offers.

    Called once per registry assembly, with no arguments.

    :return: a list of :class:`treekit_core.components.Criterion` subclasses, each with a
        unique class attribute ``name``. Return ``[]`` (or do not implement the hook) to
        offer none.
    """


@hookspec
def treekit_splitters():
    """Return the splitter classes this plugin offers.

    Called once per registry assembly, with no arguments.

    :return: a list of :class:`treekit_core.components.Splitter` subclasses.
    """


@hookspec
def treekit_propagators():
    """Return the propagator classes this plugin offers.

    Called once per registry assembly, with no arguments.

    :return: a list of :class:`treekit_core.components.Propagator` subclasses.
    """


@hookspec
def treekit_pruners():
    """Return the pruner classes this plugin offers.

    Called once per registry assembly, with no arguments.

    :return: a list of :class:`treekit_core.components.Pruner` subclasses.
    """


@hookspec
def treekit_labelers():
    """Return the labeler classes this plugin offers.

    Called once per registry assembly, with no arguments.

    :return: a list of :class:`treekit_core.components.Labeler` subclasses.
    """


@hookspec
def treekit_evaluators():
    """Return the evaluator classes this plugin offers.

    Called once per registry assembly, with no arguments.

    :return: a list of :class:`treekit_core.components.Evaluator` subclasses.
    """


@hookspec
def treekit_confidences():
    """Return the confidence classes this plugin offers.

    Called once per registry assembly, with no arguments.

    :return: a list of :class:`treekit_core.components.Confidence` subclasses.
    """


@hookspec
def treekit_losses():
    """Return the loss classes this plugin offers (what gradient boosting minimises).

    Called once per registry assembly, with no arguments.

    :return: a list of :class:`treekit_core.components.Loss` subclasses.
    """


@hookspec
def treekit_questions():
    """Return the question kinds this plugin offers.

    Called once per registry assembly, with no arguments. Unlike the other kinds, a
    question kind is not chosen per composition: every registered kind is available to
    every splitter, which names it in ``Split.question``, and a saved tree names the kinds
    it uses (loading it needs them registered).

    :return: a list of :class:`treekit_core.components.Question` subclasses.
    """


@hookspec
def treekit_fit_started(composition, n_samples, n_features, n_statistics, n_classes):
    """Observe the start of growing one tree.

    Called once per grown tree, before the root is split (a cross-validated pruner or a
    forest grows several trees, and each announces itself). The core calls it with
    :func:`fit_started_arguments`.

    :param composition: the :class:`treekit_core.engine.composition.Composition` being grown
        (its components by kind, its target, and the stopping rules).
    :param int n_samples: number of training rows.
    :param int n_features: number of features.
    :param int n_statistics: columns of the per-row statistics the target encodes.
    :param int n_classes: the same number, under the name listeners written before targets
        were components read (for class labels it is the number of classes).
    :return: ignored.
    """


def fit_started_arguments(composition, n_samples, n_features, n_statistics) -> dict:
    """The keyword arguments of :func:`treekit_fit_started`: one definition of what the
    hook is given, next to its specification."""
    return {
        "composition": composition,
        "n_samples": n_samples,
        "n_features": n_features,
        "n_statistics": n_statistics,
        "n_classes": n_statistics,
    }


@hookspec
def treekit_node_split(node_id, depth, feature, threshold, improvement, n_samples):
    """Observe one internal node being created.

    Called once per split node, in the order nodes are numbered (depth first, left
    child first). Only called when at least one plugin implements it.

    :param int node_id: the id of the node in the fitted tree's arrays.
    :param int depth: the node's depth (root is 0).
    :param int feature: the feature index of the question.
    :param float threshold: the question's threshold (``x[feature] <= threshold`` goes left).
    :param float improvement: the unweighted impurity drop of the split.
    :param int n_samples: number of training rows that reach the node.
    :return: ignored.
    """


@hookspec
def treekit_fit_finished(composition, tree):
    """Observe the end of growing one tree (after leaf labelling and pruning).

    Called once per grown tree, after the evaluator and confidence have fitted their state.

    :param composition: the :class:`treekit_core.engine.composition.Composition` that was grown.
    :param tree: the fitted :class:`treekit_core.engine.tree.Tree`.
    :return: ignored.
    """


#: The hooks that register component classes, by component kind.
REGISTRATION_HOOKS = {
    "target": "treekit_targets",
    "criterion": "treekit_criteria",
    "splitter": "treekit_splitters",
    "propagator": "treekit_propagators",
    "pruner": "treekit_pruners",
    "labeler": "treekit_labelers",
    "evaluator": "treekit_evaluators",
    "confidence": "treekit_confidences",
    "question": "treekit_questions",
    "loss": "treekit_losses",
}
LIFECYCLE_HOOKS = ("treekit_fit_started", "treekit_node_split", "treekit_fit_finished")
