"""Core tests use the built-ins only, whatever plugins happen to be installed."""

import pytest

from treekit_core import registry as plugins


@pytest.fixture(autouse=True)
def builtins_only_registry():
    """Each test starts from a registry holding only the core's components; tests that
    need more register their own plugin objects (``treekit_core.registered``)."""
    registry = plugins.reset_registry(load_entry_points=False)
    yield registry
    plugins.reset_registry(load_entry_points=False)
