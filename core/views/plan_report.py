"""What a plan says to people and programs: the report text and the `plan --json` payload.

Rule 1: the text and the JSON show the same numbers; text in `human_bytes`, JSON in exact bytes.
Rule 2: a feasible or unlimited plan gets an **Execution Plan**; a refused one a **RAM budget
        impossible** report (requested vs minimum required, broken down line by line); a
        forced one says by how much it exceeds the budget, then its Execution Plan.
Rule 3: the report speaks of knobs (ctx, budget, force), never of CLI flags: the GUI shows it too.
Rule 4: ledger lines go by their plain names (`ledger_names`), the same in every report.
"""

from __future__ import annotations

from typing import Any

from gguf_budget.core.model.context import DEFAULT_CTX
from gguf_budget.core.plan.ledger import LEDGER_LINES, WEIGHT_LINES, MemLedger
from gguf_budget.core.plan.types import (
    CtxReason, MemoryPlan, RingChoice, RingReason,
)
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.ledger_names import TOTAL_NAME, line_name
from gguf_budget.core.views.table import aligned_lines


INDENT = "  "


def _ledger_rows(ledger: MemLedger) -> list[str]:
    rows = [(line_name(name), f"{human_bytes(v):>12}  {v:>16,} B") for name, v in ledger.items()]
    total = ledger.total()
    return aligned_lines(rows + [(TOTAL_NAME, f"{human_bytes(total):>12}  {total:>16,} B")], INDENT)


def _ctx_why(p: MemoryPlan) -> str:
    """The Context line's reason, per `CtxReason` (the search decides, this only words it)."""
    return {
        CtxReason.EXPLICIT: "as requested",
        CtxReason.MINIMUM: "the minimum configuration",
        CtxReason.CAP: "the cap, not lowered",
        CtxReason.LOWERED: f"lowered from {p.ctx_start} to fit the budget",
        CtxReason.SPEED_HELD: f"speed first: held at {DEFAULT_CTX} of the {p.ctx_cap} cap, so the budget "
                              "pins layers rather than context; prefer context for more",
        CtxReason.SPEED_GROWN: f"speed first: grown past {DEFAULT_CTX} while every layer stays pinned; "
                               f"{p.next_ctx} would stream a layer",
    }[p.ctx_reason]


def _ctx_line(p: MemoryPlan) -> str:
    trained = p.context_length
    beyond = f"; beyond the trained context of {trained}" if trained and p.ctx > trained else ""
    unknown = f"; the file gives no trained context, so auto stops at {p.ctx_cap}" \
        if trained is None and not p.ctx_explicit else ""
    return f"{p.ctx} tokens ({_ctx_why(p)}{beyond}{unknown})"


def _head_line(p: MemoryPlan) -> str:
    mode = "streamed through a window" if p.stream_lm_head else "resident"
    tied = " (tied to token_embd)" if p.tied_head else ""
    return f"{mode}, {human_bytes(p.ledger.lm_head)}{tied}"


RING_WHY: dict[RingReason, str] = {
    RingReason.ALL_PINNED: "every layer is pinned, so nothing streams through a ring",
    RingReason.ONE_PINS_MORE: "1 buffer pins {extra} more layer(s)",
    RingReason.REQUESTED_DOES_NOT_FIT: "{requested} buffers do not fit the budget at this ctx",
    RingReason.MINIMUM: "the minimum configuration uses 1 buffer",
}


def ring_text(r: RingChoice) -> str:
    """'requested N, planned M — why' (or just the depth when they agree)."""
    if r.reason is RingReason.AS_REQUESTED:
        return f"{r.planned} (as requested)"
    why = RING_WHY[r.reason].format(extra=r.extra_pinned, requested=r.requested)
    return f"requested {r.requested}, planned {r.planned}: {why}"


def _ring_line(p: MemoryPlan) -> str:
    if p.ring.planned == 0:
        return f"unused — {ring_text(p.ring)}"
    return f"{p.n_buffers} buffer(s) × {human_bytes(p.ring_buffer)} = {human_bytes(p.ledger.ring)}; {ring_text(p.ring)}"


def _ceiling_line(p: MemoryPlan) -> str:
    if p.weight_ceiling is None:
        return "none (unlimited)" if p.unlimited else "none (over budget)"
    names = ", ".join(line_name(line).lower() for line in WEIGHT_LINES)
    return (f"{human_bytes(p.weight_ceiling)} left for weights after the fixed lines; {names} "
            f"spend {human_bytes(p.ledger.weights)} of it")


def _margin(p: MemoryPlan) -> str:
    if p.unlimited:
        return ""
    if p.overridden:
        return f" ({human_bytes(p.over_budget_by)} over budget)"
    return f" ({human_bytes(p.headroom)} under budget)"


def execution_plan_text(p: MemoryPlan) -> str:
    if p.unlimited:
        head = "Execution Plan — unlimited budget: everything resident, the planner was not consulted"
    elif p.overridden:
        head = f"Execution Plan — forced: no contract, the {p.budget} budget is exceeded"
    else:
        head = f"Execution Plan — contract: peak memory ≤ {p.budget}"
    rows = [
        ("Mandatory memory", f"{human_bytes(p.ledger.mandatory)} (base, scratch, logits, attention, residual, KV)"),
        ("Estimated peak", human_bytes(p.total) + _margin(p)),
        ("Context", _ctx_line(p)),
        (line_name("kv"), f"{human_bytes(p.ledger.kv)} ({p.kv_type}, priced at the full ctx)"),
        (line_name("lm_head"), _head_line(p)),
        (line_name("ring"), _ring_line(p)),
        (line_name("pinned"), f"{p.n_pinned} of {p.n_layer} ({human_bytes(p.ledger.pinned)})"),
        ("Weight ceiling", _ceiling_line(p)),
    ]
    return "\n".join([head, *aligned_lines(rows, INDENT), "", "Ledger", *_ledger_rows(p.ledger)])


def _minimum_breakdown(p: MemoryPlan) -> list[str]:
    m = p.minimum_ledger
    rows = [(line_name(name), v) for name, v in m.items()] + [("Minimum required", m.total())]
    head = "streamed" if p.stream_lm_head else "resident"
    return [f"Minimum configuration: ctx {p.ctx}, head {head}, {p.n_buffers}-buffer ring, 0 pinned layers",
            *aligned_lines([(k, f"{human_bytes(v):>12}") for k, v in rows], INDENT)]


def _remedies(p: MemoryPlan) -> str:
    steps = [f"Raise the budget to at least {human_bytes(p.minimum_required)}"]
    if p.ctx_explicit and p.ctx > 1:
        steps.append("choose a smaller ctx")
    if not (p.stream_lm_head or p.tied_head):
        steps.append("let the head stream")
    steps.append("or force the plan to run over budget")
    return ", ".join(steps) + "."


def impossible_text(p: MemoryPlan) -> str:
    short = -(p.headroom or 0)
    return "\n".join([
        f"RAM budget impossible: requested {p.budget}, minimum required "
        f"{human_bytes(p.minimum_required)} ({human_bytes(short)} short)",
        *_minimum_breakdown(p),
        _remedies(p),
    ])


def forced_text(p: MemoryPlan) -> str:
    return "\n".join([
        f"RAM budget overridden (forced): the minimum configuration needs {human_bytes(p.total)}, "
        f"{human_bytes(p.over_budget_by)} over the {p.budget} budget",
        *_minimum_breakdown(p), "", execution_plan_text(p),
    ])


def plan_text(p: MemoryPlan) -> str:
    """The report, rendered when someone reads it (the planner never renders: a slider tick needs no text)."""
    if p.overridden:
        return forced_text(p)
    return execution_plan_text(p) if p.feasible else impossible_text(p)


def _ledger_dict(ledger: MemLedger) -> dict[str, int]:
    return {name: getattr(ledger, name) for name in LEDGER_LINES}


def plan_dict(p: MemoryPlan) -> dict[str, Any]:
    """The `plan --json` payload: exact bytes, the eleven ledger lines, and the report text."""
    return {
        "budget": p.budget.cli_bytes,
        "feasible": p.feasible,
        "overridden": p.overridden,
        "unlimited": p.unlimited,
        "ctx": p.ctx,
        "ctx_capped": p.ctx_capped,
        "ctx_explicit": p.ctx_explicit,
        "ctx_cap": p.ctx_cap,
        "ctx_policy": p.ctx_policy.value,
        "ctx_reason": p.ctx_reason.value,
        "stream_lm_head": p.stream_lm_head,
        "n_buffers": p.n_buffers,
        "ring": {"requested": p.ring.requested, "planned": p.ring.planned, "reason": p.ring.reason.value,
                 "text": ring_text(p.ring)},
        "n_pinned": p.n_pinned,
        "n_layer": p.n_layer,
        "kv_type": p.kv_type,
        "weight_ceiling": p.weight_ceiling,
        "ledger": _ledger_dict(p.ledger),
        "total": p.total,
        "minimum_required": p.minimum_required,
        "minimum_ledger": _ledger_dict(p.minimum_ledger),
        "over_budget_by": p.over_budget_by,
        "report": plan_text(p),
    }
