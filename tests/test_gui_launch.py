"""`gguf-budget [FILE] [--budget] [--ctx] [--screenshot]`: the window starts where asked, bad input exits 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from gui_support import MIB, write_model  # noqa: F401
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication

from gguf_budget.core import load_model
from gguf_budget.gui.cli import main
from gguf_budget.gui.launch import parse_launch_args
from gguf_budget.gui.main_window import MainWindow
from gguf_budget.gui.theme import BANNER_COLOURS
from gguf_budget.gui.window_app import SCREENSHOT_SIZE, run_window
from gguf_budget.resources import demo_model_path

CLI = Path(sys.executable).with_name("gguf-budget")


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(cwd), "XDG_CONFIG_HOME": str(cwd / "config")}
    return subprocess.run([str(CLI), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def banner_colour(png: Path) -> str:
    image = QImage(str(png))
    return image.pixelColor(13, 42).name().upper()  # inside the banner, left of its text


def test_no_file_means_the_bundled_demo():
    assert parse_launch_args([]).file == str(demo_model_path())


@pytest.mark.parametrize("args, message", [
    (["--budget", "lots"], "argument --budget: not a size: 'lots'"),
    (["--ctx", "0"], "argument --ctx: not a positive token count: '0'"),
    (["missing.gguf"], "no such file: missing.gguf"),
    (["--bogus"], "unrecognized arguments: --bogus"),
])
def test_bad_arguments_exit_2_with_one_line(capsys, args, message):
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_screenshot_of_the_demo_writes_a_full_window_png(tmp_path):
    out = tmp_path / "shot.png"
    done = run_cli("--screenshot", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    image = QImage(str(out))
    assert (image.width(), image.height()) == SCREENSHOT_SIZE
    assert banner_colour(out) in {c.upper() for c in BANNER_COLOURS.values()}


@pytest.mark.parametrize("budget, state", [("20M", "impossible"), ("90M", "feasible"), ("0", "unlimited")])
def test_screenshot_budget_sets_the_banner(tmp_path, write_model, budget, state):
    out = tmp_path / "shot.png"
    done = run_cli(str(write_model()), "--budget", budget, "--ctx", "1024", "--screenshot", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert banner_colour(out) == QColor(BANNER_COLOURS[state]).name().upper()


def test_screenshot_of_a_corrupt_file_exits_2_with_its_reason(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a gguf file at all")
    done = run_cli(str(bad), "--screenshot", str(tmp_path / "x.png"), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("gguf-budget: ") and "bad.gguf" in done.stderr and done.stderr.count("\n") == 1
    assert not (tmp_path / "x.png").exists()


@pytest.fixture
def user_settings_in(tmp_path):
    """Point the default (user) QSettings at a temporary folder for the test's duration."""
    home = os.environ.get("XDG_CONFIG_HOME", str(Path.home() / ".config"))
    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(tmp_path / "config"))
    yield tmp_path / "config"
    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, home)


def test_the_window_opens_file_then_applies_budget_and_ctx(qtbot, user_settings_in, write_model):
    path = write_model()
    seen = {}

    def watch() -> None:
        windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        if windows and windows[0].current_plan() is not None:
            seen["plan"], seen["model"] = windows[0].current_plan(), windows[0].current_model()
            windows[0].close()
        else:
            QTimer.singleShot(20, watch)

    QTimer.singleShot(0, watch)
    code = run_window(parse_launch_args([str(path), "--budget", "70M", "--ctx", "1024"]))
    assert code == 0
    assert seen["model"] == load_model(path)
    assert (seen["plan"].budget_bytes, seen["plan"].ctx, seen["plan"].ctx_explicit) == (70 * MIB, 1024, True)
    assert list(user_settings_in.rglob("*.conf")), "the window remembers its settings in the user's config"
