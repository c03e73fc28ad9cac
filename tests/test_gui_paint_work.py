"""A slider tick paints only what it changed, and the screen shows what a whole paint shows (issue: the tick within
one 60 Hz frame; painting was ~4–5 ms of a 70B tick). The ledger chart repaints the segments, lines and labels that
moved and keeps the grounds of the axis tops a drag goes back to; the budget slider places its mark once while only
its handle moves; a memory bar repaints its need tick alone. What is on screen is read back from the offscreen
screen (`grabWindow`: the window's backing store), not from a fresh `grab`, which paints everything anew."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QColor, QImage, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QStyle, QWidget

from gguf_budget.core.plan.ledger import LEDGER_LINES
from gguf_budget.core.views.machine_view import PoolBar
from gguf_budget.gui.qt.machine.memory_bar import MemoryBar
from gguf_budget.gui.qt.plan.budget_control import MarkedSlider
from gguf_budget.gui.qt.plan.ledger_chart import LedgerChart

MIB = 1 << 20


class PaintedArea(QObject):
    """The pixels each paint event of the watched widget asks for, summed."""

    area = 0

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Paint:
            self.area += sum(rect.width() * rect.height() for rect in event.region())
        return False


def _on_screen(window: QWidget) -> QImage:
    """What the window's backing store holds now: the pixels its paints left, not a fresh paint's (once the layouts
    and the paints they post have run)."""
    for _ in range(3):
        QApplication.processEvents()
    return QApplication.primaryScreen().grabWindow(window.winId()).toImage().convertToFormat(QImage.Format.Format_RGB32)


def _whole(chart: LedgerChart) -> QImage:
    """The whole chart drawn at once, as the exports draw it."""
    image = QImage(chart.size(), QImage.Format.Format_RGB32)
    painter = QPainter(image)
    chart.paint(painter, float(chart.width()), float(chart.height()))
    painter.end()
    return image


def _columns(kv_mib: int, ring_mib: int = 0) -> list[tuple[str, tuple[tuple[str, int], ...]]]:
    return [("This plan", (("base", 40 * MIB), ("kv", kv_mib * MIB), ("ring", ring_mib * MIB), ("pinned", 600 * MIB))),
            ("Minimum configuration", (("base", 40 * MIB), ("kv", max(1, kv_mib // 10) * MIB)))]


def _chart(qtbot) -> LedgerChart:
    chart = LedgerChart(LEDGER_LINES)
    qtbot.addWidget(chart)
    chart.resize(570, 448)
    chart.show()
    qtbot.waitExposed(chart)
    chart.show_ledgers(_columns(100), 900 * MIB, 48 * MIB)
    QApplication.processEvents()
    return chart


def test_a_tick_under_the_same_axis_repaints_part_of_the_chart(qtbot):
    """ledger_chart Rule 5: a ctx tick that grows the KV cache moves a few segments and the minimum's line; the
    chart repaints those, under half of it (the old chart repainted all of it), and shows the whole drawing."""
    chart = _chart(qtbot)
    painted = PaintedArea()
    chart.installEventFilter(painted)
    chart.show_ledgers(_columns(110), 900 * MIB, 52 * MIB)
    assert _on_screen(chart) == _whole(chart)
    assert 0 < painted.area < chart.width() * chart.height() // 2


steps = st.lists(st.tuples(st.integers(1, 900), st.sampled_from([0, 50]), st.sampled_from([None, 700, 900, 905, 3000]),
                           st.sampled_from([None, 48, 60, 800]), st.booleans()), min_size=1, max_size=8)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps)
def test_the_screen_after_any_ticks_is_the_whole_drawing(qtbot, steps):
    """Rules 3–5: after each tick — segments grown, shrunk, come or gone, lines moved, hidden or sharing a label,
    the axis or the zoom changed — the pixels on screen are those of the whole chart drawn at once."""
    chart = _chart(qtbot)
    for kv, ring, budget, minimum, zoom in steps:
        chart.set_zoom(zoom)
        chart.show_ledgers(_columns(kv, ring), None if budget is None else budget * MIB,
                           None if minimum is None else minimum * MIB)
        assert _on_screen(chart) == _whole(chart)


def test_a_new_palette_or_font_shows_the_chart_drawn_in_it(qtbot):
    """Rules 3 and 5: the ground and the places kept for the old palette or font are not used under a new one;
    the ticks after it show the whole drawing in it."""
    chart = _chart(qtbot)
    palette = chart.palette()
    palette.setColor(QPalette.ColorRole.Base, QColor("#202830"))
    chart.setPalette(palette)
    assert _on_screen(chart) == _whole(chart)
    chart.show_ledgers(_columns(120), 900 * MIB, 52 * MIB)
    assert _on_screen(chart) == _whole(chart)
    font = chart.font()
    font.setPointSize(font.pointSize() + 4)
    chart.setFont(font)
    chart.show_ledgers(_columns(130), 900 * MIB, 56 * MIB)
    assert _on_screen(chart) == _whole(chart)


names = st.sampled_from(LEDGER_LINES[:6])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.tuples(names, st.integers(0, 1 << 40)), max_size=8), min_size=1, max_size=3))
def test_each_segment_sits_on_what_its_column_lists_before_it(columns):
    """The stacks made in one pass per column: a line's segment sits on the bytes listed before its first entry and
    is that entry's height; a line the column does not list has no height, at the column's top."""
    chart = LedgerChart(LEDGER_LINES)
    chart.show_ledgers([(f"column {i}", items) for i, items in enumerate(columns)], None, None)
    for column, items in enumerate(columns):
        for line in LEDGER_LINES:
            first = next((i for i, (name, _) in enumerate(items) if name == line), None)
            below = sum(n for _, n in (items if first is None else items[:first]))
            assert chart.segment(column, line) == (below, 0 if first is None else items[first][1])


def test_a_drag_back_over_an_axis_drawn_before_paints_no_ground_again(qtbot, monkeypatch):
    """Rule 3: budgets that move the axis top and come back to it paint each ground once (the old chart kept one
    ground and painted it again at every new top)."""
    chart = _chart(qtbot)
    grounds = []
    real = LedgerChart.paint_ground
    monkeypatch.setattr(LedgerChart, "paint_ground", lambda self, *a: (grounds.append(self.top()), real(self, *a))[1])
    first, tops = chart.top(), set()
    for budget in (900, 1900, 3900, 1900, 900, 1900, 3900):
        chart.show_ledgers(_columns(100), budget * MIB, 48 * MIB)
        tops.add(chart.top())
        QApplication.processEvents()
    assert len(tops) == 3 and sorted(grounds) == sorted(tops - {first})


def _slider(parent: QWidget) -> MarkedSlider:
    slider = MarkedSlider(parent, "budgetSlider")
    slider.setRange(100, 9000)
    slider.set_mark(5000)
    slider.resize(400, 20)
    return slider


def test_a_budget_tick_places_the_usable_mark_once(qtbot, monkeypatch):
    """budget_control Rule 5: ticks that move the handle under the same mark draw the mark where a fresh slider
    draws it, and place it once (the old slider asked the style on every paint); a new mark, range or size places
    it again."""
    parent = QWidget()
    qtbot.addWidget(parent)
    slider, fresh = _slider(parent), _slider(parent)
    placed = []
    real = QStyle.sliderPositionFromValue
    monkeypatch.setattr(QStyle, "sliderPositionFromValue", lambda *a: (placed.append(a), real(*a))[1])
    for value in (200, 3000, 7000, 5000):
        slider.setValue(value)
        slider.grab()
    assert len(placed) == 1
    fresh.setValue(5000)
    assert slider.grab().toImage() == fresh.grab().toImage()
    for change in (lambda s: s.set_mark(6000), lambda s: s.setRange(100, 12000), lambda s: s.resize(300, 20)):
        change(slider)
        change(fresh)
        placed.clear()
        assert slider.grab().toImage() == fresh.grab().toImage()
        assert len(placed) == 2  # each slider placed its mark once


def _pool(need: int | None, used: int = 10) -> PoolBar:
    return PoolBar(name="host", label="Host RAM", total=128 * MIB, used=used * MIB, reserve=8 * MIB,
                   usable=(120 - used) * MIB, need=None if need is None else need * MIB, shortfall=None)


def _shown_bar(qtbot) -> MemoryBar:
    """A 300 × 60 memory bar showing a pool that needs 20 %, on screen."""
    bar = MemoryBar()
    qtbot.addWidget(bar)
    bar.resize(300, 60)
    bar.set_pool(_pool(20))
    bar.show()
    qtbot.waitExposed(bar)
    return bar


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from([None, 0, 1, 40, 41, 90, 127, 200]), st.sampled_from([10, 10, 10, 30])),
                min_size=1, max_size=6))
def test_a_memory_bar_shows_what_a_fresh_bar_shows_after_any_pools(qtbot, pools):
    """memory_bar Rule 1: after each new pool — the need tick moved, come, gone or past the end, the segments
    changed — the pixels on screen are those of the whole bar drawn at once."""
    bar = _shown_bar(qtbot)
    for need, used in pools:
        bar.set_pool(_pool(need, used))
        assert _on_screen(bar) == bar.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)


def test_a_moved_need_tick_repaints_the_tick_alone(qtbot):
    """memory_bar Rule 1: a ctx tick that moves the need repaints where the tick was and is (the old bar repainted
    its whole width); the same pool again repaints nothing."""
    bar = _shown_bar(qtbot)
    _on_screen(bar)  # laid out and painted
    painted = PaintedArea()
    bar.bar.installEventFilter(painted)
    bar.set_pool(_pool(60))
    QApplication.processEvents()
    assert 0 < painted.area <= 2 * 7 * bar.bar.height()
    painted.area = 0
    bar.set_pool(_pool(60))
    QApplication.processEvents()
    assert painted.area == 0
