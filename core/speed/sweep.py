"""A budget sweep's decode estimates: what each swept plan decodes at, so "pinned count and decode climb" shows.

Rule 1: each feasible row gets the same estimate `plan_speed` gives the plan at that budget
        (its pinned layers, head and ctx; the page cache or the disk by the RAM beside its peak):
        `tok_s` is the decode estimate at the start of a conversation, the position the sweep
        plots (it never falls as the budget grows), `tok_s_full` at a full context.
Rule 2: an infeasible row has no estimate (None), as an impossible plan has none.
Rule 3: the model is priced once; each row then costs a few lookups.
"""

from __future__ import annotations

from dataclasses import replace

from gguf_budget.core.machine.bandwidth import Bandwidths
from gguf_budget.core.model.kv import KVType, kv_price
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.plan.sweep import SweepResult, SweepRow
from gguf_budget.core.speed.estimate import budget_plan_speed
from gguf_budget.core.speed.token_bytes import TokenPrices


def with_speeds(model: ModelSpec, result: SweepResult, kv_type: KVType, bandwidths: Bandwidths,
                host_available: int | None) -> SweepResult:
    """Rules 1–3: the sweep with `tok_s`, `tok_s_full` and `stream_bytes_per_token` filled in."""
    prices, kv = TokenPrices.of(model), kv_price(model, kv_type)

    def row(r: SweepRow) -> SweepRow:
        if not r.feasible:
            return r
        speed = budget_plan_speed(prices, r.n_pinned, r.stream_lm_head, (kv.at(0), kv.at(r.ctx)), r.ctx, r.total,
                                  bandwidths, host_available)
        return replace(r, tok_s=speed.tok_s, tok_s_full=speed.tok_s_full, stream_bytes_per_token=speed.bytes.stream)

    return replace(result, rows=tuple(row(r) for r in result.rows))
