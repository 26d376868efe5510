"""treekit splitter ``histogram``: split search over per-node class histograms of binned
features (LightGBM's search, for any criterion). See README.md."""

from __future__ import annotations

from treekit_core import hookimpl
from treekit_histogram.splitter import Histogram

#: The treekit plugin API this plugin is written for (see treekit_core's CHANGELOG.md).
TREEKIT_PLUGIN_API = 4

__all__ = ["Histogram"]


@hookimpl
def treekit_splitters():
    return [Histogram]
