"""Opening models in the window: off the GUI thread, by menu, drop or path; failures keep what is on screen."""

from __future__ import annotations

import threading
from dataclasses import replace

from gguf_factory import write_gguf
from gui_support import MIB, OTHER, child, open_model, settle
from PySide6.QtCore import QMimeData, QPoint, QPointF, QSettings, Qt, QThreadPool, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import load_model
from gguf_budget.gui.qt.main_window import MainWindow


def screen_state(window: MainWindow) -> tuple:
    """Everything a failed load must leave untouched."""
    return (window.session.state.model, window.session.view.plan, child(window, "modelSummary").values(),
            window.session.state.request(), child(window, "banner").text(), window.windowTitle())


def test_a_corrupt_file_keeps_the_previous_model_and_settings(qtbot, make_window, write_model, tmp_path):
    window = make_window()
    open_model(qtbot, window, write_model())
    window.apply_request(budget=Budget.of(70 * MIB), ctx=1024)
    before = screen_state(window)
    bad = tmp_path / "corrupt.gguf"
    bad.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 64)
    with qtbot.assertNotEmitted(window.modelLoaded), qtbot.waitSignal(window.loadFailed) as failed:
        window.open_path(str(bad))
    assert "corrupt.gguf" in failed.args[0]
    assert screen_state(window) == before
    error = child(window, "loadError")
    assert error.isVisible() and failed.args[0] in error.text()
    assert not child(window, "busyIndicator").isVisible()


def test_a_vanished_file_keeps_the_previous_model(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model())
    before = screen_state(window)
    gone = write_model(OTHER, name="gone.gguf")
    gone.unlink()
    with qtbot.assertNotEmitted(window.modelLoaded), qtbot.waitSignal(window.loadFailed) as failed:
        window.open_path(str(gone))
    assert "gone.gguf" in failed.args[0]
    assert screen_state(window) == before


def test_a_later_good_load_clears_the_error(qtbot, make_window, write_model, tmp_path):
    window = make_window()
    with qtbot.waitSignal(window.loadFailed):
        window.open_path(str(tmp_path / "missing.gguf"))
    assert window.session.state.model is None and child(window, "loadError").isVisible()
    model = open_model(qtbot, window, write_model(OTHER, name="other.gguf"))
    assert model.name == "other-llama"
    assert not child(window, "loadError").isVisible()


def drop_events(path) -> tuple[QMimeData, QDragEnterEvent, QDropEvent]:
    """A drag entering with `path` and its drop; the events borrow the mime data, so it is returned too."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    enter = QDragEnterEvent(QPoint(20, 20), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    drop = QDropEvent(QPointF(20, 20), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    return mime, enter, drop


def test_dropping_a_gguf_file_opens_it(qtbot, make_window, write_model):
    window = make_window()
    path = write_model(OTHER, name="dropped.gguf")
    mime, enter, drop = drop_events(path)
    QApplication.sendEvent(window, enter)
    assert enter.isAccepted()
    with qtbot.assertNotEmitted(window.loadFailed), qtbot.waitSignal(window.modelLoaded):
        QApplication.sendEvent(window, drop)
    assert window.session.state.model.path == str(path)


def test_dropping_something_else_is_refused(qtbot, make_window, tmp_path):
    window = make_window()
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    mime, enter, drop = drop_events(text)
    enter.ignore()
    QApplication.sendEvent(window, enter)
    assert not enter.isAccepted()
    with qtbot.assertNotEmitted(window.loadFailed), qtbot.assertNotEmitted(window.modelLoaded, wait=100):
        QApplication.sendEvent(window, drop)


def test_any_shard_of_a_split_model_opens_the_whole_model(qtbot, make_window, tmp_path):
    shards = write_gguf(tmp_path / "split.gguf", OTHER, "header_only", split_max_tensors=12)
    assert len(shards) > 2
    window = make_window()
    model = open_model(qtbot, window, shards[1])
    assert len(model.shards) == len(shards)
    assert f"{len(shards)} shards" in child(window, "modelSummary").values()["File size"]


def test_the_summary_escapes_and_truncates_untrusted_names(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model(replace(OTHER, name="evil\x1b[2J\u202e" + "A" * 500), name="evil.gguf"))
    name = child(window, "modelSummary").values()["Name"]
    assert "\x1b" not in name and "\u202e" not in name
    assert name.startswith("evil\\x1b[2J\\u202e") and len(name) < 120
    assert "\x1b" not in window.windowTitle()


def test_the_summary_shows_the_models_facts(qtbot, make_window, write_model):
    window = make_window()
    model = open_model(qtbot, window, write_model())
    values = child(window, "modelSummary").values()
    assert values["Architecture"] == "llama"
    assert values["Layers"].startswith(f"{model.n_layer} blocks")
    assert values["Context"] == "4,096 tokens"
    assert values["Storage"].startswith("header only")
    assert values["Embeddings"].startswith("separate")


def test_loads_run_off_the_gui_thread_with_a_busy_indicator_and_the_latest_wins(qtbot, make_window, write_model):
    gate = threading.Event()
    threads = []
    slow_path, fast_path = write_model(name="slow.gguf"), write_model(OTHER, name="fast.gguf")

    def backend(path: str):
        threads.append(threading.current_thread())
        if path == str(slow_path):
            gate.wait(10)
        return load_model(path)

    window = make_window(load_backend=backend)
    window.open_path(str(slow_path))
    assert child(window, "busyIndicator").isVisible()
    with qtbot.waitSignal(window.modelLoaded):
        window.open_path(str(fast_path))
    gate.set()
    QThreadPool.globalInstance().waitForDone(10000)
    QApplication.processEvents()
    assert len(threads) == 2
    assert window.session.state.model.path == str(fast_path)
    assert threading.main_thread() not in threads
    assert not child(window, "busyIndicator").isVisible()


def test_settings_and_recent_files_are_remembered(qtbot, make_window, write_model, settings_store: QSettings):
    first = make_window()
    path = write_model()
    open_model(qtbot, first, path)
    first.apply_request(budget=Budget.of(70 * MIB), ctx=1024)
    child(first, "kvType").setCurrentText("q8_0")
    child(first, "buffersSpin").setValue(1)
    settle(qtbot, first)
    first.close()

    second = make_window(settings_store)
    assert [a.data() for a in child(second, "recentMenu").actions()] == [str(path)]
    assert (child(second, "kvType").currentText(), child(second, "buffersSpin").value()) == ("q8_0", 1)
    open_model(qtbot, second, path)
    plan = second.session.view.plan
    assert (plan.budget.limit, plan.ctx, plan.ctx_explicit, plan.kv_type) == (70 * MIB, 1024, True, "q8_0")


def test_garbage_in_the_settings_file_falls_back_to_defaults(qtbot, make_window, settings_store, write_model):
    for key, value in {"explorer/budget_bytes": "lots", "explorer/ctx": -4, "explorer/n_buffers": 9,
                       "explorer/head_mode": "sideways", "explorer/kv_type": "f99", "explorer/gpu_layers": "x",
                       f"models/{'a' * 64}.budget": "lots", f"models/{'b' * 64}.ctx": -4}.items():
        settings_store.setValue(key, value)
    window = make_window(settings_store)
    model = open_model(qtbot, window, write_model())
    request = window.session.state.request()
    assert (request.ctx, request.n_buffers, request.head_mode, request.kv_type) == (None, 2, "auto", "f16")
    assert window.session.view.plan.budget.limit > 0 and model.n_layer == 8


def test_help_about_opens_without_blocking(qtbot, make_window):
    window = make_window()
    about = next(a for a in next(a for a in window.menuBar().actions() if a.text() == "&Help").menu().actions()
                 if a.objectName() == "aboutAction")
    about.trigger()
    dialog = next(w for w in QApplication.topLevelWidgets() if type(w).__name__ == "AboutDialog" and w.isVisible())
    assert dialog.parent() is window
    dialog.close()
