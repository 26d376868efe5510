"""The example plugin installs (no network: built with the running environment's
setuptools, into a temporary target the running interpreter then reads first), is
discovered by its entry point, and passes its tests. The running environment is whatever
the user activated: a venv, or the base interpreter."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "treekit-example-criterion"


@pytest.mark.skipif(not EXAMPLE.exists(), reason="run from the source tree")
def test_example_installs_is_discovered_and_passes_its_tests(tmp_path):
    target = tmp_path / "site"
    python = sys.executable
    installed = subprocess.run(
        [
            python,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(target),
            str(EXAMPLE),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert installed.returncode == 0, f"pip failed:\n{installed.stdout}\n{installed.stderr}"
    env = {k: v for k, v in os.environ.items() if k != "TREEKIT_LOAD_PLUGINS"}
    env["PYTHONPATH"] = os.pathsep.join([str(target), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    found = subprocess.run(
        [
            python,
            "-c",
            "from treekit_core.registry import get_registry;"
            "info = get_registry().components('criterion')['tsallis'];"
            "print(info.distribution);"
            "assert get_registry().components('loss')['pseudo_huber'].distribution == "
            "info.distribution;"
            "import treekit_example_criterion as m; print(m.__file__)",
        ],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    distribution, location = found.stdout.split()
    assert distribution == "treekit-example-criterion"
    assert location.startswith(str(target))  # the installed copy, not the source tree
    tests = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE / "tests")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "4 passed" in tests.stdout  # the criterion's two tests, the loss's two
