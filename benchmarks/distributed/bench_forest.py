"""Forest fit time on a Dask LocalCluster (processes) against joblib threads and loky
processes, side by side in one run.

    python benchmarks/distributed/bench_forest.py [--trees 32] [--n 20000] [--repeats 3]

Same forest (seeded) everywhere; wall time of ``fit`` (median), the CPU time of this
process (the workers' CPU is not in it for loky and Dask), and this process's peak memory.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time

import joblib
import numpy as np


def data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 20))
    X[:, :10] += rng.integers(0, 2, (n, 1)) * 0.7
    y = (X[:, :10].sum(axis=1) + rng.normal(0, 2, n) > 3.5).astype(int)
    return X, y


def timed_fit(X, y, trees, n_jobs):
    from treekit_core import ForestClassifier

    wall, cpu = time.perf_counter(), time.process_time()
    forest = ForestClassifier(n_estimators=trees, n_jobs=n_jobs, random_state=0).fit(X, y)
    return forest, time.perf_counter() - wall, time.process_time() - cpu


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, default=32)
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    from dask.distributed import Client, LocalCluster

    X, y = data(args.n)
    timed_fit(X[:2000], y[:2000], 2, 1)  # load the kernels from numba's cache
    results = {}
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster),
    ):
        for backend in ("dask", "loky"):  # warm the workers (kernels load once per process)
            with joblib.parallel_backend(backend):
                timed_fit(X[:2000], y[:2000], 2, 2)
        for _ in range(args.repeats):
            for label, backend, n_jobs in (
                ("1 thread (n_jobs=1)", None, 1),
                ("2 threads (n_jobs=2)", None, 2),
                ("loky, 2 processes", "loky", 2),
                ("dask LocalCluster, 2 workers", "dask", 2),
                ("dask LocalCluster, n_jobs=-1", "dask", -1),
            ):
                if backend is None:
                    forest, wall, cpu = timed_fit(X, y, args.trees, n_jobs)
                else:
                    with joblib.parallel_backend(backend):
                        forest, wall, cpu = timed_fit(X, y, args.trees, n_jobs)
                results.setdefault(label, []).append((wall, cpu))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{args.trees} trees, n = {args.n} x 20, {os.cpu_count()} cores, median of {args.repeats}"
    )
    for label, runs in results.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"  {label:<30} wall {wall:7.2f} s   CPU in this process {cpu:7.2f} s")
    print(f"  peak memory of this process: {peak:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
