# The authoring kit's fixtures, enabled in one line (works whether or not this folder is the
# rootdir).
from treekit_core.testing.pytest_plugin import treekit_check, treekit_registry  # noqa: F401
