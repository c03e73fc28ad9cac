"""A ctx or budget tick is one paint and no relayout (the budget "a ctx or budget tick: one layout pass and one
paint"), counted, not timed, on the real window with the side panel shown: the demo model and the Llama-3.1-8B
catalogue header on a machine with a 24 GiB GPU, so a tick rewrites the headline, the Run it line, the context
label, the side panel's rows, its memory bars and its server lines.

For each tick, one slider step with the previous tick's work all done: no widget that owns a layout receives a
LayoutRequest (Qt's relayout of it; a row whose line count holds asks none), no widget moves or resizes, no widget
gets more than one paint event (the slider's own repaint and the view's are one pass), and every painted pixel
lies in a widget whose content changed — its text or value, or its own pixels in the window's image before and after.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from gui_support import open_model
from PySide6.QtCore import QEvent, QObject, QPoint, QRect
from PySide6.QtGui import QImage, QRegion
from PySide6.QtWidgets import (
    QAbstractButton, QAbstractSlider, QApplication, QDockWidget, QLabel, QLineEdit, QPlainTextEdit, QSlider, QWidget,
)

from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.gui.qt.layout import SideColumn
from gguf_budget.resources import demo_model_path, resource_path

GIB = 1 << 30
EIGHT_B = resource_path("catalogue/llama-3.1-8b-instruct-q4_k_m.skeleton.gguf")
SIDE_ROWS = ("kvEngine", "peakRssFull", "fitVerdict")  # scrolled into view: the rows a ctx tick rewrites


def gpu_machine():
    """128 GiB of RAM and one 24 GiB GPU (as benchmarks/bench_frame.py): every ctx tick re-splits the GPU."""
    return hypothetical_machine(128 * GIB, gpu_count=1, gpu_total=24 * GIB)


def _name(widget: QWidget) -> str:
    parent = widget.parentWidget()
    own = widget.objectName() or type(widget).__name__
    return own if parent is None or widget.objectName() else f"{_name(parent)}/{own}"


class Work(QObject):
    """What Qt does for one window while counting: the layouts it activates (a LayoutRequest reaching a widget
    that owns a layout) and the paint events each widget receives, with the region painted in window pixels."""

    def __init__(self, window: QWidget):
        super().__init__()
        self.window = window
        self.counting = False
        self.layouts: Counter[str] = Counter()
        self.paints: Counter[QWidget] = Counter()
        self.painted: dict[QWidget, QRegion] = {}

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if self.counting and obj.isWidgetType() and obj.window() is self.window:
            if event.type() == QEvent.Type.LayoutRequest and obj.layout() is not None:
                self.layouts[_name(obj)] += 1
            elif event.type() == QEvent.Type.Paint:
                self.paints[obj] += 1
                where = event.region().translated(obj.mapTo(self.window, QPoint(0, 0)))
                self.painted[obj] = self.painted.get(obj, QRegion()) | where
        return False


def _drain() -> None:
    """Every posted event, the relayouts they post in turn, and the paints: a tick's work all done."""
    for _ in range(6):
        QApplication.sendPostedEvents()
        QApplication.processEvents()


def _pixels(window: QWidget) -> np.ndarray:
    image = window.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    rows = np.frombuffer(image.constBits(), np.uint32, image.sizeInBytes() // 4)
    return rows.reshape(image.height(), image.bytesPerLine() // 4)[:, :image.width()].copy()


def _shown(window: QWidget) -> list[QWidget]:
    return [w for w in window.findChildren(QWidget) if w.isVisible() and w.window() is window]


def _area(window: QWidget, widget: QWidget) -> QRegion:
    """The part of `widget` one sees, in window pixels."""
    return widget.visibleRegion().translated(widget.mapTo(window, QPoint(0, 0)))


def _text(widget: QWidget) -> object:
    if isinstance(widget, (QLabel, QLineEdit, QAbstractButton)):
        return widget.text(), widget.isEnabled()
    if isinstance(widget, QPlainTextEdit):
        return widget.toPlainText()
    if isinstance(widget, QAbstractSlider):
        return widget.value()
    return None


@dataclass
class Before:
    pixels: np.ndarray
    texts: dict[QWidget, object]
    places: dict[QWidget, QRect]


def _before(window: QWidget) -> Before:
    shown = _shown(window)
    return Before(_pixels(window), {w: _text(w) for w in shown},
                  {w: QRect(w.mapTo(window, QPoint(0, 0)), w.size()) for w in shown})


def _changed(window: QWidget, before: Before) -> QRegion:
    """The widgets whose content changed: a new text or value, or own pixels (not a child's) that differ."""
    diff = _pixels(window) != before.pixels
    changed = QRegion()
    for widget in _shown(window):
        if before.texts.get(widget) != _text(widget):
            changed |= _area(window, widget)
            continue
        own = _area(window, widget)
        for kid in widget.children():
            if isinstance(kid, QWidget) and kid.isVisible() and not kid.isWindow():
                own -= QRegion(QRect(kid.mapTo(window, QPoint(0, 0)), kid.size()))
        if any(diff[r.top():r.bottom() + 1, r.left():r.right() + 1].any() for r in own):
            changed |= own
    return changed


def _window(make_explorer, qtbot, path: Path) -> QWidget:
    explorer = make_explorer(probe_backend=gpu_machine)
    window = explorer.window
    for dock in window.findChildren(QDockWidget):
        dock.hide()
    open_model(qtbot, window, path)
    qtbot.waitUntil(lambda: window.session.view.full_load is not None and not window.plan_pending())
    qtbot.waitUntil(window.bandwidths_measured)  # read a turn after the first plan; their answer redraws
    column = next(c for c in window.findChildren(SideColumn) if c.widget() is window.body.hardware)
    column.ensureWidgetVisible(window.findChild(QLabel, SIDE_ROWS[0]), 0, 0)
    _drain()
    return window


def _ticks(slider: QSlider, n: int) -> list[int]:
    """One step up and back, `n` times, from below the middle of the slider's range."""
    start = (slider.minimum() + slider.maximum()) // 3
    step = max(slider.singleStep(), (slider.maximum() - slider.minimum()) // 50)
    return [start + step * (i % 2) for i in range(1, n + 1)]


@pytest.mark.parametrize("model", ["demo", "8b"])
@pytest.mark.parametrize("slider_name", ["ctxSlider", "budgetSlider"])
def test_a_tick_is_one_paint_of_what_changed_and_no_relayout(qtbot, make_explorer, model, slider_name):
    window = _window(make_explorer, qtbot, demo_model_path() if model == "demo" else EIGHT_B)
    slider = window.findChild(QSlider, slider_name)
    work = Work(window)
    QApplication.instance().installEventFilter(work)
    try:
        slider.setValue(_ticks(slider, 2)[1])  # the first paints and caches
        _drain()
        for value in _ticks(slider, 4):
            before = _before(window)
            work.layouts.clear(), work.paints.clear(), work.painted.clear()
            work.counting = True
            slider.setValue(value)
            _drain()
            work.counting = False
            rows = {name: window.findChild(QLabel, name).text() for name in SIDE_ROWS}
            moved = sorted(_name(w) for w, place in before.places.items()
                           if w.isVisible() and QRect(w.mapTo(window, QPoint(0, 0)), w.size()) != place)
            assert moved == [], f"a tick to {value} moved widgets"
            assert dict(work.layouts) == {}, f"a tick to {value} laid out again"
            again = {_name(w): n for w, n in work.paints.items() if n > 1}
            assert again == {}, f"a tick to {value} painted widgets more than once"
            changed = _changed(window, before)
            outside = {_name(w): (region - changed).boundingRect().getRect() for w, region in work.painted.items()
                       if not (region - changed).isEmpty()}
            assert outside == {}, f"a tick to {value} painted where nothing changed ({rows})"
            assert work.paints, "the tick painted nothing"
    finally:
        QApplication.instance().removeEventFilter(work)
