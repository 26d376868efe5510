"""treekit over a Dask cluster: ``DaskTreeClassifier`` and ``DaskTreeRegressor`` grow one
histogram tree over a cluster's partitions, the tree the histogram splitter grows in
memory (see README.md)."""

from treekit_dask.estimators import DaskTreeClassifier, DaskTreeRegressor

#: The treekit plugin API this distribution was written for.
TREEKIT_PLUGIN_API = 4

__all__ = ["DaskTreeClassifier", "DaskTreeRegressor"]
