"""Each test sees the core's built-ins and the histogram splitter (the Dask estimators grow
its trees), whatever else is installed; one LocalCluster of two worker processes serves
the module."""

import pytest
import treekit_histogram

from treekit_core.testing.pytest_plugin import plugin_registry

registry = plugin_registry(treekit_histogram, "treekit-histogram")


@pytest.fixture(scope="session")
def client():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client
