"""One vocabulary for the ledger (issue 17, item 2): the chart legend, the plan report, the impossible
report, the Markdown export and the compare table name every line the same way, with a tooltip."""

from __future__ import annotations

import re

import pytest
from gguf_factory import ArchDesc
from PySide6.QtCore import Qt

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import LEDGER_LINES, BudgetRequest, plan_dict, plan_memory, plan_text
from gguf_budget.core.views.compare_view import compare_rows
from gguf_budget.core.views.export import plan_markdown
from gguf_budget.core.views.ledger_names import LINE_NAMES, TOTAL_NAME, line_name, line_tooltip
from gguf_budget.core.views.machine_view import POOL_LEGEND
from gguf_budget.gui.qt.machine.memory_bar import MemoryLegend
from gguf_budget.gui.qt.plan.ledger_chart import LedgerChart
from gguf_budget.gui.qt.theme import MEMORY_COLOURS
from gguf_budget.gui.qt.whatif.compare_table import CompareModel

UNTIED = ArchDesc(n_layer=4, n_vocab=2048)
RAW_KEYS = ("lm_head", "resid", "out_norm", "resid+attn", "norm+embeddings")


@pytest.fixture
def spec(model):
    return model(UNTIED)


def report_labels(text: str) -> set[str]:
    """The left column of the report's aligned rows (two spaces of indent, then the label)."""
    return {m.group(1) for m in re.finditer(r"^  (\S.*?)\s{2,}", text, re.M)}


def test_every_view_names_every_line_the_same(qtbot, spec):
    feasible = plan_memory(spec, BudgetRequest(budget=Budget.of(64 << 20)))
    impossible = plan_memory(spec, BudgetRequest(budget=Budget.of(1 << 20)))
    chart = LedgerChart(LEDGER_LINES)
    qtbot.addWidget(chart)
    table = CompareModel()
    table.set_rows(compare_rows(feasible, impossible), "first", "second")
    compare_names = [table.data(table.index(r, 0)) for r in range(table.rowCount())]
    names = [line_name(line) for line in LEDGER_LINES]

    assert chart.legend_names() == names[::-1]  # top-down, as the segments stack bottom-up
    assert compare_names == [*names, TOTAL_NAME]
    assert set(names) <= report_labels(plan_text(feasible))
    assert set(names) <= report_labels(plan_text(impossible))
    assert all(f"| {n} |" in plan_markdown(feasible, spec) for n in names)
    for text in (plan_text(feasible), plan_text(impossible)):
        assert not set(RAW_KEYS) & report_labels(text)


def test_the_json_keeps_the_field_names(spec):
    d = plan_dict(plan_memory(spec, BudgetRequest(budget=Budget.of(64 << 20))))
    assert tuple(d["ledger"]) == LEDGER_LINES


def test_every_line_has_a_plain_name_and_a_one_sentence_tooltip(qtbot, spec):
    assert tuple(LINE_NAMES) == LEDGER_LINES
    assert len({w.name for w in LINE_NAMES.values()}) == len(LEDGER_LINES)
    for line in LEDGER_LINES:
        tip = line_tooltip(line)
        assert tip.endswith(".") and tip.count(". ") == 0 and "_" not in line_name(line)
    plan = plan_memory(spec, BudgetRequest(budget=Budget.of(64 << 20)))
    table = CompareModel()
    table.set_rows(compare_rows(plan, plan), "a", "b")
    assert table.data(table.index(0, 0), Qt.ItemDataRole.ToolTipRole) == line_tooltip(LEDGER_LINES[0])
    assert table.data(table.index(0, 0), Qt.ItemDataRole.UserRole) == LEDGER_LINES[0]


def test_the_host_ram_bar_has_a_legend_in_the_bars_colours(qtbot, make_window):
    window = make_window()
    window.show()
    legend = window.findChild(MemoryLegend, "memoryLegend")
    assert legend is not None and legend.isVisible()
    assert [(k, label.text()) for k, label in legend.entries.items()] == list(POOL_LEGEND)
    assert {k: legend.swatch_colour(k) for k in MEMORY_COLOURS} == MEMORY_COLOURS
