"""Passes over rows on several threads without a barrier: dynamic chunks on a pool.

numba's ``prange`` splits the rows into one static share per thread and waits at a barrier
for every share: on a busy machine (another process on one of the cores) the pass waits a
scheduler time slice for the thread whose core is taken, which turned a 1 ms prediction
into 8 ms. Here a serial, GIL-free kernel runs over chunks of rows that idle threads take
one after another, and only passes large enough that a late chunk cannot dominate use
threads at all.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from treekit_core.kernels.usable_cpus import row_threads

#: A pass worth fewer rows of the threshold walk runs on the calling thread (the walk takes
#: about 15 ms for 100 000 rows: little more than a scheduler time slice on a busy machine).
PARALLEL_ROWS = 250_000
#: Chunks per thread: enough that a thread slowed by another process leaves its share to
#: the others.
CHUNKS_PER_THREAD = 8


def for_row_chunks(
    kernel,
    n_rows: int,
    *arguments,
    cost: float = 1.0,
    threads: int | None = None,
    min_chunk_rows: int = 1,
) -> None:
    """Call ``kernel(*arguments, start, stop)`` over consecutive row ranges covering
    ``0..n_rows``, on up to ``threads`` threads (default: what the caller allows here,
    :func:`~treekit_core.kernels.usable_cpus.row_threads`) when the pass is worth at least
    PARALLEL_ROWS rows of the threshold walk (``cost``: the kernel's time per row in walk
    rows). ``kernel`` must release the GIL and write only its own rows. Chunks hold at
    least ``min_chunk_rows`` rows where that leaves a chunk to every thread (as many
    chunks as a multiple of the threads): a kernel that reads a large structure for every
    chunk (a forest's trees) reads it less often."""
    threads = row_threads() if threads is None else threads
    if threads <= 1 or n_rows * cost < PARALLEL_ROWS:
        kernel(*arguments, 0, n_rows)
        return
    chunks = min(threads * CHUNKS_PER_THREAD, max(1, n_rows // max(1, min_chunk_rows)))
    chunks = max(threads, chunks - chunks % threads)
    size = -(-n_rows // chunks)
    starts = range(0, n_rows, size)
    with ThreadPoolExecutor(threads) as pool:
        for future in [pool.submit(kernel, *arguments, s, min(s + size, n_rows)) for s in starts]:
            future.result()
