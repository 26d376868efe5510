"""The client's memory for ``keep_leaf_responses=True`` on Dask (issue 66): a regression
tree over a LocalCluster, fitted without and with the leaves' responses kept, each in a
fresh client process, side by side with an older checkout.

    python benchmarks/distributed/bench_leaf_responses.py --rows 6000000 --before /tmp/old

The data are generated lazily on the workers (5 float64 features, chunks of 250 000 rows,
y = x0 + noise: every response distinct, the worst case), so the client never holds them.
Per fit: wall time, the client's peak memory (``ru_maxrss``), and with the responses kept,
the bytes the model keeps for them; the response column itself is 8 bytes a row.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from common import machine_line, run_in_fresh_process  # noqa: E402

WORKER = textwrap.dedent("""
    import json, resource, sys, time
    import numpy as np
    import dask.array as da
    from distributed import Client, LocalCluster
    from treekit_dask import DaskTreeRegressor

    rows, keep = int(sys.argv[1]), sys.argv[2] == "1"
    with LocalCluster(n_workers=2, threads_per_worker=1, memory_limit="3GiB",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        state = da.random.RandomState(0)
        X = state.random_sample((rows, 5), chunks=(250_000, 5))
        y = X[:, 0] + state.normal(scale=0.2, size=rows, chunks=250_000)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        wall = time.perf_counter()
        model = DaskTreeRegressor(max_depth=8, keep_leaf_responses=keep, client=client)
        model.fit(X, y)
        wall = time.perf_counter() - wall
        kept = model.local_._leaf_responses if keep else None
        if kept is None:
            kept_mb = 0.0
        elif isinstance(kept, tuple):  # the representation before issue 66's change
            responses, members = kept
            kept_mb = (responses.nbytes + sum(a.nbytes for m in members for a in m)) / 2**20
        else:
            kept_mb = sum(
                a.nbytes for m in kept for a in (m.responses, m.rows, m.shares, m.starts)
                if a is not None
            ) / 2**20
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"wall s": wall, "client peak MB": peak, "client MB before fit": before,
                      "kept MB": kept_mb, "column MB": rows * 8 / 2**20}))
""")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="*", type=int, default=[6_000_000])
    parser.add_argument("--before", default=None, help="an older checkout to compare with")
    args = parser.parse_args(argv)
    print(machine_line(ROOT, "dask", "distributed"), flush=True)
    sides = [("after", ROOT)] + ([("before", args.before)] if args.before else [])
    for rows in args.rows:
        for side, checkout in sides:
            for keep in (0, 1):
                out = run_in_fresh_process(WORKER, [rows, keep], checkout)
                figures = "  ".join(f"{k} {v:.1f}" for k, v in out.items())
                print(f"{rows:>9} rows  {side:<6} keep={keep}  {figures}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
