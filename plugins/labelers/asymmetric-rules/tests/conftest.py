import pytest

import treekit_asymmetric_rules
from treekit_core import plugins


@pytest.fixture(autouse=True)
def registry():
    registry = plugins.reset_registry(load_entry_points=False)
    registry.register(treekit_asymmetric_rules, "treekit-asymmetric-rules")
    yield registry
    plugins.reset_registry(load_entry_points=False)
