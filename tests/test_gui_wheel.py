"""No value changes under the mouse wheel: combos, spin boxes and sliders take the wheel only with focus.

Scrolling a side panel over the machine preset used to walk it RTX 4090 → RTX 3090 → RTX 5090 and
change the verdict. The wheel comes through the platform (`QTest.wheelEvent`) to the widget under the
pointer, from where Qt passes an ignored one up to the scroll area, as it does a real wheel.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractSlider, QAbstractSpinBox, QApplication, QComboBox, QScrollArea, QScrollBar, QWidget,
)

from gui_support import child, open_model, settle

# Every value widget of the composed window (its docks included); the last test keeps this list whole.
VALUE_WIDGETS = ("gpuLayersSpin", "hypoPreset", "hypoGpuCount", "buffersSpin", "headMode", "kvType",
                 "slowThreshold", "promptTokens", "budgetSlider", "ctxSlider", "runtimeCombo", "parallelSpin",
                 "kvUnifiedCombo", "cacheRamSpin", "ctxCheckpointsSpin", "draftLayersSpin", "draftKvCombo",
                 "flashAttnCombo", "ubatchSpin", "batchSpin", "vTypeCombo", "swaFullCombo", "loadModeCombo", "nCpuMoeSpin",
                 "commandProgramCombo", "typedBackend", "goalCombo", "goalMinTokS", "goalMinCtx")
WAIT_FOR_A_FILE = ("draftLayersSpin", "draftKvCombo")
UP, DOWN = 1, -1


def under_pointer(widget: QWidget) -> QPoint:
    """The middle of `widget` in its window's coordinates, where the wheel is turned."""
    return widget.mapTo(widget.window(), widget.rect().center())


def reachable(widget: QWidget) -> bool:
    """The pointer over the middle of `widget` is over it (or its line edit), not a dock or the column's edge."""
    return widget.window().childAt(under_pointer(widget)) in (widget, *widget.findChildren(QWidget))


def laid_out() -> None:
    """The relayouts still pending, done: each posts the next (a row, its panel, the side column's fit)."""
    for _ in range(4):
        QApplication.sendPostedEvents()
        QApplication.processEvents()


def wheel(widget: QWidget, notches: int) -> None:
    """One wheel turn of `notches` (up > 0) with the pointer over the middle of `widget`, as the platform delivers
    it (QTest's wheel is spontaneous: Qt propagates an ignored one to the parents, as for a real wheel). The layouts
    still pending are done first: delivering the wheel runs them, and they may move the widget from under the point."""
    laid_out()
    assert reachable(widget), f"{widget.objectName()} is covered"
    QTest.wheelEvent(widget.window().windowHandle(), QPointF(under_pointer(widget)), QPoint(0, 120 * notches))


def value_of(widget: QWidget) -> object:
    return widget.currentIndex() if isinstance(widget, QComboBox) else widget.value()


def scroll_area_of(widget: QWidget) -> QScrollArea:
    parent = widget.parentWidget()
    while not isinstance(parent, QScrollArea):
        assert parent is not None, f"{widget.objectName()} is not inside a scroll area"
        parent = parent.parentWidget()
    return parent


def in_view(qtbot, widget: QWidget) -> None:
    """Scroll the side column (if `widget` is in one) until the pointer can reach the widget."""
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QScrollArea):
        parent = parent.parentWidget()

    def shown() -> bool:
        laid_out()  # a pending layout request moves it first
        if parent is not None:
            parent.ensureWidgetVisible(widget)
        return reachable(widget)

    qtbot.waitUntil(shown)


def focus_elsewhere(qtbot, window) -> None:
    """The budget text box has focus: no value widget does."""
    edit = child(window, "budgetEdit")
    edit.setFocus()
    qtbot.waitUntil(edit.hasFocus)


@pytest.fixture
def planned(qtbot, make_explorer, write_model):
    """A window at a laptop's size with a model planned and the hypothetical machine ticked (its fields enabled)."""
    window = make_explorer().window
    window.resize(1280, 720)
    open_model(qtbot, window, write_model())
    child(window, "hypotheticalBox").setChecked(True)
    settle(qtbot, window)
    return window


def test_wheel_over_an_unfocused_preset_changes_nothing_and_scrolls_the_panel(qtbot, planned):
    window = planned
    preset = child(window, "hypoPreset")
    area = scroll_area_of(preset)
    in_view(qtbot, preset)
    assert area.verticalScrollBar().value() < area.verticalScrollBar().maximum(), "the column must have room to scroll"
    focus_elsewhere(qtbot, window)
    text, fit, headline = preset.currentText(), window.session.view.fit, window.session.view.headline
    scrolled = area.verticalScrollBar().value()

    wheel(preset, DOWN)
    settle(qtbot, window)

    assert preset.currentText() == text
    assert window.session.view.fit == fit
    assert window.session.view.headline == headline
    assert area.verticalScrollBar().value() > scrolled  # the wheel went on to the scroll area

    preset.setFocus()
    qtbot.waitUntil(preset.hasFocus)
    wheel(preset, DOWN)
    settle(qtbot, window)

    assert preset.currentText() != text
    assert window.session.view.fit.snapshot != fit.snapshot  # the focused preset did change the machine judged


@pytest.mark.parametrize("name", VALUE_WIDGETS)
def test_every_value_widget_takes_the_wheel_only_with_focus(qtbot, planned, name):
    window = planned
    widget = child(window, name)
    if name in WAIT_FOR_A_FILE:  # enabled beside a draft model only; the wheel is guarded all the same
        widget.setEnabled(True)
    assert widget.isEnabled()
    assert widget.focusPolicy() == Qt.FocusPolicy.StrongFocus  # the wheel never focuses it
    if isinstance(widget, QComboBox):
        widget.setCurrentIndex(0)
        notches = DOWN
    else:
        widget.setValue((widget.minimum() + widget.maximum()) // 2)
        notches = UP
    settle(qtbot, window)
    focus_elsewhere(qtbot, window)
    in_view(qtbot, widget)
    before = value_of(widget)

    wheel(widget, notches)
    assert value_of(widget) == before
    assert not widget.hasFocus()

    widget.setFocus()
    qtbot.waitUntil(widget.hasFocus)
    in_view(qtbot, widget)  # the first turn scrolled the column
    wheel(widget, notches)
    assert value_of(widget) != before


def test_the_list_holds_every_value_widget_of_the_window_and_its_docks(qtbot, make_explorer):
    explorer = make_explorer()
    found = {widget.objectName() for widget in explorer.window.findChildren(QWidget)
             if isinstance(widget, (QComboBox, QAbstractSpinBox, QAbstractSlider)) and not isinstance(widget, QScrollBar)}
    assert found == set(VALUE_WIDGETS)
