"""Compare: the same shape in Q8_0 and Q4_K side by side, with hand-worked differences per ledger line."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from gguf.constants import GGMLQuantizationType as T
from gguf_factory import ArchDesc, write_gguf
from gui_support import MIB, WIDE
from PySide6.QtCore import QPoint, Qt, QThreadPool
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import BudgetRequest, LEDGER_LINES, load_model, plan_memory
from gguf_budget.core.views.compare_view import CompareRow, compare_rows
from gguf_budget.gui.qt.whatif.compare_table import CompareModel
from gguf_budget.gui.qt.whatif.compare_view import CompareView

Q4 = replace(WIDE, weight_type=T.Q4_K, file_type=15)
TIED = ArchDesc(name="tied", n_layer=2, n_vocab=1024, tied=True)

# WIDE per block: 3,145,728 weights (q, k, v, o, gate, up, down) + two f32 norms (4,096 B).
# Q8_0 stores 34 B per 32 weights, Q4_K 144 B per 256: 3,342,336 vs 1,769,472 B a block.
BLOCK_SAVING = 3_342_336 - 1_769_472            # 1.5 MiB a block, 12 MiB over 8 blocks
HEAD_SAVING = 512 * 32000 // 32 * 34 - 512 * 32000 // 256 * 144  # the untied output table
ROW_SAVING = 512 // 32 * 34 - 512 // 256 * 144  # one token_embd row


@pytest.fixture(scope="module")
def paths(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("compare")
    return {name: write_gguf(folder / f"wide-{name}.gguf", desc, "header_only")[0]
            for name, desc in (("q8_0", WIDE), ("q4_k", Q4), ("tied", TIED))}


@pytest.fixture
def view(qtbot):
    v = CompareView()
    qtbot.addWidget(v)
    v.show()
    yield v
    QThreadPool.globalInstance().waitForDone(5000)


def first_plan(path: Path, request: BudgetRequest):
    model = load_model(path)
    return model, request, plan_memory(model, request)


def open_second(qtbot, view: CompareView, path: Path | str) -> None:
    with qtbot.assertNotEmitted(view.secondFailed), qtbot.waitSignal(view.secondLoaded, timeout=10000):
        view.open_second(str(path))


def differences(view: CompareView) -> dict[str, int]:
    m = view.model
    return {m.data(m.index(r, 0), Qt.ItemDataRole.UserRole): m.data(m.index(r, 3), Qt.ItemDataRole.UserRole)
            for r in range(m.rowCount())}


def test_unlimited_budget_differences_are_the_quantization(qtbot, view, paths):
    view.set_first(*first_plan(paths["q8_0"], BudgetRequest()))
    open_second(qtbot, view, paths["q4_k"])
    expected = dict.fromkeys(LEDGER_LINES, 0) | {
        "pinned": -8 * BLOCK_SAVING, "lm_head": -HEAD_SAVING, "embeddings": -4096 * ROW_SAVING}
    expected["total"] = sum(expected.values())
    assert differences(view) == expected
    assert (BLOCK_SAVING, HEAD_SAVING, ROW_SAVING) == (1_572_864, 8_192_000, 256)
    assert view.model.headerData(2, Qt.Orientation.Horizontal) == "wide-q4_k.gguf"
    assert "Q4_K" in view.second_label.text() and "unlimited at ctx 4,096, 8/8 layers pinned" in view.second_label.text()


def test_a_tight_budget_pins_more_of_the_smaller_file_at_the_same_ctx(qtbot, view, paths):
    request = BudgetRequest(budget=Budget.of(64 * MIB))
    model, _, plan = first_plan(paths["q8_0"], request)
    view.set_first(model, request, plan)
    open_second(qtbot, view, paths["q4_k"])
    second = view.second_plan()
    assert second == plan_memory(load_model(paths["q4_k"]), replace(request, ctx=plan.ctx))
    assert second.ctx == plan.ctx and second.n_pinned > plan.n_pinned
    rows = view.model.rows()
    assert rows == compare_rows(plan, second)
    assert [r.line for r in rows] == [*LEDGER_LINES, "total"]
    for row, (line, first_bytes) in zip(rows[:-1], plan.ledger.items(), strict=True):
        assert (row.line, row.first, row.second) == (line, first_bytes, getattr(second.ledger, line))
    m = view.model
    pinned = LEDGER_LINES.index("pinned")
    assert m.data(m.index(pinned, 3), Qt.ItemDataRole.ToolTipRole) == f"{rows[pinned].difference:+,} bytes"


def test_a_new_first_plan_replans_the_second(qtbot, view, paths):
    view.set_first(*first_plan(paths["q8_0"], BudgetRequest(budget=Budget.of(64 * MIB))))
    open_second(qtbot, view, paths["q4_k"])
    request = BudgetRequest(budget=Budget.of(64 * MIB), ctx=512)
    view.set_first(*first_plan(paths["q8_0"], request))
    assert view.second_plan().ctx == 512
    assert view.model.rows()[LEDGER_LINES.index("attn")].difference == 0


@pytest.mark.parametrize("bad", ["garbage", "missing"])
def test_a_bad_second_file_keeps_both_models(qtbot, view, paths, tmp_path, bad):
    view.set_first(*first_plan(paths["q8_0"], BudgetRequest()))
    open_second(qtbot, view, paths["q4_k"])
    rows, first_text = view.model.rows(), view.first_label.text()
    path = tmp_path / "bad.gguf"
    if bad == "garbage":
        path.write_bytes(b"not a gguf file at all" * 10)
    with qtbot.assertNotEmitted(view.secondLoaded), qtbot.waitSignal(view.secondFailed, timeout=10000):
        view.open_second(str(path))
    assert view.error.isVisible() and view.error.text().startswith("Could not open the second model: ")
    assert view.model.rows() == rows and view.first_label.text() == first_text
    assert view.second_model().path == str(paths["q4_k"]) and view.open_button.isEnabled()


def test_a_second_model_the_planner_refuses_is_not_taken(qtbot, view, paths):
    request = BudgetRequest(head_mode="stream")
    view.set_first(*first_plan(paths["q8_0"], request))
    open_second(qtbot, view, paths["q4_k"])
    rows = view.model.rows()
    with qtbot.assertNotEmitted(view.secondLoaded), qtbot.waitSignal(view.secondFailed, timeout=10000) as failed:
        view.open_second(str(paths["tied"]))
    assert "tied" in failed.args[0] and "tied" in view.error.text()
    assert view.model.rows() == rows and view.second_model().path == str(paths["q4_k"])


def test_before_a_first_model_the_second_waits(qtbot, view, paths):
    open_second(qtbot, view, paths["q4_k"])
    assert view.model.rowCount() == 0 and not view.error.isVisible()
    view.set_first(*first_plan(paths["q8_0"], BudgetRequest()))
    assert view.model.rowCount() == len(LEDGER_LINES) + 1


def test_the_table_model_passes_qt_model_checks(qtmodeltester, paths):
    _, _, a = first_plan(paths["q8_0"], BudgetRequest(budget=Budget.of(64 * MIB)))
    _, _, b = first_plan(paths["q4_k"], BudgetRequest(budget=Budget.of(64 * MIB), ctx=a.ctx))
    model = CompareModel()
    model.set_rows(compare_rows(a, b), "a", "b")
    qtmodeltester.check(model, force_py=True)
    assert model.rows()[-1] == CompareRow("total", a.total, b.total)


def _on_screen(view: CompareView) -> QImage:
    """The table's cells as the window shows them (what its paints left on screen, not a fresh drawing)."""
    QApplication.processEvents()
    viewport = view.table.viewport()
    corner = viewport.mapTo(view, QPoint(0, 0))
    shot = view.screen().grabWindow(view.winId(), corner.x(), corner.y(), viewport.width(), viewport.height())
    return shot.toImage().convertToFormat(QImage.Format.Format_RGB32)


def test_a_budget_tick_announces_only_the_cells_it_moved_and_draws_a_fresh_tables_pixels(qtbot, view, paths):
    """Rule 4 of compare_table: each moved number is its own change, the headers none while the names hold (one
    change over the whole table and the headers repainted every cell on every replan)."""
    view.resize(900, 500)
    view.set_first(*first_plan(paths["q8_0"], BudgetRequest(budget=Budget.of(64 * MIB))))
    open_second(qtbot, view, paths["q4_k"])
    qtbot.waitExposed(view)
    shown = _on_screen(view)
    before = view.model.rows()
    changed, headers = [], []
    view.model.dataChanged.connect(lambda top, bottom: changed.append(((top.row(), top.column()),
                                                                       (bottom.row(), bottom.column()))))
    view.model.headerDataChanged.connect(lambda *args: headers.append(args))
    view.set_first(*first_plan(paths["q8_0"], BudgetRequest(budget=Budget.of(72 * MIB))))
    after = view.model.rows()
    moved = [(r, c) for r, (new, old) in enumerate(zip(after, before, strict=True))
             for c in (1, 2, 3) if new.values[c - 1] != old.values[c - 1]]
    assert moved and len(moved) < 3 * len(after)
    assert changed == [(cell, cell) for cell in moved] and headers == []
    ticked = _on_screen(view)
    fresh = CompareView()
    qtbot.addWidget(fresh)
    fresh.resize(900, 500)
    fresh.show()
    fresh.set_first(*first_plan(paths["q8_0"], BudgetRequest(budget=Budget.of(72 * MIB))))
    open_second(qtbot, fresh, paths["q4_k"])
    assert fresh.model.rows() == after
    assert ticked == _on_screen(fresh) != shown
