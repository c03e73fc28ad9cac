"""The window on a laptop screen (issue 17, item 3): at 1280 × 720 with the sweep dock open every
control of the main view is on screen, the side columns scroll to theirs, the window opens at a
size that fits the screen and comes back at the size the person left."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from gui_support import child
from PySide6.QtCore import QRect, QRectF, QSettings, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import (
    QAbstractButton, QAbstractScrollArea, QAbstractSlider, QAbstractSpinBox, QApplication, QComboBox, QLineEdit,
    QScrollArea, QWidget,
)

from hypothesis import given
from hypothesis import strategies as st

from gguf_budget.core.explorer.window_size import DOCK_SHARE, on_screen, opening_size
from gguf_budget.gui.cli.launch import parse_launch_args
from gguf_budget.gui.qt.app import compose

CLI = Path(sys.executable).with_name("gguf-budget")
CONTROLS = (QAbstractButton, QAbstractSlider, QAbstractSpinBox, QComboBox, QLineEdit, QAbstractScrollArea)
ON_SCREEN = ("budgetSlider", "budgetEdit", "budgetUnlimited", "ctxSlider", "ctxAuto", "ctxEdit", "ctxCapEdit",
             "preferContext", "buffersSpin", "headMode", "kvType", "forceCheck", "slowThreshold", "reportView",
             "copyReport", "ledgerChart", "layerStrip", "pinnedLabel", "banner", "sweepChart")


def shown(widget: QWidget) -> bool:
    """Some of it is on screen (a scroll area's contents are its viewport)."""
    target = widget.viewport() if isinstance(widget, QAbstractScrollArea) else widget
    return not target.visibleRegion().isEmpty()


def scroll_area_of(widget: QWidget) -> QScrollArea | None:
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QScrollArea):
        parent = parent.parentWidget()
    return parent


def test_at_1280_by_720_with_the_sweep_dock_open_every_control_is_on_screen(laptop):
    QApplication.processEvents()
    window = laptop.window
    assert (window.width(), window.height()) == (1280, 720)
    assert laptop.whatif.sweep_dock.height() <= 720 * DOCK_SHARE + 2
    missing = [name for name in ON_SCREEN if not shown(child(window, name))]
    assert missing == []
    controls = [w for w in window.centralWidget().findChildren(QWidget) if isinstance(w, CONTROLS) and w.isVisible()
                and not isinstance(w, QScrollArea) and w.objectName() and not w.objectName().startswith("qt_")]
    unreachable = []
    for w in controls:
        area = scroll_area_of(w)
        if area is not None:
            area.ensureWidgetVisible(w)
        if not shown(w):
            unreachable.append(w.objectName())
    assert len(controls) > 20 and unreachable == []


def test_the_ledger_bars_bottom_their_labels_lie_inside_the_chart_and_the_legend_beside_it(laptop):
    QApplication.processEvents()
    chart = child(laptop.window, "ledgerChart")
    inside = QRectF(chart.rect())
    assert inside.contains(chart.plot_rect()), (chart.plot_rect(), inside)
    legend = child(laptop.window, "ledgerLegend")
    assert legend.isVisible() and legend.mapTo(chart.parentWidget(), legend.rect().topLeft()).x() >= chart.geometry().right()
    labels = chart.column_labels()
    assert [text.replace("\n", " ") for _, text in labels] == ["This plan", "Minimum configuration"]
    assert all(inside.contains(rect) and rect.top() >= chart.plot_rect().bottom() for rect, _ in labels)  # drawn whole
    assert not labels[0][0].intersects(labels[1][0])


def test_the_window_opens_at_a_size_the_screen_holds_and_comes_back_at_the_size_left(qtbot, tmp_path):
    store = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    window = compose(store, probe_backend=lambda: None, log_folder=tmp_path).window
    qtbot.addWidget(window)
    available = window.screen().availableGeometry()
    wanted = opening_size((available.width(), available.height()))
    assert window.height() == wanted[1] <= available.height()
    assert window.width() == wanted[0] and window.minimumSizeHint().height() <= 720
    window.resize(790, 610)
    window.save_settings()
    again = compose(store, probe_backend=lambda: None, log_folder=tmp_path).window
    qtbot.addWidget(again)
    assert (again.width(), again.height()) == (790, 610)


@pytest.mark.parametrize("available, size", [
    ((3840, 2160), (1440, 900)), ((1280, 720), (1280, 720)), ((1366, 768), (1366, 768)), ((1920, 1040), (1440, 900)),
])
def test_opening_size_is_the_design_size_or_the_available_area(available, size):
    assert opening_size(available) == size


def test_the_app_shoots_itself_at_a_laptop_size_with_the_sweep_open(tmp_path, write_model):
    out = tmp_path / "laptop.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "c")}
    done = subprocess.run([str(CLI), str(write_model()), "--screenshot", str(out), "--size", "1280x720",
                           "--view", "sweep"], env=env, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, "")
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1280, 720)


@pytest.mark.parametrize("size, message", [
    ("12x7", "a screenshot width must be from 1,280 to 7,680 pixels, got 12"),
    ("1280", "a window size is WxH, e.g. 1280x720, got '1280'"),
])
def test_a_bad_size_is_one_line(capsys, tmp_path, size, message):
    with pytest.raises(SystemExit) as exited:
        parse_launch_args(["--screenshot", str(tmp_path / "x.png"), "--size", size])
    assert exited.value.code == 2 and message in capsys.readouterr().err


def test_the_side_columns_are_no_wider_than_their_viewports(laptop):
    """Their scroll areas scroll vertically only, so anything wider than the viewport is cut off
    at the right edge (the RAM bar's legend once made every row of the side panel lose its end)."""
    QApplication.processEvents()
    areas = [a for a in laptop.window.centralWidget().findChildren(QScrollArea) if a.widget() is not None]
    assert areas
    too_wide = {type(a.widget()).__name__: (a.widget().width(), a.viewport().width())
                for a in areas if a.widget().width() > a.viewport().width()}
    assert too_wide == {}


def test_the_pinned_caption_shows_whole_at_1280_by_720(laptop):
    """The line that says what the budget buys (pinned layers, streaming, decode) is never cut off."""
    QApplication.processEvents()
    label = child(laptop.window, "pinnedLabel")
    assert "pinned" in label.text() and "decode" in label.text()
    room = label.contentsRect()
    needed = label.fontMetrics().boundingRect(QRect(0, 0, room.width(), 10_000),
                                              int(Qt.TextFlag.TextWordWrap), label.text())
    assert needed.height() <= room.height() and needed.width() <= room.width()
    assert label.wordWrap()


RECTS = st.tuples(st.integers(-50, 50), st.integers(-50, 50), st.integers(1, 3000), st.integers(1, 3000))


@given(inside=RECTS, margins=st.tuples(*[st.integers(0, 40)] * 4))
def test_a_window_is_put_on_screen_frame_included(inside, margins):
    """window_size Rule 4: whatever its size and place, the frame lands inside a 1280 × 720 available area."""
    left, top, right, bottom = margins
    available = (0, 0, 1280, 720)
    frame = (inside[0] - left, inside[1] - top, inside[2] + left + right, inside[3] + top + bottom)
    x, y, w, h = on_screen(frame, inside, available)
    assert x - left >= 0 and y - top >= 0 and x + w + right <= 1280 and y + h + bottom <= 720
    assert w <= inside[2] and h <= inside[3]
    if frame[0] >= 0 and frame[1] >= 0 and frame[0] + frame[2] <= 1280 and frame[1] + frame[3] <= 720:
        assert (x, y, w, h) == inside  # a window already on screen stays as it is
