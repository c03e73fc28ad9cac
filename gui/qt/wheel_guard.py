"""No value changes under the mouse wheel: a value widget takes the wheel only when it has focus.

Rule 1: a combo box, a spin box (any `QAbstractSpinBox`) or a slider (any `QAbstractSlider`,
        superqt's and pyqtgraph's included) that does not have keyboard focus ignores a wheel
        event, so the event goes on to its parent and the scroll area around it scrolls;
        scrolling a side panel never turns a preset, a ring depth or a ctx. With focus (a click,
        Tab) the wheel steps its value as usual.
Rule 2: such a widget never takes focus from the wheel: a `Qt.WheelFocus` policy becomes
        `Qt.StrongFocus` when the widget is polished (click and Tab still focus it).
Rule 3: scroll bars are exempt: they are the scrolling, not a value.
Rule 4: the guard is one event filter on the QApplication, installed once by the composition
        root for every window and dialog the app opens, so no widget factory has to remember it.
"""

from __future__ import annotations

from typing import TypeGuard

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractSlider, QAbstractSpinBox, QApplication, QComboBox, QScrollBar, QWidget

VALUE_WIDGETS = (QComboBox, QAbstractSpinBox, QAbstractSlider)
GUARD_NAME = "wheelGuard"


def takes_value(widget: QObject) -> TypeGuard[QWidget]:
    """Rules 1 and 3: a widget whose value the wheel would step (a scroll bar is not one)."""
    return isinstance(widget, VALUE_WIDGETS) and not isinstance(widget, QScrollBar)


class WheelGuard(QObject):
    """The application-wide event filter of Rules 1-2."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.Wheel:
            if takes_value(watched) and not watched.hasFocus():
                event.ignore()  # handled here, not accepted: Qt passes it on to the parent
                return True
        elif kind == QEvent.Type.Polish:
            no_wheel_focus(watched)
        return False


def no_wheel_focus(widget: QObject) -> None:
    """Rule 2: a value widget that the wheel would focus is focused by click and Tab only."""
    if takes_value(widget) and widget.focusPolicy() == Qt.FocusPolicy.WheelFocus:
        widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)


def install_wheel_guard() -> WheelGuard:
    """Rule 4: the running QApplication's one guard, installed on the first call and returned by every
    later one; widgets polished before it came are brought under Rule 2 at once."""
    app = QApplication.instance()
    assert isinstance(app, QApplication), "the guard filters a widget application's events"
    existing = app.findChild(WheelGuard, GUARD_NAME)
    if existing is not None:
        return existing
    guard = WheelGuard(app)
    guard.setObjectName(GUARD_NAME)
    app.installEventFilter(guard)
    for widget in app.allWidgets():
        no_wheel_focus(widget)
    return guard
