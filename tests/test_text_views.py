"""The words the window and the CLI print, from `core/views` and without Qt, worked out by hand."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from gguf_factory import ArchDesc

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import BudgetRequest, SweepResult, SweepRow, plan_memory
from gguf_budget.core.views.catalogue_view import catalogue_text
from gguf_budget.core.units import signed_bytes
from gguf_budget.core.views.compare_view import model_text
from gguf_budget.core.views.model_summary import SUMMARY_FIELDS, count_text, summary_rows
from gguf_budget.core.views.sweep_view import row_text, summary_text
from gguf_budget.core.views.table import aligned_lines, aligned_text

ROOT = Path(__file__).resolve().parent.parent
MiB = 1 << 20


@pytest.mark.parametrize(("rows", "indent", "lines"), [
    ([("a", "1"), ("long key", "2")], "", ["a         1", "long key  2"]),
    ([("k", "v")], "  ", ["  k  v"]),
    ([("name", "bytes", "size"), ("kv", "12", "12 B")], "", ["name  bytes  size", "kv    12     12 B"]),
    ([("total",), ("a", "b")], "", ["total", "a  b"]),  # a one-cell row sets no width
    ([], "", []),
], ids=["two-columns", "indent", "three-columns", "ragged", "empty"])
def test_aligned_columns_are_as_wide_as_their_widest_cell(rows, indent, lines):
    assert aligned_lines(rows, indent) == lines
    assert aligned_text(rows, indent) == "\n".join(lines)
    assert not any(line.endswith(" ") for line in lines)


@pytest.mark.parametrize(("n", "text"), [
    (0, "0"), (999, "999"), (1000, "1.00 K"), (106_816, "106.82 K"), (1_100_048_384, "1.10 B"),
    (70_553_706_496, "70.55 B"), (1_000_000_000_000, "1.00 T"),
])
def test_parameter_counts_are_decimal(n, text):
    assert count_text(n) == text


@pytest.mark.parametrize(("n", "text"), [(0, "0 B"), (1536, "+1.50 KiB"), (-512, "−512 B")])
def test_signed_bytes(n, text):
    assert signed_bytes(n) == text


def test_the_model_summary_of_the_default_tiny_llama(model):
    # 2 blocks of 39,680 B (38.75 KiB); 106,816 weights: embd and output 64·256 each, output_norm 64,
    # a block 64·64·2 + 64·32·2 (attention) + 3·64·128 (ffn) + 2·64 (norms) = 36,992.
    spec = model(ArchDesc())
    rows = summary_rows(spec)
    assert tuple(rows) == SUMMARY_FIELDS
    assert rows["Parameters"] == "106.82 K" and rows["Layers"] == "2 blocks, largest 38.75 KiB"
    assert rows["Context"] == "2,048 tokens" and rows["Embeddings"] == "separate output table"
    assert rows["Storage"] == "header only — the complete file is 113.41 KiB"


def test_a_hostile_name_is_escaped_and_cut_in_the_summary_and_the_compare_line(model):
    spec = model(ArchDesc(name="evil\x1b[2J" + "A" * 500))
    name = summary_rows(spec)["Name"]
    assert name.startswith("evil\\x1b[2J") and name.endswith("… (+448 chars)")
    assert "\x1b" not in model_text("First", spec, None)


def test_the_compare_line_says_what_the_plan_decided(model):
    spec = model(ArchDesc())
    plan = plan_memory(spec, BudgetRequest(budget=Budget.unlimited()))
    assert model_text("First", spec, None) == "First: tiny-llama · Q8_0 · 111.75 KiB of weights in the file"
    assert model_text("First", spec, plan) == ("First: tiny-llama · Q8_0 · 111.75 KiB of weights in the file — "
                                               "unlimited at ctx 2,048, 2/2 layers pinned, head resident")


def test_the_sweep_hover_and_status_lines():
    rows = (SweepRow(budget=MiB, feasible=False, ctx=128, n_pinned=0, stream_lm_head=True, n_buffers=1, total=25 * MiB,
                     ring_planned=1),
            SweepRow(budget=64 * MiB, feasible=True, ctx=2048, n_pinned=2, stream_lm_head=False, n_buffers=2,
                     total=26 * MiB, ring_planned=0))
    result = SweepResult(rows, first_feasible=64 * MiB, all_pinned=None, n_layer=2, ctx_cap=2048)
    assert row_text(rows[0], 2) == ("budget 1.00 MiB: impossible (minimum configuration); ctx 128; 0/2 pinned; "
                                    "peak 25.00 MiB (26,214,400 B)")
    assert summary_text(result) == ("2 budgets · first feasible: 64.00 MiB (67,108,864 B) · "
                                    "every layer pinned at ctx 2,048: not in this range")


def test_the_catalogue_list_lines_up_its_names():
    lines = catalogue_text().splitlines()
    starts = {line.index("  ") + len(re.match(r"\S+( +)", line).group(1)) for line in lines[:-1]}
    assert len(starts) == 1 and lines[-1].startswith("(each a skeleton")


def _hand_aligned(path: Path) -> list[int]:
    """Lines that pad with a computed width (`:<{width}`) instead of calling the table helper."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.FormattedValue) and n.format_spec is not None
            and any(isinstance(v, ast.FormattedValue) for v in ast.walk(n.format_spec))]


def test_no_view_aligns_a_table_by_hand():
    """One aligned-table helper: no other module pads a column to a width it computed."""
    sources = [p for folder in ("core", "gui") for p in (ROOT / folder).rglob("*.py")]
    found = {str(p.relative_to(ROOT)): lines for p in sources if (lines := _hand_aligned(p))}
    assert found == {}
