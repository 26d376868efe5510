import pytest

import treekit_asymmetric_entropy
from treekit_core import plugins


@pytest.fixture(autouse=True)
def registry():
    """The core's built-ins and this plugin only, whatever else is installed."""
    registry = plugins.reset_registry(load_entry_points=False)
    registry.register(treekit_asymmetric_entropy, "treekit-asymmetric-entropy")
    yield registry
    plugins.reset_registry(load_entry_points=False)
