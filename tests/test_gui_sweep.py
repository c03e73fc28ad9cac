"""The sweep view: its curves are `gguf-budget sweep`'s rows, a click picks a budget, Cancel stops the worker."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest
from gguf_factory import ArchDesc, write_gguf
from gui_support import MIB, WIDE
from hypothesis import given, settings
from hypothesis import strategies as st
import pyqtgraph as pg
from PySide6.QtCore import QPoint, QPointF, Qt, QThreadPool
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QGraphicsItem

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.machine.bandwidth import Bandwidths
from gguf_budget.gui.qt.whatif.sweep_worker import SweepSpeed
from gguf_budget.core import BudgetRequest, budget_range, budget_thresholds, load_model, sweep_budgets, sweep_dict
from gguf_budget.core.units import human_bytes
from gguf_budget.gui.cli import main
from gguf_budget.gui.qt.menus.export_files import chart_svg
from gguf_budget.core.plan.sweep import default_range
from gguf_budget.gui.qt.whatif.sweep_view import SweepView
from gguf_budget.gui.qt.whatif.sweep_worker import CHUNK_BUDGETS, SweepWorker, chunked, merge_sweeps

TIED = ArchDesc(name="tied", n_layer=3, n_vocab=1024, tied=True)
# ~18 MiB blocks: the default range spans some 200 MiB, more budgets than one chunk holds.
BIG = ArchDesc(name="big-llama", n_layer=8, n_embd=1024, n_ff=4096, n_head=8, n_head_kv=4, n_vocab=32000,
               context_length=4096)


@pytest.fixture(scope="module")
def wide_path(tmp_path_factory) -> Path:
    return write_gguf(tmp_path_factory.mktemp("sweep-gui") / "wide.gguf", WIDE, "header_only")[0]


@pytest.fixture(scope="module")
def wide(wide_path):
    return load_model(wide_path)


@pytest.fixture
def view(qtbot):
    v = SweepView()
    qtbot.addWidget(v)
    v.resize(1200, 360)
    v.show()
    qtbot.waitExposed(v)
    yield v
    v.cancel()
    QThreadPool.globalInstance().waitForDone(5000)


def swept(qtbot, view: SweepView, model, request: BudgetRequest | None = None) -> None:
    request = request or BudgetRequest()
    with qtbot.assertNotEmitted(view.sweepFailed), qtbot.waitSignal(view.sweepFinished, timeout=10000):
        view.set_model(model, request)


@pytest.mark.parametrize("low, high, expected", [
    (40 * MIB, 120 * MIB, "30M:150M:1M"),          # 120 MiB wide: one MiB a step
    (1000 * MIB, 5000 * MIB, "740M:6260M:20M"),    # 5500 / 256 = 21.5 → a step of 20, FROM and TO its multiples
    (MIB // 2, MIB, "1M:2M:1M"),                   # never below 1 MiB, never empty
])
def test_default_range_in_round_mib(low, high, expected):
    assert default_range(low, high) == expected


def test_curves_are_the_cli_sweep_rows(qtbot, view, wide, wide_path, capsys):
    view.set_speed(SweepSpeed(Bandwidths(), None))
    swept(qtbot, view, wide)
    text = view.range_edit.text()
    low, high = budget_thresholds(wide, BudgetRequest())
    budgets = budget_range(text)
    assert budgets[0] <= low and high <= budgets[-1]
    assert main(["sweep", str(wide_path), "--budgets", text, "--json", "--no-measure"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert cli == sweep_dict(view.result())
    assert all(row["tok_s"] is not None for row in cli["rows"] if row["feasible"])
    xs = [row["budget"] for row in cli["rows"]]
    for name in ("total", "ctx", "n_pinned"):
        x, y = view.chart.curves[name].getData()
        assert np.array_equal(x, xs)
        assert np.array_equal(y, [row[name] for row in cli["rows"]])
    for key in ("first_feasible", "all_pinned"):
        assert cli[key] is not None
        assert {line.value() for line in view.chart.markers[key]} == {cli[key]}
    assert view.chart.regions[0].getRegion() == (xs[0], cli["first_feasible"])
    assert "first feasible" in view.status.text() and not view.progress.isVisible()


def test_ctx_change_sweeps_again_but_budget_change_does_not(qtbot, view, wide):
    swept(qtbot, view, wide, BudgetRequest(budget=Budget.of(64 * MIB)))
    view.set_request(BudgetRequest(budget=Budget.of(96 * MIB), force=True))
    assert not view.worker.busy
    with qtbot.waitSignal(view.sweepFinished, timeout=10000):
        view.set_request(BudgetRequest(budget=Budget.of(96 * MIB), ctx=512))
    assert view.result().ctx_cap == 512
    assert {row.ctx for row in view.result().rows} == {512}
    expected = sweep_budgets(wide, budget_range(view.range_edit.text()), BudgetRequest(ctx=512))
    assert view.result() == expected


def _view_point(view: SweepView, plot: str, x: float) -> QPoint:
    vb = view.chart.plots[plot].vb
    y = sum(vb.viewRange()[1]) / 2
    return view.chart.mapFromScene(vb.mapViewToScene(QPointF(x, y)))


@pytest.mark.parametrize("plot", ["total", "n_pinned"])
def test_click_picks_the_nearest_swept_budget(qtbot, view, wide, plot):
    swept(qtbot, view, wide)
    rows = view.result().rows
    target = rows[len(rows) // 3].budget
    step = rows[1].budget - rows[0].budget
    with qtbot.waitSignal(view.budgetPicked) as picked:
        qtbot.mouseClick(view.chart.viewport(), Qt.MouseButton.LeftButton, pos=_view_point(view, plot, target + step * 0.3))
    assert picked.args == [target]


def test_right_click_and_clicks_before_a_sweep_pick_nothing(qtbot, view, wide):
    with qtbot.assertNotEmitted(view.budgetPicked):
        qtbot.mouseClick(view.chart.viewport(), Qt.MouseButton.LeftButton, pos=view.chart.rect().center())
    swept(qtbot, view, wide)
    with qtbot.assertNotEmitted(view.budgetPicked):
        qtbot.mouseClick(view.chart.viewport(), Qt.MouseButton.RightButton,
                         pos=_view_point(view, "total", view.result().rows[5].budget))


def test_budget_mark_follows_at_once_then_at_most_every_interval(qtbot, view):
    view.set_budget(100 * MIB)
    assert all(line.isVisible() and line.value() == 100 * MIB for line in view.chart.budget_lines)
    for mib in (101, 102, 103):
        view.set_budget(mib * MIB)
    assert {line.value() for line in view.chart.budget_lines} == {100 * MIB}  # held during the drag
    qtbot.waitUntil(lambda: {line.value() for line in view.chart.budget_lines} == {103 * MIB})
    view.set_budget(None)
    qtbot.waitUntil(lambda: not any(line.isVisible() for line in view.chart.budget_lines))


def test_a_bad_range_is_refused_and_the_chart_kept(qtbot, view, wide):
    swept(qtbot, view, wide)
    before = view.result()
    view.range_edit.setText("1G:128M:1M")
    with qtbot.waitSignal(view.sweepFailed) as failed:
        qtbot.mouseClick(view.run_button, Qt.MouseButton.LeftButton)
    assert "TO is below FROM" in failed.args[0] and "TO is below FROM" in view.status.text()
    assert view.result() is before


def test_a_typed_range_is_kept_for_the_next_request(qtbot, view, wide):
    swept(qtbot, view, wide)
    view.range_edit.setText("40M:48M:2M")
    with qtbot.waitSignal(view.sweepFinished, timeout=10000):
        qtbot.keyClick(view.range_edit, Qt.Key.Key_Return)
    assert [r.budget for r in view.result().rows] == [40 * MIB, 42 * MIB, 44 * MIB, 46 * MIB, 48 * MIB]
    with qtbot.waitSignal(view.sweepFinished, timeout=10000):
        view.set_request(BudgetRequest(kv_type="q8_0"))
    assert view.range_edit.text() == "40M:48M:2M" and len(view.result().rows) == 5


class Gate:
    """The real sweep, held at its first chunk until the test opens the gate; counts chunks."""

    def __init__(self):
        self.entered, self.open, self.calls = threading.Event(), threading.Event(), 0

    def __call__(self, model, budgets, request):
        self.calls += 1
        self.entered.set()
        self.open.wait(10)
        return sweep_budgets(model, budgets, request)


def test_cancel_stops_the_worker_between_chunks_and_keeps_the_chart(qtbot, tmp_path):
    big = load_model(write_gguf(tmp_path / "big.gguf", BIG, "header_only")[0])
    gate = Gate()
    view = SweepView(backend=gate)
    qtbot.addWidget(view)
    view.show()
    view.set_model(big, BudgetRequest())
    assert gate.entered.wait(10)
    n = len(budget_range(view.range_edit.text()))
    assert n > CHUNK_BUDGETS
    assert view.cancel_button.isVisible() and view.progress.maximum() == n
    with qtbot.assertNotEmitted(view.sweepFinished, wait=100), qtbot.waitSignal(view.worker.cancelled):
        qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
        gate.open.set()
        assert QThreadPool.globalInstance().waitForDone(10000)
    assert gate.calls == 1
    assert view.result() is None and "cancelled" in view.status.text() and not view.cancel_button.isVisible()


def test_progress_counts_every_budget(qtbot, wide):
    worker = SweepWorker()
    seen: list[tuple[int, int]] = []
    worker.progress.connect(lambda done, total: seen.append((done, total)))
    budgets = list(range(MIB, MIB * (2 * CHUNK_BUDGETS + 10) + 1, MIB))
    with qtbot.waitSignal(worker.succeeded, timeout=10000) as done:
        worker.start(wide, budgets, BudgetRequest())
    total = len(budgets)
    assert seen == [(CHUNK_BUDGETS, total), (2 * CHUNK_BUDGETS, total), (total, total)]
    assert done.args[0] == sweep_budgets(wide, budgets, BudgetRequest())


def test_a_plan_error_fails_on_the_worker(qtbot, tmp_path):
    tied = load_model(write_gguf(tmp_path / "tied.gguf", TIED, "header_only")[0])
    worker = SweepWorker()
    with qtbot.assertNotEmitted(worker.succeeded), qtbot.waitSignal(worker.failed, timeout=10000) as failed:
        worker.start(tied, [64 * MIB], BudgetRequest(head_mode="stream"))
    assert "tied" in failed.args[0]
    assert not worker.busy


def test_a_newer_sweep_wins(qtbot, wide):
    worker = SweepWorker()
    results = []
    worker.succeeded.connect(results.append)
    worker.start(wide, list(range(MIB, 300 * MIB, MIB)), BudgetRequest())
    with qtbot.waitSignal(worker.succeeded, timeout=10000):
        worker.start(wide, [64 * MIB], BudgetRequest())
    QThreadPool.globalInstance().waitForDone(10000)
    qtbot.wait(10)
    assert [len(r.rows) for r in results] == [1]


@settings(max_examples=30, deadline=None)
@given(budgets=st.lists(st.integers(1, 200 * MIB), min_size=1, max_size=40), size=st.integers(1, 7),
       ctx=st.sampled_from((None, 256, 4096)))
def test_chunked_sweeps_merge_to_one_sweep(wide, budgets, size, ctx):
    request = BudgetRequest(ctx=ctx)
    parts = [sweep_budgets(wide, chunk, request) for chunk in chunked(budgets, size)]
    assert merge_sweeps(parts) == sweep_budgets(wide, budgets, request)


def test_hover_names_the_row_under_the_cursor(qtbot, view, wide):
    swept(qtbot, view, wide)
    row = view.result().rows[-1]
    scene = view.chart.mapToScene(_view_point(view, "ctx", row.budget))
    assert view.chart.text_at(scene) == (
        f"budget {human_bytes(row.budget)}: feasible; ctx 4,096; 8/8 pinned; peak {human_bytes(row.total)} "
        f"({row.total:,} B)")
    assert view.chart.text_at(QPointF(-50, -50)) == ""


def test_a_budget_dragged_off_the_range_sweeps_again_once_it_is_still(qtbot, view, wide):
    """Each sweep shares the GIL with the window: a drag that leaves the swept range tick after tick starts no
    sweep until the budget has been still for RESWEEP_SETTLE_MS, then one sweep around where it stopped."""
    swept(qtbot, view, wide)
    top = view.result().rows[-1].budget
    for step in range(1, 6):  # a drag, each tick off the swept range
        view.set_budget(top + step * 64 * MIB)
        assert not view.worker.busy and view.resweep_timer.isActive()
    with qtbot.waitSignal(view.sweepFinished, timeout=10000):
        pass
    rows = view.result().rows
    assert rows[0].budget <= top + 5 * 64 * MIB <= rows[-1].budget


def test_a_new_model_while_the_chart_is_being_built_is_drawn_once_it_is_whole(qtbot, view, wide, tmp_path):
    """The first sweep's chart is built a piece an event-loop turn, the widget first; a model opened before its
    plots stops that sweep's drawing, and its own sweep finishes the chart and draws itself (the old rows never)."""
    import gguf_budget.gui.qt.whatif.sweep_chart  # noqa: F401 -- imported: the widget is made as the sweep answers

    tied = load_model(write_gguf(tmp_path / "tied.gguf", TIED, "header_only")[0])
    plots_then: list[int] = []

    def reopen(_result: object) -> None:
        view.worker.succeeded.disconnect(reopen)
        plots_then.append(len(view._chart.plots))
        view.set_model(tied, BudgetRequest())

    view.worker.succeeded.connect(reopen)
    finished: list[object] = []
    view.sweepFinished.connect(lambda: finished.append(view.result()))
    with qtbot.assertNotEmitted(view.sweepFailed), qtbot.waitSignal(view.sweepFinished, timeout=10000):
        view.set_model(wide, BudgetRequest())
    expected = sweep_budgets(tied, budget_range(view.range_edit.text()), BudgetRequest())
    assert plots_then == [0] and finished == [expected] and view.chart.whole and view.chart.isVisible()


_KEPT_ALIVE: list[object] = []


def _chart_on_screen(view: SweepView) -> QImage:
    """The chart as the window shows it: what its paints left on screen, not a fresh drawing."""
    QApplication.processEvents()
    chart = view.chart
    corner = chart.mapTo(view, QPoint(0, 0))
    shot = view.screen().grabWindow(view.winId(), corner.x(), corner.y(), chart.width(), chart.height())
    return shot.toImage().convertToFormat(QImage.Format.Format_RGB32)


def test_a_moved_budget_mark_draws_no_curve_again_and_shows_a_fresh_charts_pixels(monkeypatch, qtbot, view, wide):
    """sweep_chart Rule 1: the mark's strips are repainted from the curves' kept pixmaps; every curve used to be
    drawn whole again, clipped to them (~1 ms of each mark on the 80-layer model's sweep)."""
    drawn: list[object] = []
    plain = pg.PlotCurveItem.paint

    def counted(item: pg.PlotCurveItem, *args: object) -> None:
        drawn.append(item)
        plain(item, *args)

    # Counted from before the chart's first paint: the binding keeps the method it found on an item's first paint,
    # so the wrapper is kept alive past the test (a freed one would crash a later paint of these items).
    _KEPT_ALIVE.append(counted)
    monkeypatch.setattr(pg.PlotCurveItem, "paint", counted)
    swept(qtbot, view, wide)
    rows = view.result().rows
    view.set_budget(rows[5].budget)
    qtbot.waitExposed(view)
    shown = _chart_on_screen(view)
    qtbot.waitUntil(lambda: not view._mark_throttle.timer.isActive())
    first_paints = len(drawn)
    view.set_budget(rows[-5].budget + MIB // 3)
    moved = _chart_on_screen(view)
    assert first_paints > 0 and len(drawn) == first_paints
    fresh = SweepView()
    qtbot.addWidget(fresh)
    fresh.resize(view.size())
    fresh.show()
    qtbot.waitExposed(fresh)
    swept(qtbot, fresh, wide)
    fresh.set_budget(rows[-5].budget + MIB // 3)
    assert fresh.result() == view.result()
    qtbot.waitUntil(lambda: all(fresh.chart.plots[name].vb.sceneBoundingRect() == plot.vb.sceneBoundingRect()
                                for name, plot in view.chart.plots.items()))  # its axes have taken their width
    assert moved == _chart_on_screen(fresh) != shown


def test_an_export_draws_the_curves_themselves_not_their_screen_pixmaps(qtbot, view, wide):
    """sweep_chart Rule 1: the screen keeps each curve as a pixmap; an SVG keeps them as lines (no image in it),
    and the screen keeps its pixmaps after."""
    swept(qtbot, view, wide)
    view.set_budget(view.result().rows[10].budget)
    qtbot.waitExposed(view)
    QApplication.processEvents()
    svg = chart_svg(view.chart).decode()
    assert "<image" not in svg and svg.count("<polyline") > 100
    assert {curve.curve.cacheMode() for curve in view.chart.curves.values()} == {QGraphicsItem.CacheMode.DeviceCoordinateCache}


def test_a_new_sweep_on_kept_curves_shows_a_fresh_charts_pixels(qtbot, view, wide):
    """sweep_chart Rule 1: new rows and new ranges draw the kept curves again, never an older sweep's pixmap."""
    swept(qtbot, view, wide)
    view.set_budget(view.result().rows[-3].budget)
    qtbot.waitExposed(view)
    _chart_on_screen(view)
    later = BudgetRequest(ctx=1024)
    with qtbot.waitSignal(view.sweepFinished, timeout=10000):
        view.set_request(later)
    shown = _chart_on_screen(view)
    fresh = SweepView()
    qtbot.addWidget(fresh)
    fresh.resize(view.size())
    fresh.show()
    qtbot.waitExposed(fresh)
    swept(qtbot, fresh, wide, later)  # the request's budget is unlimited: no mark on either
    assert fresh.result() == view.result()
    qtbot.waitUntil(lambda: all(fresh.chart.plots[name].vb.sceneBoundingRect() == plot.vb.sceneBoundingRect()
                                for name, plot in view.chart.plots.items()))
    assert _chart_on_screen(view) == shown == _chart_on_screen(fresh)
