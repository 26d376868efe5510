"""ExtraTreesClassifier, ExtraTreesRegressor and ExtraTreesSurvival: extremely randomised
trees (Geurts, Ernst & Wehenkel 2006), scikit-learn's ``ExtraTrees*`` and
scikit-survival's ``ExtraSurvivalTrees``. Each is its forest with other defaults,
``splitter="random"`` (``builtins/random_splitter.py``: one random cut per candidate
feature) and ``bootstrap=False`` (every tree sees every row), and nothing else: the one
exception to "no public estimator subclasses another" (tests/test_estimator_families.py
lists them as variants)."""

from __future__ import annotations

import inspect

from treekit_core.estimators.forest import ForestClassifier, ForestRegressor
from treekit_core.estimators.parameter_docs import document_parameters
from treekit_core.estimators.survival import ForestSurvival

#: What an extra-trees forest changes of its forest's defaults.
EXTRA_TREES_DEFAULTS = {"splitter": "random", "bootstrap": False}


def forest_variant(parent, name: str, doc: str, defaults: dict) -> type:
    """A subclass of the forest ``parent`` whose constructor is the parent's with other
    ``defaults`` (the signature scikit-learn's get_params reads says so)."""
    signature = inspect.signature(parent.__init__)
    parameters = [
        p.replace(default=defaults[p.name]) if p.name in defaults else p
        for p in signature.parameters.values()
    ]
    changed = signature.replace(parameters=parameters)

    def __init__(self, *args, **kwargs):
        bound = changed.bind(self, *args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        arguments.pop("self")
        parent.__init__(self, **arguments)

    __init__.__signature__ = changed
    __init__.__qualname__ = f"{name}.__init__"
    cls = type(name, (parent,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})
    return document_parameters(cls)


ExtraTreesClassifier = forest_variant(
    ForestClassifier,
    "ExtraTreesClassifier",
    "Extremely randomised trees for classes: a ForestClassifier whose trees cut every "
    "candidate feature at one random threshold (or random category subset) and take the "
    "best of those cuts, each tree on every row (scikit-learn's ExtraTreesClassifier).",
    EXTRA_TREES_DEFAULTS,
)
ExtraTreesRegressor = forest_variant(
    ForestRegressor,
    "ExtraTreesRegressor",
    "Extremely randomised trees for a number: a ForestRegressor whose trees cut every "
    "candidate feature at one random threshold and take the best of those cuts, each tree "
    "on every row (scikit-learn's ExtraTreesRegressor).",
    EXTRA_TREES_DEFAULTS,
)
ExtraTreesSurvival = forest_variant(
    ForestSurvival,
    "ExtraTreesSurvival",
    "Extremely randomised survival trees: a ForestSurvival whose trees cut every candidate "
    "feature at one random threshold and take the cut of the largest log-rank statistic, "
    "each tree on every row (scikit-survival's ExtraSurvivalTrees).",
    EXTRA_TREES_DEFAULTS,
)
