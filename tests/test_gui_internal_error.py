"""An internal error is shown, not only logged: one dialog pointing at the log, with Copy details, and nothing reset.

Real windows, real signals and slots, the real rotating log file in a temporary folder. pytest-qt's own
exception capture is off here: the app's hook (`explorer.errors.hook`) is `sys.excepthook`, as
`run_window` installs it, and PySide hands every exception a slot raises to it.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
from gui_support import child, open_model, settle
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog

from gguf_budget.gui.qt.log_file import start_log_file, stop_log_file

pytestmark = pytest.mark.qt_no_exception_capture


class Trigger(QObject):
    fired = Signal()


def a_buggy_slot() -> None:
    raise RuntimeError("a bug in a slot")


@pytest.fixture
def log_file(tmp_path: Path):
    """The app's log file, started as `run_window` starts it, in the folder the explorer is composed with."""
    handler = start_log_file(tmp_path / "logs")
    assert handler is not None
    yield Path(handler.baseFilename)
    stop_log_file(handler)


@pytest.fixture
def hooked(make_explorer, monkeypatch):
    """The composed app with its error report as `sys.excepthook` (what `run_window` does)."""
    explorer = make_explorer()
    monkeypatch.setattr(sys, "excepthook", explorer.errors.hook)
    return explorer


def the_dialog(window) -> QDialog:
    dialogs = window.findChildren(QDialog, "internalErrorDialog")
    assert len(dialogs) == 1
    return dialogs[0]


def test_an_exception_in_a_slot_shows_the_error_with_the_log_path_and_keeps_the_model(
        qtbot, hooked, write_model, log_file):
    window = hooked.window
    model = open_model(qtbot, window, write_model())
    title = window.windowTitle()
    window.planChanged.connect(a_buggy_slot)

    window.apply_request(ctx=2048)  # the plan is redrawn, then the buggy slot runs
    settle(qtbot, window)

    dialog = the_dialog(window)
    assert dialog.isVisible() and not dialog.isModal()
    assert child(dialog, "internalErrorHeading").text() == "Internal error — details in the log"
    assert child(dialog, "internalErrorMessage").text() == "RuntimeError: a bug in a slot"
    assert child(dialog, "internalErrorLog").text() == f"Log: {log_file}"
    assert not child(dialog, "internalErrorCount").isVisible()

    QGuiApplication.clipboard().clear()
    qtbot.mouseClick(child(dialog, "copyErrorDetails"), Qt.MouseButton.LeftButton)
    copied = QGuiApplication.clipboard().text()
    assert "Traceback (most recent call last):" in copied and "in a_buggy_slot" in copied
    assert copied.rstrip().endswith("RuntimeError: a bug in a slot")

    assert window.session.state.model is model  # nothing reset: the model, its plan at the asked ctx, the title
    assert window.session.view.state.ctx == 2048 and window.session.view.plan is not None
    assert window.windowTitle() == title and not child(window, "loadError").isVisible()
    logged = log_file.read_text(encoding="utf-8")
    assert "CRITICAL gguf_budget.gui.qt.error_report [MainThread]: internal error" in logged and "in a_buggy_slot" in logged


def test_a_hundred_errors_make_one_dialog_that_counts_them(qtbot, hooked):
    window = hooked.window
    trigger = Trigger()
    trigger.fired.connect(a_buggy_slot)

    for _ in range(100):
        trigger.fired.emit()

    dialog = the_dialog(window)
    assert dialog.isVisible()
    assert child(dialog, "internalErrorCount").text() == "100 internal errors so far; the latest is shown."
    assert child(dialog, "internalErrorLog").text().startswith("No log file at")  # no log was started here


def test_an_error_on_a_worker_thread_is_shown_on_the_gui_thread(qtbot, hooked):
    window = hooked.window

    def work() -> None:
        try:
            {}["missing"]
        except KeyError as e:
            sys.excepthook(KeyError, e, e.__traceback__)

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: bool(window.findChildren(QDialog, "internalErrorDialog"))
                    and the_dialog(window).isVisible())
    assert child(the_dialog(window), "internalErrorMessage").text() == "KeyError: 'missing'"


def test_ctrl_c_is_not_an_internal_error(qtbot, hooked, capsys):
    window = hooked.window
    sys.excepthook(KeyboardInterrupt, KeyboardInterrupt(), None)
    assert not the_dialog(window).isVisible()
    assert "KeyboardInterrupt" in capsys.readouterr().err
