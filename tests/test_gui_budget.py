"""The budget control on real widgets (issue 17, item 5): a span that ctx never rescales, a budget
that never jumps, `0` as unlimited, `5GB` read as binary and said, errors that move nothing."""

from __future__ import annotations

import pytest
from gui_support import GIB, MIB, child, open_model, settle, small_machine
from PySide6.QtCore import Qt

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import BudgetRequest, budget_thresholds, plan_memory
from gguf_budget.core.explorer.budget_span import budget_span
from gguf_budget.core.units import binary_unit_note
from gguf_budget.gui.qt.main_window import MainWindow


@pytest.fixture
def loaded(qtbot, make_window, write_model) -> MainWindow:
    window = make_window()
    open_model(qtbot, window, write_model())
    qtbot.waitUntil(lambda: window.session.state.machine is not None)
    settle(qtbot, window)
    return window


def type_budget(qtbot, window: MainWindow, text: str) -> None:
    edit = child(window, "budgetEdit")
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    settle(qtbot, window)


def slider_state(window: MainWindow) -> tuple[int, int, int, int, int]:
    s = child(window, "budgetSlider")
    return s.minimum(), s.maximum(), s.singleStep(), s.value(), window.session.state.budget


def test_the_span_runs_from_below_the_minimum_to_the_machines_total_ram(loaded):
    model, slider = loaded.session.state.model, child(loaded, "budgetSlider")
    assert slider.minimum() * MIB < budget_thresholds(model, BudgetRequest(ctx=128, n_buffers=1))[0]
    assert slider.maximum() * MIB >= small_machine().host_total == 64 * GIB
    span = budget_span(model, small_machine().host_total)
    assert (slider.minimum(), slider.maximum(), slider.singleStep()) == (span.low // MIB, span.high // MIB,
                                                                         span.step // MIB)


def test_moving_ctx_or_a_knob_neither_rescales_the_slider_nor_moves_the_budget(qtbot, loaded):
    child(loaded, "budgetSlider").setValue(70)
    settle(qtbot, loaded)
    before = slider_state(loaded)
    child(loaded, "ctxAuto").setChecked(False)
    for ctx in (128, 1024, 4096, 2048):
        child(loaded, "ctxSlider").setValue(ctx)
        settle(qtbot, loaded)
        assert slider_state(loaded) == before
    child(loaded, "kvType").setCurrentText("f32")
    child(loaded, "buffersSpin").setValue(5)
    settle(qtbot, loaded)
    assert slider_state(loaded) == before and loaded.session.view.plan.budget.limit == 70 * MIB


def test_typing_0_means_unlimited_as_on_the_command_line_and_the_budget_comes_back(qtbot, loaded):
    type_budget(qtbot, loaded, "80M")
    type_budget(qtbot, loaded, "0")
    assert child(loaded, "budgetUnlimited").isChecked() and not child(loaded, "budgetError").isVisible()
    assert loaded.session.state.request().budget.is_unlimited and child(loaded, "banner").property("state") == "unlimited"
    assert loaded.session.view.plan == plan_memory(loaded.session.state.model, BudgetRequest(budget=Budget.unlimited()))
    child(loaded, "budgetUnlimited").setChecked(False)
    settle(qtbot, loaded)
    assert loaded.session.state.request().budget == Budget.of(80 * MIB) and child(loaded, "budgetEdit").text() == "80.00 MiB"


def test_a_decimal_looking_unit_is_read_as_binary_and_the_window_says_so_in_the_clis_words(qtbot, loaded):
    type_budget(qtbot, loaded, "5000MB")
    note = child(loaded, "budgetNote")
    assert loaded.session.state.request().budget == Budget.of(5000 * MIB)
    assert note.isVisible() and note.text() == binary_unit_note("5000MB")
    type_budget(qtbot, loaded, "96M")
    assert not note.isVisible() and loaded.session.state.request().budget == Budget.of(96 * MIB)


def test_an_invalid_entry_shows_its_error_without_moving_the_layout(qtbot, loaded):
    names = ("budgetSlider", "ctxSlider", "pinnedLabel", "layerStrip", "ledgerChart", "reportView")
    where = {name: child(loaded, name).mapTo(loaded, child(loaded, name).rect().topLeft()) for name in names}
    sizes = {name: child(loaded, name).size() for name in names}
    for text in ("lots", "5GB", "-1G"):
        type_budget(qtbot, loaded, text)
        qtbot.wait(10)
        assert {n: child(loaded, n).mapTo(loaded, child(loaded, n).rect().topLeft()) for n in names} == where
        assert {n: child(loaded, n).size() for n in names} == sizes
    assert child(loaded, "budgetError").isVisible()
