"""The charts read at a glance (issue 17, item 4), on real widgets: sweep labels inside their
plots, apart and off the curves at 1280 × 720; a constant ctx on a sane axis; the window's budget
always inside the swept range; a zoom to the plan at large budgets; the compare total in bold."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from gguf_factory import write_gguf
from gui_support import MIB, WIDE, child, open_model, settle
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtWidgets import QApplication

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import BudgetRequest, load_model, plan_memory
from gguf_budget.core.views.compare_view import compare_rows
from gguf_budget.gui.qt.whatif.compare_table import CompareModel
from gguf_budget.gui.qt.whatif.sweep_chart import SweepChart


def apply_and_sweep(qtbot, explorer, **request) -> None:
    sweep = explorer.whatif.sweep
    explorer.window.apply_request(**request)
    qtbot.waitUntil(lambda: not explorer.whatif.follower.timer.isActive() and not sweep.worker.busy, timeout=10000)
    settle(qtbot, explorer.window)
    QApplication.processEvents()


def labels(chart: SweepChart) -> list[tuple[str, object, object]]:
    """(text, label item, its plot) for every visible labelled line."""
    found = []
    for plot in chart.plots.values():
        for item in plot.items:
            label = getattr(item, "label", None)
            if label is not None and item.isVisible() and label.isVisible():
                found.append((label.toPlainText().strip(), label, plot))
    return found


def curve_points(chart: SweepChart, plot) -> list[QPointF]:
    """Every corner of the plot's step curves (and the peak = budget line), in scene coordinates."""
    points = []
    for item in plot.listDataItems():
        xs, ys = item.getData()
        if xs is None:
            continue
        for i, (x, y) in enumerate(zip(xs, ys, strict=False)):
            if y == y:  # not NaN (a gap)
                points.append(plot.vb.mapViewToScene(QPointF(float(x), float(y))))
                if i + 1 < len(xs):
                    points.append(plot.vb.mapViewToScene(QPointF(float(xs[i + 1]), float(y))))
    return points


@pytest.mark.parametrize("budget_mib, ctx", [(40, None), (70, None), (100, None), (60, 512), (400, 256)])
def test_sweep_labels_stay_inside_apart_and_off_the_curves(qtbot, laptop, budget_mib, ctx):
    apply_and_sweep(qtbot, laptop, budget=Budget.of(budget_mib * MIB), ctx=ctx)
    chart = laptop.whatif.sweep.chart
    found = labels(chart)
    assert sorted(text for text, _, _ in found) == ["all pinned", "budget", "first feasible"]
    rects = []
    for text, label, plot in found:
        rect: QRectF = label.sceneBoundingRect()
        view = plot.vb.sceneBoundingRect()
        assert view.contains(rect), (text, rect, view)
        assert not [p for p in curve_points(chart, plot) if rect.contains(p)], text
        rects.append(rect)
    assert not [(a, b) for a, b in itertools.combinations(rects, 2) if a.intersects(b)]


def test_a_constant_ctx_gets_an_axis_from_zero(qtbot, laptop):
    apply_and_sweep(qtbot, laptop, budget=Budget.of(80 * MIB), ctx=512)
    chart = laptop.whatif.sweep.chart
    assert {row.ctx for row in chart.result().rows} == {512}
    low, high = chart.plots["ctx"].vb.viewRange()[1]
    assert low == 0 and 512 < high < 1024


@pytest.mark.parametrize("budget_mib", [2000, 20, 300])
def test_the_windows_budget_is_always_inside_the_swept_range(qtbot, laptop, budget_mib):
    apply_and_sweep(qtbot, laptop, budget=Budget.of(budget_mib * MIB))
    qtbot.waitUntil(lambda: laptop.whatif.sweep.result().rows[0].budget <= budget_mib * MIB
                    <= laptop.whatif.sweep.result().rows[-1].budget, timeout=10000)
    rows = laptop.whatif.sweep.result().rows
    qtbot.waitUntil(lambda: all(line.value() == budget_mib * MIB for line in laptop.whatif.sweep.chart.budget_lines))
    assert rows[0].budget <= budget_mib * MIB <= rows[-1].budget


def test_zoom_to_the_plan_turns_a_sliver_into_a_bar(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model())
    window.apply_request(budget=Budget.of(64 << 30))
    chart = child(window, "ledgerChart")
    total = window.session.view.plan.total
    assert chart.top() >= 64 << 30  # the plan is a sliver under the budget
    child(window, "ledgerZoom").setChecked(True)
    top = chart.top()
    assert total <= top < 2 * total
    budget = chart.marks()[0]
    assert budget.value == top and "↑" in budget.text
    child(window, "ledgerZoom").setChecked(False)
    assert chart.top() >= 64 << 30 and chart.marks()[0].value == 64 << 30


def test_the_compare_tables_total_row_is_bold(tmp_path):
    path = write_gguf(tmp_path / "m.gguf", WIDE, "header_only")[0]
    q4 = write_gguf(tmp_path / "q.gguf", replace(WIDE, name="q"), "header_only")[0]
    a = plan_memory(load_model(path), BudgetRequest(budget=Budget.of(64 * MIB)))
    b = plan_memory(load_model(q4), BudgetRequest(budget=Budget.of(64 * MIB)))
    model = CompareModel()
    model.set_rows(compare_rows(a, b), "a", "b")
    fonts = [[model.data(model.index(r, c), Qt.ItemDataRole.FontRole) for c in range(4)]
             for r in range(model.rowCount())]
    assert all(f is not None and f.bold() for f in fonts[-1])
    assert all(f is None for row in fonts[:-1] for f in row)


@pytest.mark.parametrize("minimum, shared", [(28 << 30, True), (25 << 30, True), (10 << 30, False)])
def test_a_budget_and_minimum_that_close_share_one_label(qtbot, minimum, shared):
    """Two labels a few pixels apart overlapped in a narrow chart ('minimum 28.05 GiB' over 'budget 26.00 GiB')."""
    from gguf_budget.gui.qt.plan.ledger_chart import LedgerChart
    from gguf_budget.core.units import human_bytes

    chart = LedgerChart(("Pinned layers",))
    qtbot.addWidget(chart)
    chart.show_ledgers([("This plan", (("Pinned layers", 27 << 30),))], 26 << 30, minimum)
    budget_text, minimum_text = (mark.text for mark in chart.marks())
    if shared:
        assert budget_text == f"budget 26.00 GiB · minimum {human_bytes(minimum)}" and minimum_text == ""
    else:
        assert budget_text == "budget 26.00 GiB" and minimum_text == "minimum 10.00 GiB"
