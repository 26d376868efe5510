import pytest

import treekit_boundary_distance
from treekit_core import plugins


@pytest.fixture(autouse=True)
def registry():
    registry = plugins.reset_registry(load_entry_points=False)
    registry.register(treekit_boundary_distance, "treekit-boundary-distance")
    yield registry
    plugins.reset_registry(load_entry_points=False)
