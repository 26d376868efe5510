import pytest

import treekit_oblique
from treekit_core import plugins


@pytest.fixture(autouse=True)
def registry():
    registry = plugins.reset_registry(load_entry_points=False)
    registry.register(treekit_oblique, "treekit-oblique")
    yield registry
    plugins.reset_registry(load_entry_points=False)
