"""Small state bugs of the window (issue 25, item 6): what a control shows must follow what is asked
and what is open — no stale error after auto, no stale budget line after another model, and a
deleted or replaced model file is noticed (the plan stays, File ▸ Reload reads it again)."""

from __future__ import annotations

import shutil
from pathlib import Path

from gui_support import child, open_model, settle, type_into
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QGuiApplication

from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.gui.qt.file_watch import SETTLE_MS

GiB = 1 << 30
LLAMA_8B = catalogue_path(find_entry("llama-3.1-8b-instruct"))
LLAMA_1B = catalogue_path(find_entry("llama-3.2-1b-instruct"))


def test_the_zoomed_chart_moves_its_budget_line_to_the_new_models_top(qtbot, make_window, write_model):
    """Zoomed, a budget above the bars is pinned to the axis top, labelled ↑; another model has another top,
    and the line must follow it (it stayed at the first model's top)."""
    window = make_window()
    open_model(qtbot, window, write_model())
    type_into(qtbot, window, "budgetEdit", "64G")
    settle(qtbot, window)
    child(window, "ledgerZoom").setChecked(True)
    chart = window.body.plan.chart
    first_top = chart.top()
    assert chart.marks()[0].value == first_top and "↑" in chart.marks()[0].text
    open_model(qtbot, window, LLAMA_8B)
    type_into(qtbot, window, "budgetEdit", "64G")
    settle(qtbot, window)
    top = chart.top()
    assert top > first_top
    assert chart.marks()[0].value == top and "↑" in chart.marks()[0].text


def test_switching_back_to_auto_drops_a_rejected_ctx_and_its_error(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model())
    type_into(qtbot, window, "ctxEdit", "1024")
    settle(qtbot, window)
    type_into(qtbot, window, "ctxEdit", "abc")
    error, edit, auto = child(window, "ctxError"), child(window, "ctxEdit"), child(window, "ctxAuto")
    assert error.isVisible() and edit.text() == "abc"
    auto.click()
    settle(qtbot, window)
    assert auto.isChecked() and not error.isVisible()
    assert edit.text() == "1024"                                   # the last ctx asked, not the rejected text
    assert window.body.plan.context.requested_ctx() is None


def test_a_rejected_cap_keeps_its_error_through_auto(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model())
    type_into(qtbot, window, "ctxEdit", "1024")
    type_into(qtbot, window, "ctxCapEdit", "lots")
    error = child(window, "ctxError")
    assert error.isVisible()
    child(window, "ctxAuto").click()
    assert error.isVisible() and "lots" == child(window, "ctxCapEdit").text()
    type_into(qtbot, window, "ctxCapEdit", "2048")
    assert not error.isVisible() and window.body.plan.context.requested_cap() == 2048


def _reload(window):
    return window.findChild(QAction, "reloadAction")


def test_deleting_the_open_file_is_said_the_plan_stays_and_reload_reads_it_again(qtbot, make_window, tmp_path):
    path = Path(shutil.copy(LLAMA_8B, tmp_path / "model.gguf"))
    window = make_window()
    open_model(qtbot, window, path)
    plan = window.session.view.plan
    line = child(window, "loadError")
    assert not line.isVisible() and _reload(window).isEnabled()
    path.unlink()
    qtbot.waitUntil(line.isVisible, timeout=5000)
    assert "file is gone (deleted or moved)" in line.text() and str(path) in line.text()
    assert window.session.view.plan == plan and window.session.state.model.path == str(path)
    _reload(window).trigger()                                      # still gone: the read fails, the plan stays
    qtbot.waitUntil(lambda: line.text().startswith("Could not open the model"), timeout=5000)
    assert window.session.view.plan == plan and window.session.state.model.path == str(path)
    shutil.copy(LLAMA_8B, path)
    with qtbot.waitSignal(window.modelLoaded, timeout=10000):
        _reload(window).trigger()
    assert not line.isVisible() and window.session.view.plan == plan


def test_replacing_the_open_file_by_rename_is_noticed_and_reload_plans_the_new_one(qtbot, make_window, tmp_path):
    path = Path(shutil.copy(LLAMA_8B, tmp_path / "model.gguf"))
    window = make_window()
    open_model(qtbot, window, path)
    line = child(window, "loadError")
    fresh = Path(shutil.copy(LLAMA_1B, tmp_path / "download.part"))
    fresh.replace(path)                                            # how a downloader or an editor saves
    qtbot.waitUntil(line.isVisible, timeout=5000)
    assert "changed on disk since it was read" in line.text() and window.session.state.model.n_layer == 32
    with qtbot.waitSignal(window.modelLoaded, timeout=10000):
        _reload(window).trigger()
    assert window.session.state.model.n_layer == 16 and not line.isVisible()


def test_a_change_the_watcher_missed_is_caught_when_the_app_comes_back_to_the_front(qtbot, make_window, tmp_path):
    path = Path(shutil.copy(LLAMA_8B, tmp_path / "model.gguf"))
    window = make_window()
    open_model(qtbot, window, path)
    watch = _reload(window).parent()
    watch.watcher.removePaths(watch.watcher.files() + watch.watcher.directories())   # as on a network drive
    path.unlink()
    line = child(window, "loadError")
    qtbot.wait(SETTLE_MS * 2)
    assert not line.isVisible()
    QGuiApplication.instance().applicationStateChanged.emit(Qt.ApplicationState.ApplicationActive)
    assert line.isVisible() and "file is gone" in line.text()
