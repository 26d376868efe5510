"""treekit over a Dask cluster: ``DaskTreeClassifier`` and ``DaskTreeRegressor`` grow one
histogram tree over a cluster's partitions, the tree the histogram splitter grows in
memory (see README.md).

The package is registered in treekit's entry-point group so ``treekit plugins`` lists it;
it adds estimators, not components, and loads them on first use (the registry imports this
module with every fit's registry, which must not import numba or Dask)."""

#: The treekit plugin API this distribution was written for.
TREEKIT_PLUGIN_API = 4

__all__ = ["DaskTreeClassifier", "DaskTreeRegressor"]


def __getattr__(name):
    if name in __all__:
        from treekit_dask import estimators

        return getattr(estimators, name)
    raise AttributeError(f"module 'treekit_dask' has no attribute {name!r}")
