"""Where a threaded histogram fit spends its time (issue 59): one process, the kernels
loaded by a warm-up, then a histogram tree (gini, depth 12) on ``--n`` x 20
make_classification rows for each thread count, three times each, with the wall time of
its phases: input checks, binning, the root histogram, the large nodes split on the
threads (``split_here``), and the subtree tasks (their summed and longest wall time).

    python benchmarks/bench_histogram_threads.py [--n 1000000] [--threads 1 2 4 8 16]

Not a comparison with other libraries (bench_histogram.py is): a profile by phase, so
that a thread count that does not pay shows which phase does not scale.
"""

from __future__ import annotations

import argparse
import collections
import functools
import os
import statistics
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from common import machine_line  # noqa: E402


def timed_phases():
    """Wrap the phases' functions so that each call adds its wall time to a table."""
    from treekit_histogram import splitter, threads

    from treekit_core.estimators import inputs

    table = collections.defaultdict(list)
    lock = threading.Lock()

    def wrap(owner, name, phase):
        original = getattr(owner, name)

        @functools.wraps(original)
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                with lock:
                    table[phase].append(time.perf_counter() - start)

        setattr(owner, name, timed)

    wrap(inputs.InputChecks, "_validate_training", "input checks")
    wrap(splitter, "bin_features", "binning")
    wrap(splitter.Histogram, "_histogram", "root histogram")
    wrap(threads, "grow_with_threads", "threaded growth")
    wrap(threads.Growth, "split_here", "large nodes")
    wrap(threads.Growth, "subtree", "subtree tasks")
    return table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--threads", type=int, nargs="*", default=[1, 2, 4, 8, 16])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--tasks-per-thread",
        type=int,
        nargs="*",
        default=[None],
        help="threads.TASKS_PER_THREAD values to compare (default: the module's)",
    )
    args = parser.parse_args(argv)
    import numpy as np
    from sklearn.datasets import make_classification

    from treekit_core import TreeClassifier

    print(machine_line(ROOT, "sklearn"), flush=True)
    X, y = make_classification(n_samples=args.n, n_features=20, n_informative=10, random_state=0)
    for threads in args.threads:  # warm-up: every kernel of every path from the cache
        TreeClassifier(splitter="histogram", max_depth=12, n_threads=threads).fit(
            X[:60_000], y[:60_000]
        )
    table = timed_phases()
    from treekit_histogram import threads as threaded

    default_tasks = threaded.TASKS_PER_THREAD
    for tasks, threads in [(t, n) for t in args.tasks_per_thread for n in args.threads]:
        threaded.TASKS_PER_THREAD = default_tasks if tasks is None else tasks
        walls, phases = [], collections.defaultdict(list)
        for _ in range(args.repeats):
            table.clear()
            start = time.perf_counter()
            model = TreeClassifier(splitter="histogram", max_depth=12, n_threads=threads)
            model.fit(X, y)
            walls.append(time.perf_counter() - start)
            for phase, times in table.items():
                phases[phase].append(sum(times))
                if phase == "subtree tasks":
                    phases["longest task"].append(max(times))
                    phases["number of tasks"].append(len(times))
        line = ", ".join(
            f"{phase} {statistics.median(values):.3f}" for phase, values in phases.items()
        )
        print(
            f"tasks per thread {threaded.TASKS_PER_THREAD}, n_threads={threads:2d}: "
            f"fit {statistics.median(walls):.3f} s ({line}); "
            f"{np.asarray(model.tree_.feature).size} nodes",
            flush=True,
        )


if __name__ == "__main__":
    main()
