"""Helpers shared by the paper-reproduction benchmarks (not part of the package)."""

from __future__ import annotations

import contextlib
import time

import numpy as np


def stratified_folds(y, k, seed):
    from treekit_core.engine.folds import stratified_folds as folds

    _, codes = np.unique(y, return_inverse=True)
    return folds(codes, k, np.random.default_rng(seed))


def stratified_split(y, test_fraction, seed):
    from treekit_core.tools.cli import stratified_split as split

    return split(np.asarray(y), test_fraction, seed)


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def markdown_table(header, rows) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        lines.append(
            "| " + " | ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row) + " |"
        )
    return "\n".join(lines)


def wilcoxon_p(a, b) -> float:
    from scipy.stats import wilcoxon

    a, b = np.asarray(a, float), np.asarray(b, float)
    if np.allclose(a, b):
        return 1.0
    return float(wilcoxon(a, b).pvalue)


_COMPILED = set()


def _compile_once(paths) -> None:
    """Byte-compile the Python files under ``paths`` once per benchmark run."""
    import compileall

    for path in paths:
        if path not in _COMPILED:
            compileall.compile_dir(path, quiet=1, workers=0)
            _COMPILED.add(path)


def run_in_fresh_process(
    worker: str, args, checkout: str, threads=None, plugins=True, env=None
) -> dict:
    """Run ``worker`` (Python source printing one JSON line last) in a new interpreter
    whose imports come from ``checkout`` (its plugins too, when ``plugins``), with
    ``threads`` numba and OpenMP threads (None: all) and the variables ``env`` on top of
    this process's. Returns the JSON."""
    import json
    import os
    import subprocess
    import sys

    root = os.path.abspath(checkout)
    paths = [root]
    if plugins:
        paths += [
            os.path.join(root, "plugins", kind, name)
            for kind in sorted(os.listdir(os.path.join(root, "plugins")))
            if os.path.isdir(os.path.join(root, "plugins", kind))
            for name in sorted(os.listdir(os.path.join(root, "plugins", kind)))
        ]
    _compile_once([os.path.join(root, "treekit_core"), *paths[1:]])
    # packages carried beside the environment (a wheel unpacked into a folder) stay visible
    paths += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    variables = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), **(env or {})}
    if not plugins:
        variables["TREEKIT_LOAD_PLUGINS"] = ""
    variables.pop("NUMBA_DISABLE_JIT", None)
    variables.pop("NUMBA_NUM_THREADS", None)
    # An installed package imports from its bytecode (pip compiles it; a checkout writes it
    # at its first import). A shell with PYTHONDONTWRITEBYTECODE set would make every
    # worker compile treekit's modules from source (0.1-0.2 s of "import" and "first fit"
    # that no user pays), so the checkout is compiled once (above) and the variable dropped.
    variables.pop("PYTHONDONTWRITEBYTECODE", None)
    if threads is not None:
        variables["NUMBA_NUM_THREADS"] = variables["OMP_NUM_THREADS"] = str(threads)
    done = subprocess.run(
        [sys.executable, "-c", worker, *map(str, args)],
        env=variables,
        capture_output=True,
        text=True,
        cwd="/",
    )
    if done.returncode:
        raise RuntimeError(f"the worker failed on {checkout}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def machine_line(checkout: str, *libraries: str) -> str:
    """One line naming this machine, its usable CPUs and the versions a benchmark ran
    with: python, numpy, numba, ``libraries`` (import names; 'absent' when missing) and
    treekit from ``checkout``."""
    import importlib
    import os
    import platform
    import sys

    sys.path.insert(0, os.path.abspath(checkout))
    import treekit_core
    from treekit_core.kernels.usable_cpus import usable_cpus

    versions = []
    for name in ("numpy", "numba", *libraries):
        try:
            versions.append(f"{name} {importlib.import_module(name).__version__}")
        except ImportError:
            versions.append(f"{name} absent")
    return (
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs ({usable_cpus()} usable); "
        f"python {platform.python_version()}, {', '.join(versions)}, "
        f"treekit {treekit_core.__version__}"
    )


def median_rows(rows):
    """Per key, the median over the rows (dicts with the same keys)."""
    import statistics

    return {key: statistics.median(row[key] for row in rows) for key in rows[0]}


BUSY_LOOP = (
    "import time, sys\nend = time.time() + float(sys.argv[1])\nwhile time.time() < end: pass\n"
)


@contextlib.contextmanager
def one_core_busy(seconds: float):
    """Within the block, a Python busy loop takes one CPU (a process this starts and
    kills; it stops by itself after ``seconds`` should the block never end)."""
    import subprocess
    import sys

    hog = subprocess.Popen([sys.executable, "-c", BUSY_LOOP, str(seconds)])
    try:
        time.sleep(1.0)
        yield
    finally:
        hog.kill()
        hog.wait()


#: The start of a fresh-process worker's source: ``clock()`` the wall and CPU time now,
#: ``span(name, since)`` records the wall and CPU seconds since ``since`` in ``spans``
#: (as ``name_wall``, ``name_cpu``) and returns the time now.
SPAN_CLOCK = """
import json, resource, sys, time
import numpy as np
clock = lambda: (time.perf_counter(), time.process_time())
spans = {}
def span(name, since):
    now = clock()
    spans[name + "_wall"], spans[name + "_cpu"] = now[0] - since[0], now[1] - since[1]
    return now
"""

_MAKE_DATA = """
import sys
import numpy as np
from sklearn import datasets
kind, n, n_test = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if kind == "classification":
    X, y = datasets.make_classification(
        n_samples=n + n_test, n_features=20, n_informative=10, random_state=0)
else:
    X, y = datasets.make_regression(
        n_samples=n + n_test, n_features=20, n_informative=10, noise=10.0, random_state=0)
paths = sys.argv[4:]
np.save(paths[0], X[:n]); np.save(paths[1], y[:n])
if n_test:
    np.save(paths[2], X[n:]); np.save(paths[3], y[n:])
"""


def saved_data(folder: str, kind: str, n: int, n_test: int = 0) -> list:
    """Paths of .npy files (X, y, and with ``n_test`` rows held out, X_test, y_test) of
    scikit-learn's make_classification or make_regression (20 features, 10 informative,
    seeded), written by another process: a child's peak memory (ru_maxrss) starts at its
    parent's on Linux, so the data must not pass through the measuring script."""
    import os
    import subprocess
    import sys

    names = ["X", "y"] + (["X_test", "y_test"] if n_test else [])
    paths = [os.path.join(folder, f"{name}.npy") for name in names]
    subprocess.run(
        [sys.executable, "-c", _MAKE_DATA, kind, str(n), str(n_test), *paths], check=True
    )
    return paths
