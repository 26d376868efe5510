"""The fuzz suite composes every installed component, so its registry loads the plugins'
entry points (the core tests' fixture of the same name starts from the built-ins only)."""

import pytest

from treekit_core import registry as plugins


@pytest.fixture(autouse=True)
def builtins_only_registry():
    registry = plugins.reset_registry(load_entry_points=True)
    yield registry
    plugins.reset_registry(load_entry_points=False)
