"""The folder of generated kernels holds code treekit runs: only a private one is used
(issue 33: a world-writable fallback folder let another local user run code)."""

import hashlib
import os
import pickle
import subprocess
import sys

import pytest

from treekit_core.kernels import generated

PLANTED = "import pathlib; pathlib.Path({marker!r}).write_text('ran')\n"


class _RunsOnLoad:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.fixture
def fallback_only(tmp_path, monkeypatch):
    """Only the temporary-directory fallback is a candidate: no TREEKIT_KERNEL_DIR and a
    cache directory that cannot be created (a file stands in its way)."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.delenv("TREEKIT_KERNEL_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker / "cache"))
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(generated.tempfile, "gettempdir", lambda: str(temporary))
    return temporary / f"treekit-kernels-{os.getuid()}"


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX ownership")
def test_a_fresh_fallback_folder_is_created_private(fallback_only):
    folder = generated.kernel_directory()
    assert folder == str(fallback_only)
    assert os.stat(folder).st_mode & 0o777 == 0o700


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX ownership")
def test_a_world_writable_fallback_folder_is_refused_and_its_planted_module_never_runs(
    fallback_only, tmp_path
):
    fallback_only.mkdir(mode=0o777)
    os.chmod(fallback_only, 0o777)  # as another user's umask would leave it
    marker = tmp_path / "planted-code-ran"
    source = "x = 1\n"
    # a module under the name treekit gives this source, and a pickle where numba looks
    # for its cache index: neither may be read
    digest = hashlib.sha256(source.encode()).hexdigest()[:20]
    (fallback_only / f"treekit_planted_{digest}.py").write_text(PLANTED.format(marker=str(marker)))
    (fallback_only / "__pycache__").mkdir()
    (fallback_only / "__pycache__" / f"treekit_planted_{digest}.x-1.py311.nbi").write_bytes(
        pickle.dumps(_RunsOnLoad(str(marker)))
    )
    with pytest.warns(generated.UnsafeKernelFolderWarning, match="writable by group or others"):
        with pytest.raises(OSError, match="TREEKIT_KERNEL_DIR"):
            generated.generated_module("planted", source, {}, "a test module")
    assert not marker.exists()


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX ownership")
def test_a_folder_owned_by_another_user_is_refused(fallback_only, monkeypatch):
    fallback_only.mkdir(mode=0o700)
    real_uid = os.getuid()
    # simulates the folder being another user's: treekit now believes it runs as real_uid+1
    monkeypatch.setattr(generated.os, "getuid", lambda: real_uid + 1)
    monkeypatch.setattr(generated.tempfile, "gettempdir", lambda: str(fallback_only.parent))
    other = fallback_only.parent / f"treekit-kernels-{real_uid + 1}"
    other.mkdir(mode=0o700)
    assert generated.unsafe_folder(str(other)) == (
        f"{other}: owned by user id {real_uid}, not by you ({real_uid + 1})"
    )
    with pytest.warns(generated.UnsafeKernelFolderWarning, match="owned by user id"):
        with pytest.raises(OSError, match="no private, writable folder"):
            generated.kernel_directory()


def test_a_symbolic_link_is_refused(tmp_path):
    target = tmp_path / "target"
    target.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(target)
    assert generated.unsafe_folder(str(link)) == f"{link}: a symbolic link"
    assert generated.unsafe_folder(str(target)) is None


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX ownership")
def test_an_unsafe_configured_folder_falls_back_to_a_private_one_in_a_new_process(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    env = {**os.environ, "TREEKIT_KERNEL_DIR": str(shared), "XDG_CACHE_HOME": str(tmp_path)}
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "from treekit_core.kernels.generated import kernel_directory; "
            "print(kernel_directory())",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert run.stdout.strip() == str(tmp_path / "treekit" / "kernels")
    assert "writable by group or others" in run.stderr


# -- modules named by what they are generated from ------------------------------------


def test_a_module_named_by_its_identity_is_generated_once_and_again_when_not_whole(
    tmp_path, monkeypatch
):
    """A module whose text is costly to make is named by what determines it: a process
    that finds the file whole does not make the text; a file cut short or edited is made
    and written again (its first line is the hash of the rest)."""
    monkeypatch.setenv("TREEKIT_KERNEL_DIR", str(tmp_path))
    made = []

    def make():
        made.append(1)
        return "answer = 42\n"

    def load():
        generated._modules.clear()  # as a new process finds it
        return generated.generated_module("identity", make, {}, "a test module", identity="v1")

    assert load().answer == 42 and len(made) == 1
    (path,) = tmp_path.glob("treekit_identity_*.py")
    header, body = path.read_text().split("\n", 1)
    assert body == "answer = 42\n"
    assert header.endswith(hashlib.sha256(body.encode()).hexdigest())
    stamp = path.stat().st_mtime_ns
    assert load().answer == 42 and len(made) == 1  # found whole: not made again
    assert path.stat().st_mtime_ns == stamp  # nor rewritten (numba's cache keys on it)
    path.write_text(header + "\nanswer = 7\n")  # edited by hand: not whole any more
    assert load().answer == 42 and len(made) == 2
    path.write_text(header[:10])  # cut short
    assert load().answer == 42 and len(made) == 3
    other = generated.generated_module("identity", make, {}, "a test module", identity="v2")
    assert other.__name__ != load().__name__  # another identity, another file
