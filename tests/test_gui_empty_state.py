"""Before any model is open, and after a failed first load (issue 17, item 6): an invitation
instead of empty byte axes, the machine's host RAM bar, and a status line that tells the truth."""

from __future__ import annotations

import pytest
from gui_support import child, open_model, small_machine
from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.views.machine_view import host_bar
from gguf_budget.gui.qt.main_window import MainWindow


def fail_to_open(qtbot, window: MainWindow, path: str) -> None:
    with qtbot.waitSignal(window.loadFailed, timeout=10000):
        window.open_path(path)


@pytest.fixture
def failed_first(qtbot, make_window, tmp_path) -> MainWindow:
    window = make_window()
    qtbot.waitUntil(lambda: window.session.state.machine is not None)
    fail_to_open(qtbot, window, str(tmp_path / "missing.gguf"))
    return window


def test_a_failed_first_load_shows_the_invitation_not_empty_byte_axes(failed_first):
    window = failed_first
    assert window.messages.current() == "Load failed; no model is open"
    assert "previous model" not in window.messages.current()
    assert child(window, "emptyState").isVisible() and "No model is open" in child(window, "emptyStateText").text()
    assert not child(window, "ledgerChart").isVisible()
    assert window.findChild(QObject, "sweepChart") is None  # built with the first sweep, pyqtgraph with it
    assert child(window, "loadError").isVisible() and child(window, "budgetEdit").text() == ""


def test_the_host_ram_bar_is_drawn_from_the_machine_alone(failed_first):
    bar = child(failed_first, "hostBar")
    expected = host_bar(small_machine(), Reserves())
    assert bar.isVisible() and bar.title.text() == "host RAM" and bar.caption.text() == expected.caption
    assert (expected.used, expected.reserve, expected.usable) == (16 << 30, 6 << 30, 42 << 30)


def test_the_invitation_offers_the_file_menus_own_ways_in_and_one_opens_a_model(qtbot, failed_first):
    window = failed_first
    assert child(window, "emptyOpen").defaultAction() is window.file_menu.open_action
    assert child(window, "emptyLibrary").defaultAction() is window.findChild(QAction, "libraryAction")
    catalogue = child(window, "emptyCatalogue").menu()
    assert catalogue is window.findChild(QMenu, "catalogueMenu") and catalogue.actions()
    with qtbot.waitSignal(window.modelLoaded, timeout=10000):
        catalogue.actions()[0].trigger()
    assert not child(window, "emptyState").isVisible() and child(window, "ledgerChart").isVisible()


def test_a_failed_load_after_a_model_says_the_previous_one_is_still_shown(qtbot, make_window, write_model, tmp_path):
    window = make_window()
    open_model(qtbot, window, write_model())
    fail_to_open(qtbot, window, str(tmp_path / "missing.gguf"))
    assert window.messages.current() == "Load failed; the previous model is still shown"
    assert child(window, "ledgerChart").isVisible() and not child(window, "emptyState").isVisible()
