"""The example plugin installs into a fresh virtual environment that reuses the installed
dependencies (no network), is discovered by its entry point, and passes its tests."""

import os
import subprocess
import venv
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "treekit-example-criterion"


@pytest.mark.skipif(not EXAMPLE.exists(), reason="run from the source tree")
def test_example_installs_is_discovered_and_passes_its_tests(tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [
            python,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            str(EXAMPLE),
        ],
        check=True,
        capture_output=True,
    )
    env = {k: v for k, v in os.environ.items() if k != "TREEKIT_LOAD_PLUGINS"}
    found = subprocess.run(
        [
            python,
            "-c",
            "from treekit_core.registry import get_registry;"
            "info = get_registry().components('criterion')['tsallis'];"
            "print(info.distribution)",
        ],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    assert found.stdout.strip() == "treekit-example-criterion"
    tests = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE / "tests")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "3 passed" in tests.stdout or "2 passed" in tests.stdout
