"""What the sweep view says: its status line, and one swept budget as the chart's hover shows it."""

from __future__ import annotations

from gguf_budget.core.plan.sweep import SweepResult, SweepRow
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.speed_view import START_WORDS, approx_tok_s


def row_text(row: SweepRow, n_layer: int) -> str:
    """One row as the hover shows it."""
    verdict = "feasible" if row.feasible else "impossible (minimum configuration)"
    decode = "" if row.tok_s is None else f"; decode {approx_tok_s(row.tok_s)} {START_WORDS}"
    if row.tok_s is not None and row.tok_s_full is not None and row.tok_s_full != row.tok_s:
        decode += f", {approx_tok_s(row.tok_s_full)} at a full {row.ctx:,}-token context (estimates)"
    elif row.tok_s is not None:
        decode += " (estimate)"
    return (f"budget {human_bytes(row.budget)}: {verdict}; ctx {row.ctx:,}; {row.n_pinned}/{n_layer} pinned; "
            f"peak {human_bytes(row.total)} ({row.total:,} B){decode}")


def summary_text(result: SweepResult) -> str:
    """The status line under a finished sweep: how many budgets, and where the two thresholds fell."""
    def where(budget: int | None) -> str:
        return "not in this range" if budget is None else f"{human_bytes(budget)} ({budget:,} B)"

    return (f"{len(result.rows)} budgets · first feasible: {where(result.first_feasible)} · "
            f"every layer pinned at ctx {result.ctx_cap:,}: {where(result.all_pinned)}")
