"""No value changes under the mouse wheel: a value widget takes the wheel only when it has focus.

Rule 1: a combo box, a spin box (any `QAbstractSpinBox`) or a slider (any `QAbstractSlider`,
        superqt's and pyqtgraph's included) that does not have keyboard focus ignores a wheel
        event, so the event goes on to its parent and the scroll area around it scrolls;
        scrolling a side panel never turns a preset, a ring depth or a ctx. With focus (a click,
        Tab) the wheel steps its value as usual.
Rule 2: such a widget never takes focus from the wheel: a `Qt.WheelFocus` policy becomes
        `Qt.StrongFocus` when the widget is polished (click and Tab still focus it).
Rule 3: scroll bars are exempt: they are the scrolling, not a value.
Rule 4: the guard is the application's style (a proxy of the style it had, drawing nothing of its
        own): Qt polishes every widget of every window and dialog through it once, and a value widget
        gets the guard's event filter there, so no widget factory has to remember it and Python runs for
        the events of value widgets only — an application-wide filter ran Python for every event Qt
        sent (8,200 before the window's first plan; 2.6–7.6 % of a ctx tick's GUI time, and a wait for the
        interpreter lock on each while a worker runs Python). Installed once, before the first window.
"""

from __future__ import annotations

from typing import TypeGuard

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QAbstractSlider, QAbstractSpinBox, QApplication, QComboBox, QProxyStyle, QScrollBar, QWidget,
)

VALUE_WIDGETS = (QComboBox, QAbstractSpinBox, QAbstractSlider)
GUARD_NAME = "wheelGuard"


def takes_value(widget: QObject) -> TypeGuard[QWidget]:
    """Rules 1 and 3: a widget whose value the wheel would step (a scroll bar is not one)."""
    return isinstance(widget, VALUE_WIDGETS) and not isinstance(widget, QScrollBar)


class WheelGuard(QObject):
    """Rule 1's event filter, on each value widget (Rule 4)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Wheel and takes_value(watched) and not watched.hasFocus():
            event.ignore()  # handled here, not accepted: Qt passes it on to the parent
            return True
        return False


class GuardStyle(QProxyStyle):
    """Rule 4: the style the application had, which puts each value widget under the guard as it polishes it."""

    def __init__(self, base: str, guard: WheelGuard) -> None:
        super().__init__(base)
        self.guard = guard

    def polish(self, target: QWidget | QApplication | QPalette) -> None:  # type: ignore[override]
        super().polish(target)
        if isinstance(target, QWidget):
            guard(target, self.guard)


def guard(widget: QWidget, wheel_guard: WheelGuard) -> None:
    """Rules 1–2 for one widget: a value widget filters its wheel and is focused by click and Tab only."""
    if takes_value(widget):
        no_wheel_focus(widget)
        widget.installEventFilter(wheel_guard)


def no_wheel_focus(widget: QObject) -> None:
    """Rule 2: a value widget that the wheel would focus is focused by click and Tab only."""
    if takes_value(widget) and widget.focusPolicy() == Qt.FocusPolicy.WheelFocus:
        widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)


def install_wheel_guard() -> WheelGuard:
    """Rule 4: the running QApplication's one guard, installed on the first call and returned by every
    later one; widgets polished before it came are guarded at once."""
    app = QApplication.instance()
    assert isinstance(app, QApplication), "the guard filters a widget application's events"
    existing = app.findChild(WheelGuard, GUARD_NAME)
    if existing is not None:
        return existing
    wheel_guard = WheelGuard(app)
    wheel_guard.setObjectName(GUARD_NAME)
    for widget in app.allWidgets():
        guard(widget, wheel_guard)
    app.setStyle(GuardStyle(app.style().name(), wheel_guard))
    return wheel_guard
