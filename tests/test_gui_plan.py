"""The window against the planner: every number on screen is the core's for the same request.

Real widgets, real GGUF files, the real planner; offscreen Qt. The expected values are
computed by calling `plan_memory` / `budget_thresholds` directly with a request built from
the values the test set (a fresh window's knobs are the defaults: `BudgetRequest()`), never
from the window's own `request()`, so a window that misreads a control fails.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from gui_support import MIB, WIDE, child, open_model, settle, small_machine
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QGuiApplication, QKeySequence, QMouseEvent
from PySide6.QtWidgets import (
    QApplication, QCheckBox, QComboBox, QFrame, QLabel, QLineEdit, QPlainTextEdit, QPushButton, QSlider, QSpinBox, QWidget,
)

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import LEDGER_LINES, BudgetRequest, budget_thresholds, load_model, plan_memory, plan_text
from gguf_budget.core.machine.bandwidth import Bandwidths
from gguf_budget.core.speed.estimate import plan_speed
from gguf_budget.core.speed.token_bytes import TokenPrices
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.speed_view import plan_report_with_speed
from gguf_budget.core.views.ledger_names import line_tooltip
from gguf_budget.gui.qt.main_window import MainWindow
from gguf_budget.gui.qt.plan.ledger_chart import LedgerChart


@pytest.fixture
def model_path(write_model):
    return write_model()


@pytest.fixture
def model(model_path):
    """The model as the core loads it, apart from the window."""
    return load_model(model_path)


@pytest.fixture
def loaded(qtbot, make_window, model_path) -> MainWindow:
    """A window with the model open and its bandwidth figures read: they are read a turn after the first plan is
    painted (main_window Rule 12), and their answer replans, so a test that counts plans starts after it."""
    window = make_window()
    open_model(qtbot, window, model_path)
    qtbot.waitUntil(window.bandwidths_measured, timeout=10000)
    return window


def slide_budget(qtbot, window: MainWindow, mib: int) -> None:
    child(window, "budgetSlider").setValue(mib)
    settle(qtbot, window)


def banner_state(window: MainWindow) -> str:
    return child(window, "banner").property("state")


def test_the_budget_slider_spans_both_thresholds(loaded, model):
    low, high = budget_thresholds(model, BudgetRequest())
    slider = child(loaded, "budgetSlider")
    assert slider.minimum() * MIB < low
    assert slider.maximum() * MIB > high


def test_dragging_across_the_minimum_flips_the_banner_exactly_where_plan_memory_says(qtbot, loaded, model):
    low, _ = budget_thresholds(model, BudgetRequest())
    edge = math.ceil(low / MIB)
    seen = {}
    for mib in range(edge - 3, edge + 4):
        slide_budget(qtbot, loaded, mib)
        expected = plan_memory(model, BudgetRequest(budget=Budget.of(mib * MIB)))
        assert loaded.session.view.plan == expected
        seen[mib] = banner_state(loaded)
        assert seen[mib] == ("feasible" if expected.feasible else "impossible")
    assert [seen[m] for m in (edge - 1, edge)] == ["impossible", "feasible"]


def test_keyboard_steps_the_budget_and_the_plan_follows(qtbot, loaded):
    slider = child(loaded, "budgetSlider")
    slide_budget(qtbot, loaded, (slider.minimum() + slider.maximum()) // 2)
    slider.setFocus()
    before = slider.value()
    qtbot.keyClick(slider, Qt.Key.Key_PageDown)
    qtbot.keyClick(slider, Qt.Key.Key_Left)
    settle(qtbot, loaded)
    assert slider.value() == before - slider.pageStep() - slider.singleStep()
    assert loaded.session.view.plan.budget.limit == slider.value() * MIB


def stacked(items):
    bottom = 0
    out = {}
    for name, n in items:
        out[name] = (float(bottom), float(n))
        bottom += n
    return out


@pytest.mark.parametrize("where", [0.5, 1.0, 1.02, 1.3, 2.0, 3.5, 1e9])
def test_pinned_label_strip_and_every_bar_equal_the_core_ledger(qtbot, loaded, model, where):
    low, high = budget_thresholds(model, BudgetRequest())
    budget = int(low + (high - low) * where) if where < 1e9 else 64 << 30
    edit = child(loaded, "budgetEdit")
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, str(budget))
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    settle(qtbot, loaded)
    expected = plan_memory(model, BudgetRequest(budget=Budget.of(budget)))
    assert loaded.session.view.plan == expected
    assert f"{expected.n_pinned} / {model.n_layer} layers pinned" in child(loaded, "pinnedLabel").text()
    cells = child(loaded, "layerStrip").cells()
    assert cells == (True,) * expected.n_pinned + (False,) * (model.n_layer - expected.n_pinned)
    chart = child(loaded, "ledgerChart")
    plan_bars, minimum_bars = stacked(expected.ledger.items()), stacked(expected.minimum_ledger.items())
    for line in LEDGER_LINES:
        assert chart.segment(0, line) == plan_bars[line]
        assert chart.segment(1, line) == minimum_bars[line]
    speed = plan_speed(TokenPrices.of(model), expected, Bandwidths(), small_machine().host_available)
    assert child(loaded, "reportView").toPlainText() == plan_report_with_speed(plan_text(expected), speed)


def test_hovering_a_segment_names_its_exact_bytes(qtbot, loaded):
    chart = child(loaded, "ledgerChart")
    ledger = loaded.session.view.plan.ledger
    bottom, height = chart.segment(0, "kv")
    move_mouse(chart, chart.to_pixel(0.0, bottom + height / 2))  # a thin segment: between two pixels
    assert chart.hover_text.endswith(f"KV cache: {human_bytes(ledger.kv)} ({ledger.kv:,} bytes)\n{line_tooltip('kv')}")
    assert chart.tooltip("kv") == chart.hover_text and chart.tooltip("pinned") == ""
    move_mouse(chart, chart.to_pixel(0.5, bottom))
    assert chart.hover_text == "" and chart.tooltip("kv") == ""


def move_mouse(widget: QWidget, at: QPointF) -> None:
    """The mouse moves over `widget` to `at` (a point between pixels, as a high-DPI screen has them)."""
    QApplication.sendEvent(widget, QMouseEvent(QEvent.Type.MouseMove, at, widget.mapToGlobal(at), Qt.MouseButton.NoButton,
                                               Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier))


def test_auto_ctx_is_the_planners_choice_and_a_slider_move_makes_it_explicit(qtbot, loaded, model):
    low, high = budget_thresholds(model, BudgetRequest())
    budget = math.ceil((low + (high - low) // 3) / MIB) * MIB
    slide_budget(qtbot, loaded, budget // MIB)
    auto_plan = loaded.session.view.plan
    ctx_slider, auto = child(loaded, "ctxSlider"), child(loaded, "ctxAuto")
    assert auto.isChecked() and loaded.session.state.request().ctx is None
    assert auto_plan == plan_memory(model, BudgetRequest(budget=Budget.of(budget)))
    assert auto_plan.ctx_capped and auto_plan.ctx < model.context_length
    assert ctx_slider.value() == auto_plan.ctx

    ctx_slider.setValue(1000)
    settle(qtbot, loaded)
    assert not auto.isChecked()
    assert ctx_slider.value() == 1024
    explicit = loaded.session.view.plan
    assert (explicit.ctx, explicit.ctx_explicit) == (1024, True)
    assert explicit == plan_memory(model, BudgetRequest(budget=Budget.of(budget), ctx=1024))

    auto.setChecked(True)
    settle(qtbot, loaded)
    assert loaded.session.view.plan == auto_plan


def test_bad_budget_text_shows_an_error_and_keeps_the_last_plan(qtbot, loaded):
    plan, banner_text = loaded.session.view.plan, child(loaded, "banner").text()
    edit, error = child(loaded, "budgetEdit"), child(loaded, "budgetError")
    for bad in ("lots", "-5M", "2P"):
        edit.setFocus()
        edit.selectAll()
        qtbot.keyClicks(edit, bad)
        qtbot.keyClick(edit, Qt.Key.Key_Return)
        settle(qtbot, loaded)
        assert error.isVisible() and error.text()
        assert loaded.session.view.plan is plan
        assert child(loaded, "banner").text() == banner_text
    edit.selectAll()
    qtbot.keyClicks(edit, "1.5G")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    settle(qtbot, loaded)
    assert not error.isVisible()
    assert loaded.session.view.plan.budget.limit == 1536 * MIB


def test_unlimited_and_force_states(qtbot, loaded, model):
    low, _ = budget_thresholds(model, BudgetRequest())
    slide_budget(qtbot, loaded, low // MIB - 2)
    assert banner_state(loaded) == "impossible"
    assert "IMPOSSIBLE" in child(loaded, "banner").text()

    child(loaded, "forceCheck").setChecked(True)
    settle(qtbot, loaded)
    plan = loaded.session.view.plan
    assert banner_state(loaded) == "overridden" and plan.overridden
    assert plan == plan_memory(model, BudgetRequest(budget=Budget.of((low // MIB - 2) * MIB), force=True))

    child(loaded, "budgetUnlimited").setChecked(True)
    settle(qtbot, loaded)
    assert banner_state(loaded) == "unlimited"
    assert loaded.session.view.plan.n_pinned == model.n_layer
    assert not child(loaded, "budgetSlider").isEnabled()


@pytest.mark.parametrize("name, value, field", [
    ("buffersSpin", 1, "n_buffers"), ("headMode", "stream", "head_mode"), ("kvType", "q8_0", "kv_type"),
])
def test_each_knob_reaches_the_request(qtbot, loaded, model, name, value, field):
    low, high = budget_thresholds(model, BudgetRequest())
    slide_budget(qtbot, loaded, (low + high) // 2 // MIB)
    widget = child(loaded, name)
    if isinstance(value, int):
        widget.setValue(value)
    else:
        widget.setCurrentText(value)
    settle(qtbot, loaded)
    assert getattr(loaded.session.state.request(), field) == value
    expected = BudgetRequest(budget=Budget.of((low + high) // 2 // MIB * MIB), **{field: value})
    assert loaded.session.state.request() == expected
    assert loaded.session.view.plan == plan_memory(model, expected)


def test_a_slider_storm_costs_one_plan_not_one_per_tick(qtbot, loaded):
    slider = child(loaded, "budgetSlider")
    before = loaded.recompute_count
    with qtbot.waitSignal(loaded.planChanged):
        for mib in range(slider.minimum(), slider.maximum()):
            slider.setValue(mib)
    settle(qtbot, loaded)
    assert loaded.recompute_count - before == 1
    assert loaded.session.view.plan.budget.limit == (slider.maximum() - 1) * MIB


def test_a_tied_model_cannot_ask_to_stream_its_head(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model(replace(WIDE, tied=True), name="tied.gguf"))
    head = child(window, "headMode")
    assert not head.model().item(head.findText("stream")).isEnabled()
    assert child(window, "banner").property("state") in ("feasible", "impossible")


NAMED = {
    "budgetSlider": QSlider, "budgetEdit": QLineEdit, "ctxSlider": QSlider, "ctxAuto": QCheckBox,
    "buffersSpin": QSpinBox, "headMode": QComboBox, "kvType": QComboBox, "forceCheck": QCheckBox,
    "ledgerChart": LedgerChart, "pinnedLabel": QLabel, "layerStrip": QWidget, "banner": QFrame,
    "reportView": QPlainTextEdit, "hardwarePanel": QWidget, "gpuLayersSpin": QSpinBox, "refreshHardware": QPushButton,
}


def test_every_widget_the_issue_names_is_there_with_its_kind(loaded):
    for name, kind in NAMED.items():
        assert isinstance(child(loaded, name), kind), name
    assert child(loaded, "budgetSlider").value() * MIB == loaded.session.view.plan.budget.limit
    assert child(loaded, "ctxSlider").value() == loaded.session.view.plan.ctx


def test_keyboard_shortcuts_open_and_quit(loaded):
    menu = loaded.file_menu
    assert menu.open_action.shortcut() == QKeySequence(QKeySequence.StandardKey.Open)
    assert menu.quit_action.shortcut() == QKeySequence("Ctrl+Q")
    menu.quit_action.trigger()
    assert not loaded.isVisible()


def test_the_report_is_copyable(qtbot, loaded):
    QGuiApplication.clipboard().clear()
    qtbot.mouseClick(child(loaded, "copyReport"), Qt.MouseButton.LeftButton)
    speed = loaded.session.view.plan_speed
    assert QGuiApplication.clipboard().text() == plan_report_with_speed(plan_text(loaded.session.view.plan), speed)
    assert speed is not None and "Speed estimate" in QGuiApplication.clipboard().text()
    assert child(loaded, "reportView").isReadOnly()
