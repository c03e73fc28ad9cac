"""What-if in the window: the sweep follows the plan, a click on it sets the budget, compare and the menus work."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from gguf.constants import GGMLQuantizationType as T
from gui_support import MIB, WIDE, open_model, settle
from PySide6.QtCore import QPointF, Qt

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import BudgetRequest, budget_range, load_model, plan_memory, sweep_budgets
from gguf_budget.core.model.catalogue import CATALOGUE, catalogue_path
from gguf_budget.core.speed.sweep import with_speeds
from gguf_budget.core.views.speed_view import plan_payload
from gguf_budget.gui.qt.addons import Explorer
from gguf_budget.gui.qt.main_window import MainWindow
from gguf_budget.gui.qt.whatif.screens import prepare_view
from gguf_budget.gui.qt.whatif.wiring import WhatIf, shows


@pytest.fixture
def model_path(write_model):
    return write_model()


@pytest.fixture
def explorer(qtbot, make_explorer, model_path) -> Explorer:
    """The composed app with a model open and its sweep on the chart."""
    app = make_explorer()
    with qtbot.waitSignal(app.whatif.sweep.sweepFinished, timeout=10000):
        open_model(qtbot, app.window, model_path)
    return app


@pytest.fixture
def loaded(explorer: Explorer) -> MainWindow:
    return explorer.window


@pytest.fixture
def whatif(explorer: Explorer) -> WhatIf:
    return explorer.whatif


def test_the_menus_and_docks_are_in_place(explorer, loaded, whatif):
    assert [a.text() for a in loaded.menuBar().actions()] == ["&File", "&View", "&Help"]
    titles = [a.text() for a in loaded.file_menu.menu.actions()]
    assert titles == ["&Open…", "Open &Recent", "&Reload", "Ask about a llama.cpp &command…", "Add vision &projector…", "Remove vision projector",
                      "Add &draft model…", "Remove draft model", "", "&Catalogue", "", "&Export", "Open &URL…", "&Library…", "",
                      "Import llama.cpp &log…", "&Measure with llama.cpp…", "llama.cpp l&ocation…", "", "&Quit"]
    view = whatif.view_menu
    assert [a.text() for a in view.actions()] == ["&Reset to this machine", "", "Budget sweep", "Compare models", "Quants",
                                                  "Speed &calibration…", "Reset speed calibration"]
    assert loaded.tabifiedDockWidgets(whatif.sweep_dock) == [whatif.compare_dock]
    assert explorer.quants.dock.isFloating() and explorer.library.dock.isFloating()  # full-size views, own windows


def test_the_sweep_is_of_the_windows_request(qtbot, loaded, whatif, model_path):
    sweep = whatif.sweep
    model = load_model(model_path)
    plain = sweep_budgets(model, budget_range(sweep.range_edit.text()), BudgetRequest())
    assert sweep.result() == with_speeds(model, plain, BudgetRequest().kv_type, loaded.session.state.bandwidths, loaded.session.state.machine.host_available)
    loaded.apply_request(budget=Budget.of(70 * MIB))
    qtbot.waitUntil(lambda: {line.value() for line in sweep.chart.budget_lines} == {70 * MIB})


def test_a_click_on_the_sweep_sets_the_budget_and_the_plan_follows(qtbot, loaded, whatif):
    chart = whatif.sweep.chart
    row = whatif.sweep.result().rows[10]
    vb = chart.plots["total"].vb
    point = chart.mapFromScene(vb.mapViewToScene(QPointF(row.budget, sum(vb.viewRange()[1]) / 2)))
    qtbot.mouseClick(chart.viewport(), Qt.MouseButton.LeftButton, pos=point)
    settle(qtbot, loaded)
    plan = loaded.session.view.plan
    assert plan.budget.limit == row.budget == loaded.body.plan.budget.exact_bytes()
    assert loaded.body.plan.budget.slider.value() == round(row.budget / MIB)
    assert (plan.feasible, plan.ctx, plan.n_pinned, plan.total) == (row.feasible, row.ctx, row.n_pinned, row.total)
    qtbot.waitUntil(lambda: {line.value() for line in chart.budget_lines} == {row.budget})


def test_a_budget_change_moves_the_mark_and_a_ctx_change_sweeps_again(qtbot, loaded, whatif):
    sweep = whatif.sweep
    before = sweep.result()
    loaded.apply_request(budget=Budget.of(70 * MIB))
    assert not sweep.worker.busy and sweep.result() is before and not whatif.follower.timer.isActive()
    qtbot.waitUntil(lambda: {line.value() for line in sweep.chart.budget_lines} == {70 * MIB})
    with qtbot.waitSignal(sweep.sweepFinished, timeout=10000):
        loaded.apply_request(ctx=1024)
    assert {row.ctx for row in sweep.result().rows} == {1024}


def test_compare_follows_the_windows_budget(qtbot, loaded, whatif, model_path, write_model):  # noqa: F811
    compare = whatif.compare
    whatif.compare_dock.raise_()
    second = write_model(replace(WIDE, weight_type=T.Q4_K), name="wide-q4.gguf")
    with qtbot.waitSignal(compare.secondLoaded, timeout=10000):
        compare.open_second(str(second))
    loaded.apply_request(budget=Budget.of(64 * MIB))
    first = plan_memory(load_model(model_path), BudgetRequest(budget=Budget.of(64 * MIB)))
    assert loaded.session.view.plan == first
    expected = plan_memory(load_model(second), BudgetRequest(budget=Budget.of(64 * MIB), ctx=first.ctx))
    qtbot.waitUntil(lambda: compare.second_plan() == expected)
    assert compare.model.rows()[-1].first == first.total


def test_file_catalogue_opens_a_skeleton(qtbot, loaded, whatif):
    entry = CATALOGUE[0]
    with qtbot.waitSignal(whatif.sweep.sweepFinished, timeout=10000), \
            qtbot.waitSignal(loaded.modelLoaded, timeout=10000):
        whatif.catalogue_menu.actions()[0].trigger()
    assert loaded.session.state.model.path == str(catalogue_path(entry))
    assert whatif.sweep.result().n_layer == loaded.session.state.model.n_layer


def test_file_export_writes_the_windows_plan(qtbot, loaded, whatif, tmp_path):
    path = tmp_path / "plan.json"
    with qtbot.waitSignal(whatif.export_menu.exported):
        assert whatif.export_menu.export("json", str(path))
    assert json.loads(path.read_text()) == plan_payload(loaded.session.view.plan, loaded.session.view.plan_speed)
    assert "Exported" in loaded.messages.current()


def waiter(qtbot):
    """The `wait` a screenshot passes in: run Qt until the condition holds."""
    return lambda done, signals: qtbot.waitUntil(done, timeout=10000)


def test_screenshot_views_wait_for_their_numbers(qtbot, explorer, loaded, whatif, write_model):  # noqa: F811
    loaded.apply_request(ctx=512)
    assert prepare_view(loaded, whatif, explorer.quants, "sweep", None, waiter(qtbot)) is None
    assert {row.ctx for row in whatif.sweep.result().rows} == {512}
    assert not whatif.sweep_dock.visibleRegion().isEmpty()
    second = write_model(replace(WIDE, weight_type=T.Q4_K), name="wide-q4.gguf")
    assert prepare_view(loaded, whatif, explorer.quants, "compare", str(second), waiter(qtbot)) is None
    assert whatif.compare.model.rowCount() > 0
    qtbot.waitUntil(lambda: not whatif.compare_dock.visibleRegion().isEmpty())
    assert whatif.sweep_dock.visibleRegion().isEmpty()  # the tab behind


@pytest.mark.parametrize("second, message", [
    (None, "--view compare needs --compare FILE (the second model)"),
    ("missing.gguf", "the second model cannot be compared: "),
])
def test_screenshot_compare_failures_are_one_line(qtbot, explorer, loaded, whatif, second, message):
    error = prepare_view(loaded, whatif, explorer.quants, "compare", second, waiter(qtbot))
    assert error.startswith(message) and "\n" not in error


def test_a_drag_sweeps_once_when_the_controls_settle(qtbot, loaded, whatif):
    sweep, follower = whatif.sweep, whatif.follower
    finished = []
    sweep.sweepFinished.connect(lambda: finished.append(sweep.result()))
    for ctx in (512, 640, 768, 896):
        loaded.apply_request(ctx=ctx)
        assert follower.timer.isActive() and not sweep.worker.busy
    assert "settle" in sweep.status.text()
    qtbot.waitUntil(lambda: len(finished) == 1, timeout=10000)
    with qtbot.assertNotEmitted(sweep.sweepFinished, wait=2 * follower.timer.interval()):
        pass
    assert {row.ctx for row in finished[0].rows} == {896}


def test_a_hidden_sweep_waits_until_it_is_shown(qtbot, loaded, whatif):
    before = whatif.sweep.result()
    whatif.compare_dock.raise_()
    qtbot.waitUntil(lambda: not shows(whatif.sweep_dock))
    loaded.apply_request(ctx=512)
    assert not whatif.follower.timer.isActive() and not whatif.sweep.worker.busy
    assert whatif.sweep.result() is before
    with qtbot.waitSignal(whatif.sweep.sweepFinished, timeout=10000):
        whatif.sweep_dock.raise_()
    assert {row.ctx for row in whatif.sweep.result().rows} == {512}


def test_a_hidden_compare_replans_when_it_is_shown(qtbot, loaded, whatif, write_model):  # noqa: F811
    whatif.compare_dock.raise_()
    qtbot.waitUntil(lambda: shows(whatif.compare_dock))
    with qtbot.waitSignal(whatif.compare.secondLoaded, timeout=10000):
        whatif.compare.open_second(str(write_model(replace(WIDE, weight_type=T.Q4_K), name="wide-q4.gguf")))
    whatif.sweep_dock.raise_()
    qtbot.waitUntil(lambda: not shows(whatif.compare_dock))
    old = whatif.compare.second_plan().budget.limit
    loaded.apply_request(budget=Budget.of(old + 8 * MIB))
    assert whatif.compare.second_plan().budget.limit == old
    whatif.compare_dock.raise_()
    qtbot.waitUntil(lambda: whatif.compare.second_plan().budget.limit == old + 8 * MIB)
