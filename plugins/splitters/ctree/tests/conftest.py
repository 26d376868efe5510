"""Each test sees the core's built-ins and this plugin only, whatever else is installed."""

import treekit_ctree
from treekit_core.testing.pytest_plugin import plugin_registry

registry = plugin_registry(treekit_ctree, "treekit-ctree")
