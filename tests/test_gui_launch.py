"""`gguf-budget [FILE] [--budget] [--ctx] [--screenshot]`: the window starts where asked, bad input exits 2.

Launching counts work, not time: what was imported and installed when the first plan was painted (the add-ons; the
wheel guard, which runs for value widgets' events only), and how often and where Qt filled its font database (its own debug messages,
`qt.text.font.db`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gui_support import MIB, child, open_model
from PySide6.QtCore import QPoint, QThreadPool
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QWidget

from gguf_budget.core import load_model
from gguf_budget.gui.cli import main
from gguf_budget.gui.cli.launch import no_display, parse_launch_args
from gguf_budget.gui.qt.theme import TIER_COLOURS
from gguf_budget.gui.qt.app import open_window
from gguf_budget.gui.qt.screenshot import SCREENSHOT_SIZE, shoot
from gguf_budget.resources import demo_model_path
from launch_watch import app_env

CLI = Path(sys.executable).with_name("gguf-budget")


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    (cwd / "tmp").mkdir(exist_ok=True)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(cwd), "XDG_CONFIG_HOME": str(cwd / "config"),
           "TMPDIR": str(cwd / "tmp")}
    return subprocess.run([str(CLI), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def banner_colours(png: Path, window: QWidget) -> set[str]:
    """The PNG's colours inside the Budget plan's tier bar's padding (left, right, top), where it sits in `window`."""
    banner = child(window, "bannerTier")
    left, top = banner.mapTo(window, QPoint(0, 0)).toTuple()
    right, middle = left + banner.width() - 1, top + banner.height() // 2
    image = QImage(str(png))
    points = ((left + 1, middle), (right - 1, middle), (left + banner.width() // 2, top + 1))
    return {image.pixelColor(x, y).name().upper() for x, y in points}


@pytest.fixture
def screen_window(qtbot, make_explorer):
    """A composed window of the screenshot's size, as the screenshot lays it out."""
    explorer = make_explorer()
    explorer.window.resize(*SCREENSHOT_SIZE)
    return explorer


def test_no_file_means_the_bundled_demo():
    assert parse_launch_args([]).file == str(demo_model_path())


@pytest.mark.parametrize("args, message", [
    (["--budget", "lots"], "argument --budget: not a size: 'lots'"),
    (["--ctx", "0"], "argument --ctx: a context must be from 1 to 16,777,216 tokens, got 0"),
    (["missing.gguf"], "no such file: missing.gguf"),
    (["--bogus"], "unrecognized arguments: --bogus"),
])
def test_bad_arguments_exit_2_with_one_line(capsys, args, message):
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


@pytest.mark.parametrize("environ, platform, missing", [
    ({}, "linux", True), ({"DISPLAY": ":0"}, "linux", False), ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", False),
    ({"QT_QPA_PLATFORM": "offscreen"}, "linux", False), ({"DISPLAY": ""}, "linux", True), ({}, "darwin", False),
    ({}, "win32", False),
])
def test_a_missing_display_is_known_before_qt_starts(environ, platform, missing):
    assert no_display(environ, platform) is missing


def test_without_a_display_the_window_says_so_in_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    done = subprocess.run([str(CLI)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith("gguf-budget: no display") and done.stderr.count("\n") == 1


def test_screenshot_of_the_demo_writes_a_full_window_png(qtbot, tmp_path, screen_window):
    out = tmp_path / "shot.png"
    done = run_cli("--screenshot", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    image = QImage(str(out))
    assert (image.width(), image.height()) == SCREENSHOT_SIZE
    open_model(qtbot, screen_window.window, demo_model_path())  # where the command's banner sits
    [colour] = banner_colours(out, screen_window.window)
    assert colour in {QColor(c).name().upper() for c in TIER_COLOURS.values()}
    assert not list((tmp_path / "tmp").iterdir())  # no gguf-budget-shot-* folder left behind


@pytest.mark.parametrize("budget, state, tier", [("20M", "impossible", "won't"), ("90M", "feasible", "fits"),
                                                 ("0", "unlimited", "fits")])
def test_screenshot_budget_sets_the_banner(tmp_path, write_model, screen_window, budget, state, tier):
    out = tmp_path / "shot.png"
    options = parse_launch_args([str(write_model()), "--budget", budget, "--ctx", "1024", "--screenshot", str(out)])
    assert shoot(screen_window, options) is None
    assert child(screen_window.window, "banner").property("state") == state
    assert child(screen_window.window, "bannerTier").property("tier") == tier
    assert banner_colours(out, screen_window.window) == {QColor(TIER_COLOURS[tier]).name().upper()}


def test_screenshot_of_a_corrupt_file_exits_2_with_its_reason(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a gguf file at all")
    done = run_cli(str(bad), "--screenshot", str(tmp_path / "x.png"), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("gguf-budget: ") and "bad.gguf" in done.stderr and done.stderr.count("\n") == 1
    assert not (tmp_path / "x.png").exists()


def test_the_window_opens_file_then_applies_budget_and_ctx(qtbot, settings_store, write_model, tmp_path):
    path = write_model()
    window = open_window(parse_launch_args([str(path), "--budget", "70M", "--ctx", "1024"]), settings_store,
                         tmp_path / "logs")
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.planChanged, check_params_cb=lambda: window.session.view.plan.ctx_explicit):
        pass
    assert window.isVisible() and window.session.state.model == load_model(path)
    plan = window.session.view.plan
    assert (plan.budget.limit, plan.ctx, plan.ctx_explicit) == (70 * MIB, 1024, True)
    QThreadPool.globalInstance().waitForDone(5000)


FIRST_PLAN = r"""
import faulthandler, json, sys, threading
faulthandler.dump_traceback_later(100, exit=True)  # a hung child says where every thread is, before the test's timeout
from PySide6.QtCore import QEvent, QObject, QTimer, qInstallMessageHandler
from PySide6.QtWidgets import QApplication
import gguf_budget.gui.qt.app as app_module
import gguf_budget.gui.qt.wheel_guard as wheel_guard
from gguf_budget.gui.cli import main

ADD_ONS = ("gguf_budget.gui.qt.addons", "gguf_budget.gui.qt.library.wiring", "gguf_budget.gui.qt.whatif.wiring",
           "gguf_budget.gui.qt.quants.wiring", "gguf_budget.gui.qt.evidence.evidence_link")
seen = {"events": [], "fonts filled on": []}

def messages(mode, context, message):
    if message == "Populating font database":
        seen["fonts filled on"].append(threading.current_thread().name)

qInstallMessageHandler(messages)
opened = app_module.open_window
filtered = set()
guard_filter = wheel_guard.WheelGuard.eventFilter

def counted(self, watched, event):
    filtered.add(wheel_guard.takes_value(watched))
    return guard_filter(self, watched, event)

wheel_guard.WheelGuard.eventFilter = counted

class FirstPaint(QObject):
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint and window.session.state.model is not None and not seen["events"]:
            seen["events"].append("plan painted")
            seen["add-ons imported then"] = sorted(m for m in ADD_ONS if m in sys.modules)
            seen["wheel guard then"] = QApplication.instance().findChild(QObject, "wheelGuard") is not None
            seen["filtered then"] = sorted(filtered)
        return False

def watched(options, *args, composed, **kwargs):
    global window

    def installed(explorer):
        composed(explorer)
        seen["events"].append("add-ons installed")
        print(json.dumps(seen), flush=True)
        QTimer.singleShot(0, window.close)

    window = opened(options, *args, composed=installed, **kwargs)
    window.ledger_chart().installEventFilter(FirstPaint(window))
    return window

app_module.open_window = watched
sys.exit(main([]))
"""


def test_the_first_plan_is_painted_before_the_add_ons_and_the_font_database_is_filled_once_off_the_gui_thread(tmp_path):
    env = app_env(tmp_path, QT_LOGGING_RULES="qt.text.font.db.debug=true")
    done = subprocess.run([sys.executable, "-c", FIRST_PLAN], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["events"] == ["plan painted", "add-ons installed"]
    assert seen["add-ons imported then"] == []
    assert seen["wheel guard then"]  # from the start, and Python for value widgets' events only, not every event:
    assert seen["filtered then"] in ([], [True])
    assert seen["fonts filled on"] == ["font-database"]  # once, and not by the GUI thread's first text measure
