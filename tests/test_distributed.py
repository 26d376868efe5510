"""Forests on other joblib backends: processes (loky), a Dask LocalCluster (processes, two
workers) and Ray when installed. Same seed, same trees as n_jobs=1; a failure on a worker is
raised in the caller."""

import attrs
import joblib
import numpy as np
import pytest

from treekit_core import ForestClassifier
from treekit_core.builtins import Exhaustive
from treekit_core.datasets import load_dataset

SETTINGS = dict(n_estimators=6, random_state=0, criterion="entropy")


@pytest.fixture(scope="module")
def soybean():
    data = load_dataset("soybean")
    return data.X, data.y, data.categorical


def fit(X, y, categorical, **params):
    return ForestClassifier(**SETTINGS, categorical_features=categorical, **params).fit(X, y)


def assert_same_forest(a, b, X):
    assert len(a.estimators_) == len(b.estimators_)
    for left, right in zip(a.estimators_, b.estimators_, strict=True):
        for field in ("child_ids", "question", "feature", "threshold", "statistics"):
            np.testing.assert_array_equal(getattr(left, field), getattr(right, field))
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_loky_processes_grow_the_same_forest(soybean):
    X, y, categorical = soybean
    reference = fit(X, y, categorical)
    with joblib.parallel_backend("loky"):
        processes = fit(X, y, categorical, n_jobs=2)
    threads = fit(X, y, categorical, n_jobs=2)
    assert_same_forest(reference, processes, X)
    assert_same_forest(reference, threads, X)


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("dask.distributed")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_dask_workers_grow_the_same_forest(soybean, dask_client):
    from dask.distributed import get_task_stream

    X, y, categorical = soybean
    reference = fit(X, y, categorical)
    with get_task_stream(dask_client) as stream, joblib.parallel_backend("dask"):
        distributed = fit(X, y, categorical, n_jobs=2)
    assert_same_forest(reference, distributed, X)
    workers = {task["worker"] for task in stream.data}
    assert len(stream.data) >= 1 and workers <= set(dask_client.scheduler_info()["workers"])


def test_a_regression_forest_grows_the_same_on_processes_and_dask(dask_client):
    """Issue 39: ForestRegressor on loky processes and Dask workers, the same trees and
    predictions (quantiles included) as n_jobs=1."""
    from treekit_core import ForestRegressor

    data = load_dataset("cu_summary")
    X, y = data.X, data.y

    def forest(**params):
        return ForestRegressor(
            n_estimators=4, random_state=0, categorical_features=data.categorical, **params
        ).fit(X, y)

    reference = forest()
    with joblib.parallel_backend("loky"):
        processes = forest(n_jobs=2)
    with joblib.parallel_backend("dask"):
        distributed = forest(n_jobs=2)
    for other in (processes, distributed):
        for left, right in zip(reference.estimators_, other.estimators_, strict=True):
            np.testing.assert_array_equal(left.threshold, right.threshold)
            np.testing.assert_array_equal(left.statistics, right.statistics)
        np.testing.assert_array_equal(other.predict(X), reference.predict(X))
        np.testing.assert_array_equal(
            other.predict(X, quantiles=[0.5]), reference.predict(X, quantiles=[0.5])
        )


@attrs.define(slots=False)
class FailsOnWorkers(Exhaustive):
    """Registered only in this process: a worker cannot re-create it by name."""

    name = "fails_on_workers"


def test_a_failure_on_a_dask_worker_is_raised_in_the_caller(soybean, dask_client):
    from treekit_core import hookimpl, registered

    class Plugin:
        @hookimpl
        def treekit_splitters(self):
            return [FailsOnWorkers]

    X, y, categorical = soybean
    with registered(Plugin(), name="local-only"), joblib.parallel_backend("dask"):
        with pytest.raises(Exception, match="fails_on_workers"):
            fit(X, y, categorical, n_jobs=2, splitter="fails_on_workers")


def test_ray_workers_grow_the_same_forest(soybean):
    ray = pytest.importorskip("ray")
    from ray.util.joblib import register_ray

    X, y, categorical = soybean
    reference = fit(X, y, categorical)
    register_ray()
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True)
    try:
        with joblib.parallel_backend("ray"):
            distributed = fit(X, y, categorical, n_jobs=2)
    finally:
        ray.shutdown()
    assert_same_forest(reference, distributed, X)


def test_loky_workers_take_read_only_memory_maps_of_large_data():
    """joblib memory-maps arrays over 1 MB read-only into worker processes; the compiled
    kernels are typed for ordinary arrays, so the workers take writeable copies."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 10))  # 1.6 MB
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    settings = dict(n_estimators=4, random_state=0, max_depth=4)
    reference = ForestClassifier(**settings).fit(X, y)
    with joblib.parallel_backend("loky"):
        processes = ForestClassifier(**settings, n_jobs=2).fit(X, y)
    assert_same_forest(reference, processes, X)


def test_scikit_learn_meta_estimators_ship_fitted_trees_between_processes():
    from sklearn.ensemble import BaggingClassifier
    from sklearn.model_selection import cross_validate

    from treekit_core import TreeClassifier

    data = load_dataset("haberman")
    result = cross_validate(
        TreeClassifier(max_depth=3), data.X, data.y, cv=3, n_jobs=2, return_estimator=True
    )
    assert len(result["estimator"]) == 3
    assert all(0.5 < s <= 1 for s in result["test_score"])
    bagging = BaggingClassifier(
        TreeClassifier(max_depth=3), n_estimators=4, n_jobs=2, random_state=0
    )
    assert bagging.fit(data.X, data.y).score(data.X, data.y) > 0.7
