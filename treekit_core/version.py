"""treekit's version: the bottom layer, importing nothing, so every layer may read it (the
generated kernels' file names include it)."""

__version__ = "0.3.0"
