"""The wheel, as a user gets it: built by packaging/build_bundle.py from a clean copy of the
sources, one `gguf_budget` namespace holding every module and resource, and a fresh virtual
environment whose `gguf-budget` answers `--version`, `inspect` and `plan` on the bundled demo
from a folder outside the source tree, exactly as the checkout does.

Slow (a wheel build and a dependency install, ~20 s with a warm pip cache); CI runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from gguf_budget.core.version import __version__

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"core": "gguf_budget/core", "gui": "gguf_budget/gui", "resources": "gguf_budget/resources"}

pytestmark = pytest.mark.slow


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}


def source_files() -> dict[str, Path]:
    """Wheel path → source file, for every file the source package folders hold."""
    found = {}
    for folder, target in PACKAGES.items():
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                found[f"{target}/{path.relative_to(ROOT / folder).as_posix()}"] = path
    return found


@pytest.fixture(scope="module")
def wheel(built_wheel: Path) -> Path:
    """Built once a run (conftest), and the bundle is frozen from the same file."""
    return built_wheel


@pytest.fixture(scope="module")
def venv_bin(wheel: Path, tmp_path_factory) -> Path:
    """A fresh virtual environment with the wheel and its dependencies installed. pip byte-compiles nothing
    (`--no-compile`): the few modules the tests import are compiled when imported, not the thousands installed."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    install = [sys.executable, "-m", "pip", "--quiet", "--python", str(venv / "bin" / "python"), "install", "--no-compile",
               str(wheel)]
    subprocess.run(install, check=True, capture_output=True, text=True, env=clean_env())
    return venv / "bin"


def run(program: Path | str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(program), *args], cwd=cwd, capture_output=True, text=True, env=clean_env())


def test_wheel_holds_every_source_file_under_one_namespace(wheel: Path):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {n.split("/")[0] for n in names} == {"gguf_budget", f"gguf_budget-{__version__}.dist-info"}
    missing = sorted(set(source_files()) - names)
    assert not missing, f"not in the wheel (package list or package-data globs?): {missing}"


def test_wheel_ships_demo_icons_and_desktop_entry(wheel: Path):
    names = set(zipfile.ZipFile(wheel).namelist())
    res = "gguf_budget/resources/"
    expected = {"demo-tinyllama-1.1b-chat-q4_k_m.skeleton.gguf", "gguf-budget.desktop", "gguf-budget-mime.xml",
                "icons/gguf-budget.svg"}
    expected |= {f"icons/gguf-budget-{n}.png" for n in (16, 24, 32, 48, 64, 128, 256)}
    assert {res + e for e in expected} <= names


def test_wheel_metadata_carries_the_one_version(wheel: Path):
    metadata = zipfile.ZipFile(wheel).read(f"gguf_budget-{__version__}.dist-info/METADATA").decode()
    assert f"\nVersion: {__version__}\n" in metadata
    assert wheel.name == f"gguf_budget-{__version__}-py3-none-any.whl"


def test_fresh_venv_imports_from_itself_not_the_checkout(venv_bin: Path, tmp_path: Path):
    probe = "import gguf_budget.core, gguf_budget.resources as r; print(gguf_budget.core.__file__); print(r.demo_model_path())"
    out = run(venv_bin / "python", "-c", probe, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    for line in out.stdout.splitlines():
        assert Path(line).is_relative_to(venv_bin.parent)
    assert Path(out.stdout.splitlines()[1]).stat().st_size > 0


def test_console_script_answers_version(venv_bin: Path, tmp_path: Path):
    out = run(venv_bin / "gguf-budget", "--version", cwd=tmp_path)
    assert (out.returncode, out.stdout, out.stderr) == (0, f"gguf-budget {__version__}\n", "")


@pytest.mark.parametrize(
    "args",
    [
        ("inspect", "DEMO", "--json"),
        ("plan", "DEMO", "--budget", "512M", "--json", "--no-measure"),
        ("plan", "DEMO", "--budget", "64M", "--json", "--no-measure"),
    ],
)
def test_installed_subcommands_match_the_checkout_on_the_demo(venv_bin: Path, tmp_path: Path, args):
    where = run(venv_bin / "python", "-c", "from gguf_budget.resources import demo_model_path as d; print(d())", cwd=tmp_path)
    demo = where.stdout.strip()
    installed = run(venv_bin / "gguf-budget", *(demo if a == "DEMO" else a for a in args), cwd=tmp_path)
    checkout_demo = str(ROOT / "resources" / Path(demo).name)
    checkout = run(Path(sys.executable).with_name("gguf-budget"), *(checkout_demo if a == "DEMO" else a for a in args), cwd=tmp_path)
    assert installed.stderr == ""
    assert installed.returncode == checkout.returncode == (3 if "64M" in args else 0)
    assert json.loads(installed.stdout.replace(demo, "DEMO")) == json.loads(checkout.stdout.replace(checkout_demo, "DEMO"))
