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
