"""One tree over a Dask LocalCluster (issue 44): treekit's DaskTreeClassifier against
lightgbm.dask (one tree of the same depth and bins) on the same cluster, side by side.

    python benchmarks/distributed/bench_dask_tree.py --rows 1000000 4000000 --depth 8
    python benchmarks/distributed/bench_dask_tree.py --rows 15000000 --memory 1GiB

The data are generated lazily on the workers (``dask.array.random``, 20 float64 features,
chunks of 250 000 rows; y = [x0 + x1 - x2 + noise > 0.5]), so the client never holds them;
held-out accuracy on 200 000 fresh rows. Per fit: wall time, the client's peak memory
(``ru_maxrss``), the accuracy, and for treekit per level: seconds, open nodes and bytes
(sent into the reduction per partition, received by the client). With ``--local`` also the
in-memory histogram tree of the same depth on 1M rows (the accuracy reference).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from common import machine_line  # noqa: E402

FEATURES, CHUNK = 20, 250_000


def data(rows, seed):
    import dask.array as da

    state = da.random.RandomState(seed)
    X = state.random_sample((rows, FEATURES), chunks=(CHUNK, FEATURES))
    noise = state.normal(scale=0.2, size=rows, chunks=CHUNK)
    y = (X[:, 0] + X[:, 1] - X[:, 2] + noise > 0.5).astype(int)
    return X, y


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="*", type=int, default=[1_000_000])
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--memory", default="2GiB", help="memory_limit per worker")
    parser.add_argument("--local", action="store_true")
    parser.add_argument("--skip-lightgbm", action="store_true")
    args = parser.parse_args(argv)
    import numpy as np
    from distributed import Client, LocalCluster
    from treekit_dask import DaskTreeClassifier

    print(machine_line(ROOT, "dask", "distributed", "lightgbm"), flush=True)
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, memory_limit=args.memory, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        X_test, y_test = (a.compute() for a in data(200_000, 99))
        for rows in args.rows:
            X, y = data(rows, 0)
            DaskTreeClassifier(max_depth=2).fit(X[:CHUNK], y[:CHUNK])  # warm-up: kernels load
            start = time.perf_counter()
            model = DaskTreeClassifier(max_depth=args.depth).fit(X, y)
            wall = time.perf_counter() - start
            accuracy = float((model.predict(X_test) == y_test).mean())
            print(
                f"treekit  {rows:>9} rows depth {args.depth}: {wall:7.2f} s wall, "
                f"accuracy {accuracy:.4f}, client peak {peak_mb():.0f} MB",
                flush=True,
            )
            for level in model.levels_:
                print(
                    f"    level {level.depth}: {level.seconds:6.2f} s, {level.open_nodes:4d} open "
                    f"nodes, {level.bytes_per_partition / 1e6:7.2f} MB per partition into the "
                    f"reduction, {level.bytes_to_client / 1e6:7.2f} MB to the client",
                    flush=True,
                )
            if not args.skip_lightgbm:
                import lightgbm as lgb

                booster = lgb.DaskLGBMClassifier(
                    client=client,
                    n_estimators=1,
                    max_depth=args.depth,
                    num_leaves=2**args.depth,
                    max_bin=255,
                    learning_rate=1.0,
                    min_child_samples=1,
                    verbose=-1,
                )
                booster.fit(X[:CHUNK], y[:CHUNK])  # warm-up
                start = time.perf_counter()
                booster.fit(X, y)
                wall = time.perf_counter() - start
                predicted = booster.to_local().predict(X_test)
                accuracy = float((predicted == y_test).mean())
                print(
                    f"lightgbm {rows:>9} rows depth {args.depth}: {wall:7.2f} s wall, "
                    f"accuracy {accuracy:.4f}, client peak {peak_mb():.0f} MB",
                    flush=True,
                )
        if args.local:
            from treekit_core import TreeClassifier

            X, y = (a.compute() for a in data(1_000_000, 0))
            start = time.perf_counter()
            local = TreeClassifier(splitter="histogram", max_depth=args.depth).fit(X, y)
            wall = time.perf_counter() - start
            accuracy = float((local.predict(X_test) == y_test).mean())
            print(
                f"in memory 1000000 rows depth {args.depth}: {wall:7.2f} s wall, "
                f"accuracy {accuracy:.4f}",
                flush=True,
            )
        del np


if __name__ == "__main__":
    main()
