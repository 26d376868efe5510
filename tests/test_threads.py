"""numba starts no more threads than the CPUs this process may use."""

import os
import subprocess
import sys

import pytest

from treekit_core.kernels.usable_cpus import cgroup_cpu_limit


@pytest.mark.parametrize(
    "v2,expected",
    [("200000 100000", 2), ("150000 100000", 2), ("50000 100000", 1), ("max 100000", None)],
)
def test_cgroup_v2_quota_is_read_as_cpus_rounded_up(tmp_path, v2, expected):
    path = tmp_path / "cpu.max"
    path.write_text(v2 + "\n")
    assert cgroup_cpu_limit(str(path), "/nonexistent", "/nonexistent") == expected


@pytest.mark.parametrize("quota,expected", [("-1", None), ("50000", 1), ("250000", 3)])
def test_cgroup_v1_quota_is_read_when_there_is_no_v2_file(tmp_path, quota, expected):
    (tmp_path / "quota").write_text(quota)
    (tmp_path / "period").write_text("100000")
    limit = cgroup_cpu_limit("/nonexistent", str(tmp_path / "quota"), str(tmp_path / "period"))
    assert limit == expected


def test_garbage_or_missing_cgroup_files_mean_no_quota(tmp_path):
    (tmp_path / "bad").write_text("lots of cpus")
    assert cgroup_cpu_limit(str(tmp_path / "bad"), "/nonexistent", "/nonexistent") is None
    assert cgroup_cpu_limit("/nonexistent", "/nonexistent", "/nonexistent") is None


THREADS = (
    "import os; os.sched_setaffinity(0, {0}); "
    "from treekit_core.kernels import routing; import numba; "
    "print(numba.get_num_threads(), os.environ.get('NUMBA_NUM_THREADS'))"
)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no affinity masks here")
def test_numba_threads_follow_the_affinity_mask_unless_numba_num_threads_is_set():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_NUM_THREADS"}
    one = subprocess.run(
        [sys.executable, "-c", THREADS], env=env, capture_output=True, text=True, check=True
    )
    # one thread, and the environment left as it was (joblib divides the CPUs among its
    # workers only when the parent does not set NUMBA_NUM_THREADS)
    assert one.stdout.split() == ["1", "None"]
    if (os.cpu_count() or 1) >= 2:
        explicit = subprocess.run(
            [sys.executable, "-c", THREADS],
            env={**env, "NUMBA_NUM_THREADS": "2"},
            capture_output=True,
            text=True,
            check=True,
        )
        assert explicit.stdout.split() == ["2", "2"]  # the user's explicit cap wins


@pytest.mark.parametrize("threads", [1, 2, 3, 5])
def test_the_threshold_walk_in_row_chunks_reaches_the_serial_leaves(monkeypatch, threads):
    """Chunks of rows walked on a pool (every size of chunk, rows not divisible by the
    chunk count) give every row the leaf the serial walk gives it."""
    import numpy as np

    from treekit_core import TreeClassifier
    from treekit_core.kernels import row_chunks
    from treekit_core.kernels.usable_cpus import fit_threads, numba_threads_capped, row_threads

    rng = np.random.default_rng(threads)
    X = rng.normal(size=(1003, 5))
    y = (X[:, 0] + X[:, 1] ** 2 > 0.5).astype(int)
    model = TreeClassifier(n_threads=threads).fit(X, y)
    serial = model.apply(X)
    assert np.unique(serial).size > 10
    monkeypatch.setattr(row_chunks, "PARALLEL_ROWS", 7)
    seen = []
    walk = row_chunks.for_row_chunks

    def counting(kernel, n_rows, *arguments, **options):
        seen.append(row_threads())  # the count for_row_chunks takes when not given one
        return walk(kernel, n_rows, *arguments, **options)

    monkeypatch.setattr(row_chunks, "for_row_chunks", counting)
    np.testing.assert_array_equal(model.apply(X), serial)
    np.testing.assert_array_equal(model.predict_proba(X[::-1]), model.predict_proba(X)[::-1])
    assert seen and all(count == min(threads, fit_threads()) for count in seen)
    with numba_threads_capped(1):
        assert row_threads() == 1


def test_routing_of_other_questions_in_row_chunks_matches_one_pass(monkeypatch):
    """Trees with nominal questions and rows with missing values route through the
    question-kind kernels (leaves, C4.5's mixture, answers at listed nodes, leaves from
    given nodes): in row chunks on three threads as in one pass."""
    import numpy as np

    from treekit_core import TreeClassifier
    from treekit_core.engine.questions import answers_at, tree_leaves_from
    from treekit_core.kernels import row_chunks
    from treekit_core.kernels.usable_cpus import numba_threads_capped

    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, 5, 997), rng.normal(size=997), rng.normal(size=997)])
    y = ((X[:, 0] % 2 == 0) ^ (X[:, 1] > 0.3)).astype(int)
    X[rng.random(X.shape) < 0.1] = np.nan
    model = TreeClassifier(categorical_features=[0]).fit(X, y)
    tree = model.tree_
    internal = np.flatnonzero(~tree.is_leaf)
    rows = rng.permutation(997)[:500]
    starts = rng.choice(internal, size=500)

    def everything():
        return (
            model.predict_proba(X),
            model.apply(np.nan_to_num(X)),
            answers_at(tree, X, internal),
            tree_leaves_from(tree, X, rows, starts),
        )

    one_pass = everything()
    assert len({q.name for q in tree.questions}) >= 2  # a nominal kind beside thresholds
    monkeypatch.setattr(row_chunks, "PARALLEL_ROWS", 7)
    with numba_threads_capped(3):
        chunked = everything()
    for a, b in zip(one_pass, chunked, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "n_rows, threads, min_chunk_rows, n_chunks",
    [
        (100_000, 2, 1, 16),  # eight a thread
        (100_000, 2, 37_000, 2),  # two fit 37 000 rows: one a thread
        (100_000, 2, 20_000, 4),  # five fit: four (a multiple of the threads)
        (100_000, 4, 30_000, 4),  # three fit: still one a thread, smaller
        (1_000_000, 2, 37_000, 16),  # 27 fit: eight a thread at most
    ],
)
def test_row_chunks_cover_the_rows_once_in_chunks_of_the_rows_asked(
    n_rows, threads, min_chunk_rows, n_chunks
):
    """A chunked pass calls the kernel once per consecutive range, the ranges covering
    every row once; with ``min_chunk_rows`` (a forest's walk: half its trees' mean node
    count) as many chunks as fit that many rows, a multiple of the threads (at least one
    each), at most eight a thread."""
    from treekit_core.kernels import row_chunks

    seen = []
    row_chunks.for_row_chunks(
        lambda start, stop: seen.append((start, stop)),
        n_rows,
        threads=threads,
        cost=100.0,
        min_chunk_rows=min_chunk_rows,
    )
    seen.sort()
    assert len(seen) == n_chunks
    assert seen[0][0] == 0 and seen[-1][1] == n_rows
    assert all(a[1] == b[0] for a, b in zip(seen[:-1], seen[1:], strict=True))
    if n_rows // min_chunk_rows >= threads:
        assert min(stop - start for start, stop in seen) >= min_chunk_rows
