"""Every off-thread call ends: a bug in a backend says "internal error", clears the busy state and logs its traceback.

Real windows and views, real worker threads; the backends are plain functions that raise,
as a bug in the loader, the probe or the planner would. The log is the real rotating file
the app writes, in a temporary folder.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest
import shiboken6
from gui_support import MIB, child
from PySide6.QtCore import QThreadPool, QUrl

from gguf_budget.core import ModelLoadError
from gguf_budget.gui.qt.log_file import BACKUP_LOGS, LOG_NAME, MAX_LOG_BYTES, start_log_file, stop_log_file
from gguf_budget.gui.qt.whatif.compare_view import CompareView
from gguf_budget.gui.qt.whatif.sweep_view import SweepView
from gguf_budget.gui.qt.whatif.sweep_worker import SweepWorker
from gguf_budget.gui.qt.workers.background import BackgroundCall


@pytest.fixture
def log_file(tmp_path: Path):
    """The app's log file, started as `run_window` starts it, in a temporary folder."""
    handler = start_log_file(tmp_path / "logs")
    assert handler is not None
    yield Path(handler.baseFilename)
    stop_log_file(handler)


def broken_loader(path: str):
    raise TypeError(f"a bug while loading {Path(path).name}")


def test_a_loader_bug_shows_internal_error_ends_the_busy_state_and_logs_the_traceback(
        qtbot, make_window, log_file, tmp_path):
    window = make_window(load_backend=broken_loader)
    with qtbot.assertNotEmitted(window.modelLoaded), qtbot.waitSignal(window.loadFailed, timeout=10000) as failed:
        window.open_path(str(tmp_path / "any.gguf"))
    assert failed.args == ["internal error: TypeError: a bug while loading any.gguf"]
    error = child(window, "loadError")
    assert error.isVisible() and "internal error: TypeError: a bug while loading any.gguf" in error.text()
    assert not child(window, "busyIndicator").isVisible()
    logged = log_file.read_text(encoding="utf-8")
    assert "ERROR gguf_budget.gui.qt.workers.background" in logged and "internal error while calling" in logged
    assert "Traceback (most recent call last):" in logged and "in broken_loader" in logged
    assert "TypeError: a bug while loading any.gguf" in logged


def test_an_expected_failure_is_its_own_line_and_no_traceback(qtbot, make_window, log_file, tmp_path):
    window = make_window()
    with qtbot.waitSignal(window.loadFailed, timeout=10000) as failed:
        window.open_path(str(tmp_path / "missing.gguf"))
    assert "missing.gguf" in failed.args[0] and not failed.args[0].startswith("internal error")
    logged = log_file.read_text(encoding="utf-8")
    assert "missing.gguf" in logged and "Traceback" not in logged


@pytest.mark.parametrize(("error", "shown"), [
    (ModelLoadError("no such file"), "no such file"),
    (OSError("disk on fire"), "disk on fire"),
    (KeyError("layers"), "internal error: KeyError: 'layers'"),
    (RuntimeError(), "internal error: RuntimeError"),
])
def test_background_call_answers_every_exception(qtbot, error, shown):
    def backend():
        raise error

    call = BackgroundCall(backend)
    with qtbot.assertNotEmitted(call.succeeded), qtbot.waitSignal(call.failed, timeout=10000) as failed:
        call.start()
    assert failed.args == [shown] and not call.busy


def test_a_job_whose_caller_is_deleted_ends_without_a_word(qtbot, capfd):
    """Rule 5 of the background call: an answer nobody can hear is dropped (at a test run's teardown every Qt
    object is deleted while a bandwidth read may still run; it printed "Signal source has been deleted")."""
    release = threading.Event()
    call = BackgroundCall(lambda: release.wait(10))
    call.start()
    shiboken6.delete(call._relay)
    release.set()
    assert QThreadPool.globalInstance().waitForDone(10000)
    assert "deleted" not in capfd.readouterr().err


def test_a_probe_bug_is_said_on_the_panel_and_refresh_works_again(qtbot, make_window, log_file):
    window = make_window(probe_backend=lambda: [][0])
    qtbot.waitUntil(lambda: child(window, "refreshHardware").isEnabled(), timeout=10000)
    assert child(window, "snapshotAge").text() == "Probe failed: internal error: IndexError: list index out of range"
    assert window.session.state.machine is None
    assert "IndexError" in log_file.read_text(encoding="utf-8")


def test_a_sweep_bug_fails_the_sweep_and_the_view_is_idle_again(qtbot, log_file, write_model):
    from gguf_budget.core import BudgetRequest, load_model

    def broken_sweep(model, budgets, request):
        raise ZeroDivisionError("a bug in the sweep")

    view = SweepView(broken_sweep)
    qtbot.addWidget(view)
    view.show()
    with qtbot.waitSignal(view.sweepFailed, timeout=10000) as failed:
        view.set_model(load_model(write_model()), BudgetRequest())
    assert failed.args == ["internal error: ZeroDivisionError: a bug in the sweep"]
    assert not view.worker.busy and not view.progress.isVisible()
    assert view.status.text() == "Cannot sweep: internal error: ZeroDivisionError: a bug in the sweep"
    assert "in broken_sweep" in log_file.read_text(encoding="utf-8")


def test_the_sweep_worker_answers_a_bug_off_the_gui_thread(qtbot, write_model):
    from gguf_budget.core import BudgetRequest, load_model

    threads = []

    def broken_sweep(model, budgets, request):
        threads.append(threading.current_thread())
        raise TypeError("a bug in the sweep")

    worker = SweepWorker(broken_sweep)
    with qtbot.assertNotEmitted(worker.succeeded), qtbot.waitSignal(worker.failed, timeout=10000) as failed:
        worker.start(load_model(write_model()), [64 * MIB], BudgetRequest())
    assert failed.args == ["internal error: TypeError: a bug in the sweep"] and not worker.busy
    assert threads and threading.main_thread() not in threads


def test_a_compare_loader_bug_says_internal_error(qtbot, log_file, tmp_path):
    view = CompareView(broken_loader)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.secondFailed, timeout=10000) as failed:
        view.open_second(str(tmp_path / "second.gguf"))
    assert failed.args == ["internal error: TypeError: a bug while loading second.gguf"]
    assert view.open_button.isEnabled()
    QThreadPool.globalInstance().waitForDone(5000)


def test_help_show_log_folder_opens_the_log_folder(make_explorer, tmp_path):
    opened: list[QUrl] = []
    window = make_explorer(log_folder=tmp_path / "state", open_url=opened.append).window
    action = child(window, "showLogFolderAction")
    assert action in window.help_menu.actions()
    action.trigger()
    assert opened == [QUrl.fromLocalFile(str(tmp_path / "state"))]


def test_the_log_file_rotates_and_a_folder_that_cannot_be_written_costs_only_the_log(tmp_path, caplog):
    handler = start_log_file(tmp_path / "logs")
    try:
        assert (handler.maxBytes, handler.backupCount) == (MAX_LOG_BYTES, BACKUP_LOGS)
        assert Path(handler.baseFilename) == tmp_path / "logs" / LOG_NAME
    finally:
        stop_log_file(handler)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with caplog.at_level(logging.WARNING, logger="gguf_budget"):
        assert start_log_file(blocker / "logs") is None
    assert "no log file in" in caplog.text


def test_an_uncaught_error_is_logged_with_its_traceback(make_explorer, log_file):
    hook = make_explorer(log_folder=log_file.parent).errors.hook  # what run_window installs as sys.excepthook
    try:
        {}["missing"]
    except KeyError as e:
        hook(KeyError, e, e.__traceback__)
    logged = log_file.read_text(encoding="utf-8")
    assert "CRITICAL gguf_budget.gui.qt.error_report" in logged and "internal error" in logged
    assert "Traceback (most recent call last):" in logged and "KeyError: 'missing'" in logged
