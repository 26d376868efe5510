"""How many CPUs this process may actually use, so numba starts no more threads than that.

numba's default thread count is the machine's CPU count, which ignores the CPU affinity
mask (``taskset``, a job scheduler's cpuset) and a container's CPU quota (cgroups). A
parallel region then waits at its barrier for threads whose cores it does not have; on a
2-CPU quota in a 64-core machine that is 62 threads too many. This module reads both limits
without importing numba, so the cap can be set before numba reads its configuration.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import sys
import threading

#: cgroup v2 and v1 files holding the CPU quota (relative to the cgroup mount).
CGROUP_V2_MAX = "/sys/fs/cgroup/cpu.max"
CGROUP_V1_QUOTA = "/sys/fs/cgroup/cpu/cpu.cfs_quota_us"
CGROUP_V1_PERIOD = "/sys/fs/cgroup/cpu/cpu.cfs_period_us"


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as handle:
            return handle.read().strip()
    except (OSError, UnicodeDecodeError):
        return None


def cgroup_cpu_limit(
    v2_max: str = CGROUP_V2_MAX, v1_quota: str = CGROUP_V1_QUOTA, v1_period: str = CGROUP_V1_PERIOD
) -> int | None:
    """CPUs the cgroup quota allows (quota / period rounded up), or None without a quota."""
    text = _read(v2_max)
    if text:
        parts = text.split()
        if len(parts) == 2 and parts[0] != "max":
            try:
                quota, period = int(parts[0]), int(parts[1])
            except ValueError:
                return None
            if quota > 0 and period > 0:
                return max(1, math.ceil(quota / period))
        return None
    quota, period = _read(v1_quota), _read(v1_period)
    try:
        quota_value, period_value = int(quota), int(period)
    except (TypeError, ValueError):
        return None
    if quota_value > 0 and period_value > 0:
        return max(1, math.ceil(quota_value / period_value))
    return None


def usable_cpus() -> int:
    """The smallest of the CPU count, the affinity mask and the cgroup quota (at least 1)."""
    counts = [os.cpu_count() or 1]
    if hasattr(os, "sched_getaffinity"):
        try:
            counts.append(len(os.sched_getaffinity(0)))
        except OSError:
            pass
    limit = cgroup_cpu_limit()
    if limit is not None:
        counts.append(limit)
    return max(1, min(counts))


def cap_numba_threads() -> None:
    """Import numba with its default thread count set to the usable CPUs. An explicit
    ``NUMBA_NUM_THREADS`` wins (the user's cap); if numba is already imported, the calling
    thread's count is lowered instead.

    The variable is set only while numba reads its configuration and removed afterwards:
    left in the environment, joblib would pass it to every worker process instead of
    dividing the CPUs among them (cpu_count // n_jobs), oversubscribing the machine."""
    if os.environ.get("NUMBA_NUM_THREADS"):
        return
    usable = usable_cpus()
    if "numba" not in sys.modules:
        os.environ["NUMBA_NUM_THREADS"] = str(usable)
        try:
            import numba  # noqa: F401 - reads NUMBA_NUM_THREADS now
        finally:
            os.environ.pop("NUMBA_NUM_THREADS", None)
        return
    import numba

    if numba.get_num_threads() > usable:
        numba.set_num_threads(usable)


#: Serialises the first import of joblib: its modules import each other in a cycle, so
#: two threads entering it at once (a process's first fits on several threads) deadlock or
#: see a partly initialised module (``ImportError``, ``KeyError: 'joblib'``).
_JOBLIB_IMPORT = threading.Lock()


def _imported_whole(module) -> bool:
    """Whether ``module`` (from ``sys.modules``, or None) has finished executing: Python
    marks a module's spec as initialising while its code runs."""
    spec = getattr(module, "__spec__", None)
    return module is not None and not getattr(spec, "_initializing", False)


def joblib_parallel():
    """joblib's ``parallel`` module, imported once under a lock (see ``_JOBLIB_IMPORT``);
    every fit path that needs joblib takes it from here."""
    module = sys.modules.get("joblib.parallel")
    if _imported_whole(module):
        return module
    with _JOBLIB_IMPORT:
        import joblib.parallel

        return joblib.parallel


def fit_threads(requested=None) -> int:
    """How many threads one fit may run: numba's thread count (the usable CPUs, or the
    user's ``NUMBA_NUM_THREADS``), at most ``requested`` (an estimator's ``n_threads``;
    None or -1: no further cap), and one in a worker thread of joblib (GridSearchCV,
    cross_validate, a threaded forest), whose caller already runs one fit per CPU. A joblib
    worker *process* gets its share from joblib through ``NUMBA_NUM_THREADS``."""
    import numba
    from numba.np.ufunc import parallel

    count = numba.config.NUMBA_NUM_THREADS
    if parallel._is_initialized:  # numba's own pool is running: its per-thread setting counts
        count = min(count, numba.get_num_threads())
    if requested is not None and requested != -1:
        count = min(count, requested)
    # a joblib worker thread exists only once joblib was imported whole; a module still
    # being imported by another thread is no sign of one (and no module to import from)
    in_worker = threading.current_thread() is not threading.main_thread()
    if in_worker and _imported_whole(sys.modules.get("joblib.parallel")):
        backend, _ = joblib_parallel().get_active_backend()
        if getattr(backend, "nesting_level", 0) >= 1:
            return 1
    return max(1, count)


#: The thread count of the innermost :func:`numba_threads_capped` block of this thread
#: (None outside any): what :func:`~treekit_core.kernels.row_chunks.for_row_chunks` uses.
_ROW_THREADS = contextvars.ContextVar("treekit_row_threads", default=None)


def row_threads() -> int:
    """How many threads a pass over rows (prediction) may use here: the cap of the
    enclosing :func:`numba_threads_capped` block, else :func:`fit_threads`."""
    count = _ROW_THREADS.get()
    return fit_threads() if count is None else count


@contextlib.contextmanager
def numba_threads_capped(count: int):
    """Within the block, numba's parallel kernels (the node fan-out of
    ``rows_reaching``) and treekit's row chunks (prediction, confidence scores) run on at
    most ``count`` threads. Both settings belong to the calling thread, so a fit in a
    joblib worker thread caps itself without touching its neighbours."""
    import numba

    from treekit_core.kernels.compiling import JIT_DISABLED

    token = _ROW_THREADS.set(max(1, count))
    try:
        previous = 0 if JIT_DISABLED else numba.get_num_threads()
        if count >= previous:
            yield
            return
        numba.set_num_threads(max(1, count))
        try:
            yield
        finally:
            numba.set_num_threads(previous)
    finally:
        _ROW_THREADS.reset(token)
