"""Small state bugs of the window (issue 25, item 6): what a control shows must follow what is asked
and what is open — no stale error after auto, no stale budget line after another model."""

from __future__ import annotations

from gui_support import child, open_model, settle, type_into

from gguf_budget.core.model.catalogue import catalogue_path, find_entry

GiB = 1 << 30
LLAMA_8B = catalogue_path(find_entry("llama-3.1-8b-instruct"))


def test_the_zoomed_chart_moves_its_budget_line_to_the_new_models_top(qtbot, make_window, write_model):
    """Zoomed, a budget above the bars is pinned to the axis top, labelled ↑; another model has another top,
    and the line must follow it (it stayed at the first model's top)."""
    window = make_window()
    open_model(qtbot, window, write_model())
    type_into(qtbot, window, "budgetEdit", "64G")
    settle(qtbot, window)
    child(window, "ledgerZoom").setChecked(True)
    chart = window.body.plan.chart
    first_top = chart.plot.viewRange()[1][1]
    assert chart._budget_line.value() == first_top and "↑" in chart._budget_line.label.format
    open_model(qtbot, window, LLAMA_8B)
    type_into(qtbot, window, "budgetEdit", "64G")
    settle(qtbot, window)
    top = chart.plot.viewRange()[1][1]
    assert top > first_top
    assert chart._budget_line.value() == top and "↑" in chart._budget_line.label.format


def test_switching_back_to_auto_drops_a_rejected_ctx_and_its_error(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model())
    type_into(qtbot, window, "ctxEdit", "1024")
    settle(qtbot, window)
    type_into(qtbot, window, "ctxEdit", "abc")
    error, edit, auto = child(window, "ctxError"), child(window, "ctxEdit"), child(window, "ctxAuto")
    assert error.isVisible() and edit.text() == "abc"
    auto.click()
    settle(qtbot, window)
    assert auto.isChecked() and not error.isVisible()
    assert edit.text() == "1024"                                   # the last ctx asked, not the rejected text
    assert window.body.plan.context.requested_ctx() is None


def test_a_rejected_cap_keeps_its_error_through_auto(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model())
    type_into(qtbot, window, "ctxEdit", "1024")
    type_into(qtbot, window, "ctxCapEdit", "lots")
    error = child(window, "ctxError")
    assert error.isVisible()
    child(window, "ctxAuto").click()
    assert error.isVisible() and "lots" == child(window, "ctxCapEdit").text()
    type_into(qtbot, window, "ctxCapEdit", "2048")
    assert not error.isVisible() and window.body.plan.context.requested_cap() == 2048
