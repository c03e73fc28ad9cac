"""The PyInstaller one-folder bundle, built once per module by packaging/build_bundle.py and run
headless: `--version`, `plan` on the demo model it carries, and the window's `--screenshot`
on Qt's offscreen platform.

Any error output fails a test: stderr must be empty. Qt's offscreen platform prints
"This plugin does not support propagateSizeHints()" whenever a window is shown; that is the
plugin describing itself, not a fault, and `--screenshot` drops exactly that message in its Qt
message handler (gui/qt/app.py), as the pytest-qt configuration ignores it. Every other
Qt warning still reaches stderr and fails here.

Slow (~30 s to freeze); CI runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PyInstaller.depend.bindepend import get_imports
from PySide6.QtGui import QColor, QImage

from gguf_budget.core.version import __version__
from gguf_budget.resources import DEMO_MODEL

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "packaging" / "build_bundle.py"
BUNDLED_PREFIXES = ("libQt6", "libpyside6", "libshiboken6", "libicu")

pytestmark = pytest.mark.slow


def frozen_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    return {**env, **extra}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory, built_wheel: Path) -> Path:
    """Frozen from the run's one wheel (conftest's `built_wheel`, which test_packaging_wheel checks)."""
    out = tmp_path_factory.mktemp("bundle")
    cmd = [sys.executable, str(BUILD), "--wheel", str(built_wheel), "--dist", str(out / "dist"), "--work", str(out / "work")]
    built = subprocess.run(cmd, capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    return out / "dist" / "gguf-budget"


def frozen(bundle: Path, *args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(bundle / "gguf-budget"), *args], cwd=cwd, capture_output=True, text=True, env=frozen_env(**env))


def test_no_code_juggles_the_pyinstaller_temp_path():
    sources = [p for d in ("core", "gui", "resources") for p in (ROOT / d).rglob("*.py")]
    assert not [p for p in sources if "_MEIPASS" in p.read_text(encoding="utf-8")]


def test_frozen_version(bundle: Path, tmp_path: Path):
    out = frozen(bundle, "--version", cwd=tmp_path)
    assert (out.returncode, out.stdout, out.stderr) == (0, f"gguf-budget {__version__}\n", "")


def test_frozen_plan_on_the_carried_demo_matches_the_checkout(bundle: Path, tmp_path: Path):
    demo = bundle / "_internal" / "gguf_budget" / "resources" / DEMO_MODEL
    out = frozen(bundle, "plan", str(demo), "--budget", "512M", "--json", "--no-measure", cwd=tmp_path)
    assert (out.returncode, out.stderr) == (0, "")
    checkout = subprocess.run(
        [Path(sys.executable).with_name("gguf-budget"), "plan", str(ROOT / "resources" / DEMO_MODEL),
         "--budget", "512M", "--json", "--no-measure"],
        capture_output=True, text=True, check=True,
    )
    assert json.loads(out.stdout) == json.loads(checkout.stdout)


def test_bundle_carries_the_plugins_the_window_needs_and_not_the_dropped_ones(bundle: Path):
    plugins = bundle / "_internal" / "PySide6" / "Qt" / "plugins"
    present = {p.relative_to(plugins).as_posix() for p in plugins.rglob("*.so")}
    needed = {"platforms/libqoffscreen.so", "platforms/libqxcb.so", "imageformats/libqsvg.so", "iconengines/libqsvgicon.so"}
    assert needed <= present
    assert not {"platforms/libqeglfs.so", "platformthemes/libqgtk3.so", "imageformats/libqpdf.so"} & present
    assert not (plugins / "sqldrivers").exists()


def test_every_qt_library_a_bundled_binary_links_to_is_bundled(bundle: Path):
    internal = bundle / "_internal"
    binaries = [p for p in internal.rglob("*.so*") if p.is_file() and not p.is_symlink()]
    names = {p.name for p in internal.rglob("*.so*")}
    unresolved = {
        (binary.name, name)
        for binary in binaries
        for name, _ in get_imports(str(binary))
        if name.startswith(BUNDLED_PREFIXES) and name not in names
    }
    assert not unresolved


def test_frozen_window_renders_offscreen_without_error_output(bundle: Path, tmp_path: Path):
    shot = tmp_path / "window.png"
    out = frozen(bundle, "--screenshot", str(shot), "--budget", "384M", cwd=tmp_path, QT_QPA_PLATFORM="offscreen")
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")
    image = QImage(str(shot))
    assert (image.width(), image.height()) == (1440, 900)
    corners = {QColor(image.pixel(x, y)).name() for x in (0, 1439) for y in (0, 899)}
    centre = {QColor(image.pixel(x, 450)).name() for x in range(0, 1440, 16)}
    assert len(centre - corners) > 3, "the screenshot is blank"
