"""Exports of plans and sweeps: a Markdown report and a CSV table (the JSON is `plan_dict`/`sweep_dict`).

Rule 1: every number comes from `plan_dict` / the sweep rows, so Markdown, CSV, JSON and the
        text report cannot disagree; exact bytes are always shown, `human_bytes` beside them.
Rule 2: untrusted strings (the model's name, its path) pass through `safe_text` and have
        Markdown's table and emphasis characters escaped.
Rule 3: the CSV has one header row and exactly one row per swept budget, in sweep order;
        booleans are `true`/`false`, sizes are whole bytes, an unknown value (the decode
        estimate of an infeasible row) is an empty cell.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from gguf_budget.core.plan.ledger import LEDGER_LINES
from gguf_budget.core.views.ledger_names import TOTAL_NAME, line_name
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.views.plan_report import plan_dict
from gguf_budget.core.plan.types import MemoryPlan
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.plan.sweep import SweepResult
from gguf_budget.core.units import human_bytes

EXPORT_FORMATS = ("text", "md", "json")
CSV_COLUMNS = ("budget", "feasible", "ctx", "n_pinned", "n_layer", "stream_lm_head", "n_buffers", "total",
               "ring_planned", "tok_s", "stream_bytes_per_token", "tok_s_full_context")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|#])")


def md_escape(value: object) -> str:
    """Untrusted text made safe for one Markdown table cell."""
    return _MD_SPECIAL.sub(r"\\\1", safe_text(value, 200))


def _size(n: int | None) -> str:
    return "—" if n is None else f"{human_bytes(n)} ({n:,} B)"


def _verdict(d: dict[str, Any]) -> str:
    if d["unlimited"]:
        return "unlimited budget: everything resident"
    if d["overridden"]:
        return f"forced: {human_bytes(d['over_budget_by'])} over budget"
    return "feasible" if d["feasible"] else "impossible"


def _summary(d: dict[str, Any], model: ModelSpec) -> list[tuple[str, str]]:
    ctx = f"{d['ctx']} tokens" + (" (as requested)" if d["ctx_explicit"] else f" (cap {d['ctx_cap']})")
    return [
        ("Model", f"{md_escape(model.name or '(unnamed)')} ({md_escape(model.architecture)}, {model.n_layer} blocks)"),
        ("File", md_escape(model.path)),
        ("Budget", "unlimited" if d["unlimited"] else _size(d["budget"])),
        ("Verdict", _verdict(d)),
        ("Context", ctx),
        ("KV cache type", d["kv_type"]),
        ("LM head", "streamed" if d["stream_lm_head"] else "resident"),
        ("Ring buffers", str(d["n_buffers"])),
        ("Pinned layers", f"{d['n_pinned']} of {d['n_layer']}"),
        ("Estimated peak", _size(d["total"])),
        ("Minimum required", _size(d["minimum_required"])),
        ("Weight ceiling", _size(d["weight_ceiling"])),
    ]


def _ledger_table(ledger: dict[str, int], total: int) -> list[str]:
    rows = [f"| {line_name(name)} | {ledger[name]:,} | {human_bytes(ledger[name])} |" for name in LEDGER_LINES]
    return ["| line | bytes | size |", "|---|---:|---:|", *rows,
            f"| **{TOTAL_NAME}** | **{total:,}** | **{human_bytes(total)}** |"]


EXPORT_SCALE = 2
"""A chart picture is drawn at twice the screen's pixels: sharp when zoomed, on a slide or a high-DPI screen."""


def chart_title(plan: MemoryPlan, model: ModelSpec) -> str:
    """The line above an exported ledger chart: what model, budget and ctx it is of, and the peak it reaches."""
    name = safe_text(model.name or model.architecture, 80)
    return f"{name} — Budget plan under {plan.budget}: peak {human_bytes(plan.total)} at ctx {plan.ctx:,}"


def plan_markdown(plan: MemoryPlan, model: ModelSpec) -> str:
    """The plan as a Markdown document: summary, the ledger table, and the full report."""
    d = plan_dict(plan)
    summary = [f"| {k} | {v} |" for k, v in _summary(d, model)]
    return "\n".join([
        f"# Memory plan: {md_escape(model.name or model.architecture)}", "",
        "| | |", "|---|---|", *summary, "",
        "## Ledger (peak memory, bytes)", "", *_ledger_table(d["ledger"], d["total"]), "",
        "## Report", "", "```text", d["report"], "```", "",
    ])


def _csv_cell(value: object) -> object:
    if value is None:
        return ""
    return str(value).lower() if isinstance(value, bool) else value


def sweep_csv(result: SweepResult) -> str:
    """The sweep as CSV: a header, then one row per budget."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in result.rows:
        row = (r.budget, r.feasible, r.ctx, r.n_pinned, result.n_layer, r.stream_lm_head, r.n_buffers, r.total,
               r.ring_planned, r.tok_s, r.stream_bytes_per_token, r.tok_s_full)
        writer.writerow([_csv_cell(v) for v in row])
    return out.getvalue()
