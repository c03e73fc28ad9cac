"""The budget slider's span: one per model and machine, so nothing else a person does moves it.

Rule 1: low = SPAN_BELOW × the least budget any request could need (ctx 1, the cheapest KV
        type, one buffer, the head streamed when it is untied): below the minimum feasible
        budget of every ctx and knob, rounded down to a whole MiB.
Rule 2: high = the larger of SPAN_ABOVE × the all-pinned budget of the default request (auto
        ctx up to the one ctx ceiling, f16 KV) and the judged machine's total RAM (probed or hypothetical), rounded up to a
        whole MiB: realistic budgets can be dragged to, not only typed.
Rule 3: the span depends on the model and the machine's total RAM only: ctx, the knobs and the
        budget never move it. Drawing a new span never moves the budget either (a budget off
        the span is clamped on the slider only).
Rule 4: the step is a round number of MiB (1, 2 or 5 × 10^k, `units.round_step`), about
        1/STEP_COUNT of the span or of the all-pinned budget, whichever is smaller: a small
        model on a big machine still moves by model-sized steps on the arrow keys (a 300 MiB
        model on a 64 GiB machine: 1 MiB, not 100).
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.model.kv import KVType, row_bytes
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.plan.search import budget_thresholds
from gguf_budget.core.plan.types import BudgetRequest, HeadMode
from gguf_budget.core.units import round_step

MiB = 1 << 20
SPAN_BELOW, SPAN_ABOVE = 0.75, 1.25
STEP_COUNT = 500
CHEAPEST_KV = min(KVType, key=lambda t: row_bytes(t, 1 << 10))


@dataclass(frozen=True)
class Span:
    """A slider's range and step, in the control's unit (bytes or tokens)."""

    low: int
    high: int
    step: int

    def holds(self, value: int) -> bool:
        return self.low <= value <= self.high


def least_request() -> BudgetRequest:
    """Rule 1: the request whose minimum configuration is the cheapest there is."""
    return BudgetRequest(ctx=1, n_buffers=1, head_mode=HeadMode.AUTO, kv_type=CHEAPEST_KV)


def widest_request() -> BudgetRequest:
    """Rule 2: the default request (auto ctx up to `model.context.ctx_ceiling`)."""
    return BudgetRequest()


def budget_span(model: ModelSpec, machine_total: int | None) -> Span:
    """Rules 1–4; raises a BudgetError when the model cannot be planned at all."""
    least = budget_thresholds(model, least_request())[0]
    all_pinned = budget_thresholds(model, widest_request())[1]
    low = max(1, int(least * SPAN_BELOW) // MiB)
    high = max(low + 1, -(-int(all_pinned * SPAN_ABOVE) // MiB), -(-(machine_total or 0) // MiB))
    scale = min(high - low, all_pinned / MiB)
    return Span(low * MiB, high * MiB, round_step(scale / STEP_COUNT) * MiB)


def machine_total(machine: HardwareSnapshot | None) -> int | None:
    """The judged machine's total RAM (None until one is known)."""
    return None if machine is None else machine.host_total
