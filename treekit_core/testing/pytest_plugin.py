"""pytest plugin of the authoring kit. Enable it in a conftest.py with one line:
``from treekit_core.testing.pytest_plugin import treekit_check, treekit_registry``
(or ``pytest_plugins = ["treekit_core.testing.pytest_plugin"]`` in a top-level conftest).

Fixtures:

``treekit_check``  the conformance checks (``treekit_check.component(MyCriterion)``; one
                   per kind: ``criterion``, ``splitter``, ``labeler``, ``confidence``,
                   ``pruner``, ``target``, ``question``, ``evaluator``, ``loss``, and
                   ``corrupted_model_files``, ``json_round_trip``)
``treekit_registry`` a fresh registry with the core's built-ins only, restored afterwards;
                   register your plugin module on it explicitly.
"""

from __future__ import annotations

import types

import pytest

from treekit_core import registry as plugins
from treekit_core import testing


@pytest.fixture
def treekit_registry():
    registry = plugins.reset_registry(load_entry_points=False)
    yield registry
    plugins.reset_registry(load_entry_points=False)


@pytest.fixture
def treekit_check():
    return types.SimpleNamespace(
        component=testing.check_component,
        criterion=testing.check_criterion,
        splitter=testing.check_splitter,
        labeler=testing.check_labeler,
        confidence=testing.check_confidence,
        pruner=testing.check_pruner,
        target=testing.check_target,
        question=testing.check_question,
        evaluator=testing.check_evaluator,
        loss=testing.check_loss,
        corrupted_model_files=testing.check_corrupted_model_files,
        json_round_trip=testing.check_json_round_trip,
    )


def plugin_registry(*plugins_and_names):
    """An autouse fixture giving each test a registry with the core's built-ins and exactly
    the given plugins: ``registry = plugin_registry(my_module, "my-distribution")``."""
    pairs = list(zip(plugins_and_names[0::2], plugins_and_names[1::2], strict=True))

    @pytest.fixture(autouse=True)
    def registry():
        fresh = plugins.reset_registry(load_entry_points=False)
        for module, name in pairs:
            fresh.register(module, name)
        yield fresh
        plugins.reset_registry(load_entry_points=False)

    return registry
