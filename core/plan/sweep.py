"""Plan one model under many budgets: where the contract first holds, and where every layer is pinned.

Rule 1: the model is priced once (`PlanSearch`); each budget then costs one bisection.
Rule 2: every budget is a real one (≥ 1 byte): 0 means unlimited, which is not a point on a
        sweep. `force` is ignored: a sweep reports where the contract holds.
Rule 3: an infeasible row shows the minimum configuration (its ctx, head, ring and total).
Rule 4: `first_feasible` is the first swept budget whose plan is feasible; `all_pinned` the first
        whose plan pins every layer at the top ctx (the same meaning as `budget_thresholds`).
Rule 5: `budget_range("128M:2G:64M")` lists FROM, FROM+STEP, … up to TO inclusive, at most
        MAX_SWEEP_ROWS budgets, so a typo cannot ask for billions of rows.
Rule 6: the automatic range (the window's sweep, and `sweep` without `--budgets`) runs from
        SWEEP_BELOW × the minimum feasible budget to SWEEP_ABOVE × the all-pinned budget
        (`budget_thresholds`), widened to hold a given budget (the window's, so its mark is always
        on the chart). FROM, TO and STEP are round numbers of MiB: STEP is 1, 2 or 5 × 10^k
        (`units.round_step`, DEFAULT_SWEEP_POINTS to 2.5× as many budgets), FROM and TO are
        multiples of it (FROM a round number below the range when no multiple is).
Rule 7: a row's ring is what was planned (0: every layer pinned, no ring), beside the requested
        depth; `tok_s` and `stream_bytes_per_token` are filled in by `core.speed.sweep` (None
        until then, and for an infeasible row).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Sequence

from gguf_budget.core.errors import RequestError
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.plan.types import BudgetRequest
from gguf_budget.core.plan.search import PlanSearch, budget_thresholds
from gguf_budget.core.ranges import BUDGET
from gguf_budget.core.units import human_bytes, parse_size, round_step, significant

MAX_SWEEP_ROWS = 100_000
MIB = 1 << 20
SWEEP_BELOW, SWEEP_ABOVE = 0.75, 1.25
DEFAULT_SWEEP_POINTS = 256


@dataclass(frozen=True, kw_only=True)
class SweepRow:
    """The plan at one budget, reduced to what a table or chart shows."""

    budget: int
    feasible: bool
    ctx: int
    n_pinned: int
    stream_lm_head: bool
    n_buffers: int
    total: int
    ring_planned: int
    tok_s: float | None = None
    tok_s_full: float | None = None
    stream_bytes_per_token: int | None = None


@dataclass(frozen=True)
class SweepResult:
    rows: tuple[SweepRow, ...]
    first_feasible: int | None
    all_pinned: int | None
    n_layer: int
    ctx_cap: int
    n_buffers_requested: int = 2


def budget_range(text: str) -> tuple[int, ...]:
    """'128M:2G:64M' → (128 MiB, 192 MiB, …, 2 GiB). Raises RequestError with a one-line reason."""
    parts = text.split(":")
    if len(parts) != 3:
        raise RequestError(f"budgets must be FROM:TO:STEP (e.g. 128M:2G:64M), got {text!r}")
    start, stop, step = (parse_size(p) for p in parts)
    if start < 1 or step < 1:
        raise RequestError(f"FROM and STEP must be at least 1 byte in {text!r} (0 means unlimited)")
    if stop < start:
        raise RequestError(f"TO is below FROM in {text!r}")
    BUDGET.check(stop)
    count = (stop - start) // step + 1
    if count > MAX_SWEEP_ROWS:
        raise RequestError(f"{text!r} gives {count} budgets; at most {MAX_SWEEP_ROWS} (use a larger STEP)")
    return tuple(range(start, stop + 1, step))


def default_range(low: int, high: int, points: int = DEFAULT_SWEEP_POINTS, budget: int | None = None) -> str:
    """FROM:TO:STEP in whole MiB around the two thresholds and `budget` (Rule 6)."""
    lo = min(low, budget or low) * SWEEP_BELOW / MIB
    hi = max(high, budget or high) * SWEEP_ABOVE / MIB
    step = round_step((hi - lo) / points)
    start = int(lo // step) * step or round_step(lo)
    stop = max(start + step, math.ceil(hi / step) * step)
    return f"{start}M:{stop}M:{step}M"


def automatic_range(model: ModelSpec, request: BudgetRequest, budget: int | None = None) -> str:
    """The range a sweep of `model` under `request` gets when no one typed one (Rule 6): with `budget`
    (the window's), one that holds it."""
    return default_range(*budget_thresholds(model, request), budget=budget)


def _row(search: PlanSearch, budget: int) -> SweepRow:
    choice = search.best(budget)
    c = choice or search.minimum
    return SweepRow(budget=budget, feasible=choice is not None, ctx=c.ctx, n_pinned=c.n_pinned,
                    stream_lm_head=c.stream_head, n_buffers=c.n_buffers, total=search.ledger(c).total(),
                    ring_planned=search.ring_choice(choice, budget).planned)


def sweep_budgets(model: ModelSpec, budgets: Sequence[int], request: BudgetRequest) -> SweepResult:
    """Plan `model` at each budget with the request's other knobs; raises RequestError on a budget < 1."""
    for b in budgets:
        if isinstance(b, bool) or not isinstance(b, int) or b < 1:
            raise RequestError(f"sweep budgets must be whole bytes ≥ 1, got {b!r}")
    search = PlanSearch.of(model, replace(request, force=False))
    rows = tuple(_row(search, b) for b in budgets)
    n = search.prices.n_layer
    return SweepResult(
        rows=rows,
        first_feasible=next((r.budget for r in rows if r.feasible), None),
        all_pinned=next((r.budget for r in rows if r.feasible and (r.ctx, r.n_pinned) == (search.top, n)), None),
        n_layer=n,
        ctx_cap=search.top,
        n_buffers_requested=request.n_buffers,
    )


def _row_dict(r: SweepRow) -> dict[str, Any]:
    return {"budget": r.budget, "feasible": r.feasible, "ctx": r.ctx, "n_pinned": r.n_pinned,
            "stream_lm_head": r.stream_lm_head, "n_buffers": r.n_buffers, "total": r.total,
            "ring_planned": r.ring_planned, "tok_s": r.tok_s, "tok_s_full_context": r.tok_s_full,
            "stream_bytes_per_token": r.stream_bytes_per_token}


def sweep_dict(result: SweepResult) -> dict[str, Any]:
    """The `sweep --json` payload."""
    return {"rows": [_row_dict(r) for r in result.rows], "first_feasible": result.first_feasible,
            "all_pinned": result.all_pinned, "n_layer": result.n_layer, "ctx_cap": result.ctx_cap,
            "n_buffers_requested": result.n_buffers_requested}


def _threshold(label: str, budget: int | None) -> str:
    where = "not within this range" if budget is None else f"{human_bytes(budget)} ({budget:,} B)"
    return f"{label}: {where}"


def _ring(r: SweepRow, requested: int) -> str:
    return str(r.ring_planned) if r.ring_planned == requested else f"{r.ring_planned}*"


def sweep_text(result: SweepResult) -> str:
    """A table of the rows (ring as planned; decode estimate where known), then the two thresholds."""
    head = (f"{'budget':>12}  {'plan':<10}  {'ctx':>8}  {'pinned':>9}  {'head':<8}  {'ring':>4}  {'total':>12}  "
            f"{'tok/s≈':>7}")
    lines = [head]
    for r in result.rows:
        pinned = f"{r.n_pinned}/{result.n_layer}"
        tok_s = "—" if r.tok_s is None else significant(r.tok_s)
        lines.append(f"{human_bytes(r.budget):>12}  {'feasible' if r.feasible else 'impossible':<10}  {r.ctx:>8}  "
                     f"{pinned:>9}  {'streamed' if r.stream_lm_head else 'resident':<8}  "
                     f"{_ring(r, result.n_buffers_requested):>4}  {human_bytes(r.total):>12}  {tok_s:>7}")
    lines.append(_threshold("First feasible", result.first_feasible))
    lines.append(_threshold(f"Every layer pinned at ctx {result.ctx_cap}", result.all_pinned))
    lines.append(f"Ring: the depth planned; * where it is not the {result.n_buffers_requested} requested "
                 "(1 buffer pins more layers; 0 when every layer is pinned)")
    if any(r.tok_s is not None for r in result.rows):
        lines.append("tok/s≈: the decode estimate at the start of a conversation (calibrated, not measured)")
    return "\n".join(lines)
