"""Static checks run with the tests: mypy (strict for the core, normal for the GUI) and ruff.

mypy maps files to modules by folder, but the package's folders (`core/`, `gui/`) are mapped to
`gguf_budget.*` only by setuptools. The check therefore builds a `gguf_budget/` folder of
symbolic links in a temporary directory and points mypy at it: the same files, their real names.
Both mypy runs share that folder and one cache: the GUI's run follows its imports into the core, which the core's
run has just checked under the same configuration (mypy rechecks whatever is stale or had errors).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOLS = Path(sys.executable).parent


@pytest.fixture(scope="module")
def package_view(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `gguf_budget/` folder of links (and beside it mypy's cache), made once for both mypy runs."""
    base = tmp_path_factory.mktemp("mypy")
    view = base / "gguf_budget"
    view.mkdir()
    for folder in ("core", "gui", "resources"):
        (view / folder).symlink_to(ROOT / folder, target_is_directory=True)
    return base


def _mypy(base: Path, package: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MYPYPATH": str(base)}
    return subprocess.run(
        [str(TOOLS / "mypy"), "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(base / "cache"),
         "-p", package],
        cwd=base, env=env, capture_output=True, text=True,
    )


def test_mypy_strict_on_the_core(package_view):
    result = _mypy(package_view, "gguf_budget.core")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "Success: no issues found" in result.stdout


def test_mypy_on_the_gui(package_view):
    result = _mypy(package_view, "gguf_budget.gui")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "Success: no issues found" in result.stdout


def test_ruff_finds_nothing():
    result = subprocess.run([str(TOOLS / "ruff"), "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
