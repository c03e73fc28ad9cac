"""The Quants dock: the open model's ladder, sortable, following the machine; double-click plans a type."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from gguf_budget.core import load_model
from gguf_budget.core.machine.snapshot import hypothetical_gpus, hypothetical_machine, what_if
from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.core.quant.priced import PRICED_LABEL
from gguf_budget.core.quant.ladder import FULLY_IN_RAM, FULLY_ON_GPU, quant_ladder
from gguf_budget.core.views.quant_report import BEST_MARK, COLUMNS, HEAVY_LOSS_MARK, RECOMMENDED_MARK, RECOMMENDED_RULE
from gguf_budget.core.views.speed_view import decode_cell
from gguf_budget.gui.qt.quants.ladder_table import MARK_COLUMN, QuantLadderModel

from gui_support import child, open_model, type_into

LLAMA_70B = str(catalogue_path(find_entry("llama-3.1-70b-instruct")))
GiB = 1 << 30


def test_the_ladder_model_passes_the_model_tester(qtmodeltester):
    model = QuantLadderModel()
    qtmodeltester.check(model)
    machine = what_if(hypothetical_machine(64 * GiB), gpus=hypothetical_gpus(1, 24 * GiB))
    model.set_ladder(quant_ladder(load_model(LLAMA_70B), machine))
    qtmodeltester.check(model)
    assert model.rowCount() == 20 and model.columnCount() == len(COLUMNS) + 1
    best = next(i for i in range(model.rowCount()) if model.row_at(i).name == "IQ2_XXS")
    assert model.index(best, MARK_COLUMN).data() == f"{BEST_MARK}  {RECOMMENDED_MARK}  {HEAVY_LOSS_MARK}"
    assert model.index(best, 0).data(Qt.ItemDataRole.FontRole).bold()
    decode = next(i for i, c in enumerate(COLUMNS) if c.key == "decode")
    assert model.headerData(decode, Qt.Orientation.Horizontal) == "Decode at start"
    assert model.index(best, decode).data() == decode_cell(model.row_at(best).speed)
    assert model.index(best, decode).data(Qt.ItemDataRole.UserRole) == model.row_at(best).speed.tok_s


def _ladder_shown(qtbot, app):
    app.quants.dock.show()
    app.quants.dock.raise_()
    follower = app.quants.follower
    qtbot.waitUntil(lambda: follower.ladder() is not None and not follower.busy(), timeout=30000)
    return follower.ladder()


def _wait_for_best(qtbot, app, name):
    follower = app.quants.follower
    qtbot.waitUntil(lambda: not follower.busy() and follower.ladder().best == name, timeout=30000)
    return follower.ladder()


@pytest.fixture
def quants_app(qtbot, make_explorer):
    app = make_explorer()       # probe stand-in: 48 GiB available, no GPU
    qtbot.waitUntil(lambda: app.window.session.state.machine is not None, timeout=10000)
    open_model(qtbot, app.window, LLAMA_70B)
    return app


def test_the_dock_follows_the_machine_a_bigger_gpu_moves_the_best_fit(qtbot, quants_app):
    window = quants_app.window
    ladder = _ladder_shown(qtbot, quants_app)
    # 48 GiB − 6 GiB reserve = 42 GiB: Q4_K_M (39.6 GiB + 1.25 GiB KV at 4096) is the largest in RAM.
    assert (ladder.best, ladder.best_reason) == ("Q4_K_M", FULLY_IN_RAM)
    view = quants_app.quants.view
    assert "Best fit: Q4_K_M" in view.summary.text()
    editor = window.body.hardware.editor
    editor.set_machine("64G", 1, "24G")
    assert (_wait_for_best(qtbot, quants_app, "IQ2_XXS").best_reason) == FULLY_ON_GPU
    editor.set_machine("64G", 1, "48G")
    bigger = _wait_for_best(qtbot, quants_app, "Q5_K_S")
    assert bigger.best_reason == FULLY_ON_GPU
    table = child(window, "quantsTable")
    best = view.best_row()
    assert table.model().index(best, 0).data() == "Q5_K_S"
    assert table.model().index(best, MARK_COLUMN).data() == f"{BEST_MARK}  {RECOMMENDED_MARK}"


def test_double_click_plans_the_chosen_type_as_a_priced_model(qtbot, quants_app):
    window = quants_app.window
    source = _ladder_shown(qtbot, quants_app).source
    table = child(window, "quantsTable")
    row = next(r for r in range(table.model().rowCount()) if table.model().index(r, 0).data() == "Q8_0")
    index = table.model().index(row, 0)
    with qtbot.waitSignal(window.modelLoaded, timeout=10000):
        table.doubleClicked.emit(index)
    shown = window.session.state.model
    assert shown.file_type_name == "Q8_0" and shown.name.startswith(f"Q8_0 ({PRICED_LABEL}) of ")
    assert shown.tensor_bytes > 1.7 * source.tensor_bytes
    assert PRICED_LABEL in window.windowTitle()
    assert window.session.view.plan is not None
    assert quants_app.quants.follower.ladder().source is source      # the dock keeps the file it priced
    # Q4_K_S fits in RAM here, but no command may load the Q4_K_M file for it: its repository is unknown,
    # so there is no command, and one line says why
    row = next(r for r in range(table.model().rowCount()) if table.model().index(r, 0).data() == "Q4_K_S")
    with qtbot.waitSignal(window.modelLoaded, timeout=10000):
        table.doubleClicked.emit(table.model().index(row, 0))
    assert window.session.state.model.priced_type == "Q4_K_S" and window.session.view.fit.recommended is not None
    assert window.run_it.full_load.command is None
    assert "Q4_K_S is priced, not downloaded" in window.run_it.full_load.text.text()
    assert child(window, "runCommand").toPlainText().startswith("# Q4_K_S is priced, not downloaded")
    assert not child(window, "copyCommand").isEnabled()


def test_the_table_sorts_by_the_numbers_not_the_text(qtbot, quants_app):
    window = quants_app.window
    _ladder_shown(qtbot, quants_app)
    table = child(window, "quantsTable")
    size = next(i for i, c in enumerate(COLUMNS) if c.key == "size")
    table.sortByColumn(size, Qt.SortOrder.AscendingOrder)
    names = [table.model().index(r, 0).data() for r in range(table.model().rowCount())]
    assert names[0] == "IQ2_XXS" and set(names[-2:]) == {"BF16", "F16"}


def test_the_view_menu_switches_the_dock(qtbot, quants_app):
    action = quants_app.quants.dock.toggleViewAction()
    assert action in quants_app.whatif.view_menu.actions()
    assert action.text() == "Quants"


def test_a_hidden_dock_prices_nothing_until_it_is_shown(qtbot, quants_app):
    follower = quants_app.quants.follower
    assert follower.ladder() is None and not follower.busy()
    assert _ladder_shown(qtbot, quants_app).best == "Q4_K_M"


def _decode_cell(window, name):
    table = child(window, "quantsTable")
    decode = next(i for i, c in enumerate(COLUMNS) if c.key == "decode")
    row = next(r for r in range(table.model().rowCount()) if table.model().index(r, 0).data() == name)
    return table.model().index(row, decode).data()


def test_the_decode_column_shows_the_full_loads_estimate_the_window_shows_and_follows_the_bandwidths(
        qtbot, quants_app):
    """The 70B skeleton's own row (Q4_K_M) is priced byte for byte as the file on screen: at the same ctx its
    decode cell is the window's full-load estimate; a typed RAM bandwidth reaches both."""
    window = quants_app.window
    _ladder_shown(qtbot, quants_app)
    window.body.hardware.editor.set_machine("64G", 1, "24G")
    window.apply_request(ctx=4096)
    ladder = _wait_for_best(qtbot, quants_app, "IQ2_XXS")
    shown = window.session.view.full_load.speed
    assert ladder.row("Q4_K_M").speed.tok_s == shown.tok_s
    assert _decode_cell(window, "Q4_K_M") == decode_cell(shown)
    assert _decode_cell(window, "F16") == "—"
    before = ladder.row("Q4_K_M").speed
    type_into(qtbot, window, "bwRam", "100G")
    follower = quants_app.quants.follower
    qtbot.waitUntil(lambda: not follower.busy() and follower.ladder() is not ladder, timeout=30000)
    after = follower.ladder().row("Q4_K_M").speed
    assert after.ram.bytes_per_s == 100 * GiB and after.tok_s > before.tok_s
    assert after.tok_s == window.session.view.full_load.speed.tok_s
    assert _decode_cell(window, "Q4_K_M") == decode_cell(after)


def test_the_decode_column_sorts_by_tokens_per_second(qtbot, quants_app):
    window = quants_app.window
    _ladder_shown(qtbot, quants_app)
    window.body.hardware.editor.set_machine("64G", 1, "24G")
    _wait_for_best(qtbot, quants_app, "IQ2_XXS")
    table = child(window, "quantsTable")
    decode = next(i for i, c in enumerate(COLUMNS) if c.key == "decode")
    table.sortByColumn(decode, Qt.SortOrder.DescendingOrder)
    names = [table.model().index(r, 0).data() for r in range(table.model().rowCount())]
    assert names[0] == "IQ2_XXS" and set(names[-2:]) == {"BF16", "F16"}


def test_the_sort_arrow_names_the_order_the_rows_are_in(qtbot, quants_app):
    ladder = _ladder_shown(qtbot, quants_app)
    table = child(quants_app.window, "quantsTable")
    header = table.horizontalHeader()
    assert COLUMNS[header.sortIndicatorSection()].key == "bpw"
    assert header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
    names = [table.model().index(r, 0).data() for r in range(table.model().rowCount())]
    assert names == [r.name for r in ladder.rows]
    table.sortByColumn(0, Qt.SortOrder.AscendingOrder)                 # Type sorts by name
    names = [table.model().index(r, 0).data() for r in range(table.model().rowCount())]
    assert names == sorted(names)


def test_the_dock_marks_the_recommended_type_and_says_the_rule(qtbot, quants_app):
    window = quants_app.window
    _ladder_shown(qtbot, quants_app)
    window.body.hardware.editor.set_machine("64G", 1, "48G")
    ladder = _wait_for_best(qtbot, quants_app, "Q5_K_S")
    summary = quants_app.quants.view.summary.text()
    assert RECOMMENDED_RULE in summary and f"Recommended: {ladder.recommended.name}" in summary
    table = child(window, "quantsTable")
    marked = [table.model().index(r, 0).data() for r in range(table.model().rowCount())
              if RECOMMENDED_MARK in table.model().index(r, MARK_COLUMN).data()]
    assert marked == [ladder.recommended.name]
