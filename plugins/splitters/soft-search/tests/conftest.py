import pytest

import treekit_soft_search
from treekit_core import plugins


@pytest.fixture(autouse=True)
def registry():
    registry = plugins.reset_registry(load_entry_points=False)
    registry.register(treekit_soft_search, "treekit-soft-search")
    yield registry
    plugins.reset_registry(load_entry_points=False)
