"""What a plan says at a glance: the banner's state and line, the pinned count, the streaming cost.

The window shows these strings as they are; keeping them here keeps the GUI free of
byte arithmetic and lets them be tested without Qt.

Rule 1: the banner's state is the plan's outcome (`MemoryPlan.outcome`: unlimited,
        overridden, feasible or impossible), or "slow" for a feasible plan the headline finds
        slow (`explorer.headline`); the window adds "error" (the planner refused to price the
        model) and "empty" (no model yet). `BannerState` lists all seven, once.
Rule 2: feasible says the estimated peak and the headroom left under the budget; impossible
        says requested vs minimum required and the biggest lines of the minimum
        configuration; overridden says by how much the budget is exceeded.
Rule 3: streamed per token = the exact bytes of the layers not pinned, plus the head's (`speed.token_bytes`
        `TokenPrices.streamed_file_bytes`, the one answer) when the head streams: what every token reads again.
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.plan.ledger import MemLedger
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.plan.types import MemoryPlan, PlanOutcome
from gguf_budget.core.speed.token_bytes import TokenPrices
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.ledger_names import line_name
from gguf_budget.core.vocab import TextEnum

BIGGEST_LINES = 3


class BannerState(TextEnum):
    """Every state the verdict banner shows: a plan's four outcomes and SLOW, then the window's two."""

    FEASIBLE = PlanOutcome.FEASIBLE.value
    SLOW = "slow"
    """Feasible, but it streams weights and its decode estimate is under the threshold (`headline` Rule 2)."""
    IMPOSSIBLE = PlanOutcome.IMPOSSIBLE.value
    OVERRIDDEN = PlanOutcome.OVERRIDDEN.value
    UNLIMITED = PlanOutcome.UNLIMITED.value
    ERROR = "error"
    """The planner refused to price the model (a fact it needs is missing)."""
    EMPTY = "empty"
    """No model loaded yet."""


@dataclass(frozen=True)
class PlanBanner:
    """The banner's state (one of the plan outcomes) and its one line of text."""

    state: BannerState
    text: str


def biggest_lines(ledger: MemLedger, n: int = BIGGEST_LINES) -> tuple[tuple[str, int], ...]:
    """The n largest non-zero ledger lines, largest first (ledger order breaks ties)."""
    ranked = sorted((item for item in ledger.items() if item[1] > 0), key=lambda item: -item[1])
    return tuple(ranked[:n])


def plan_banner(plan: MemoryPlan) -> PlanBanner:
    outcome = plan.outcome
    peak = human_bytes(plan.total)
    if outcome is PlanOutcome.UNLIMITED:
        text = f"UNLIMITED — no budget: everything resident, estimated peak {peak} at ctx {plan.ctx:,}"
    elif outcome is PlanOutcome.OVERRIDDEN:
        text = (f"OVERRIDDEN — forced: the minimum configuration needs {peak}, "
                f"{human_bytes(plan.over_budget_by)} over the {plan.budget} budget")
    elif outcome is PlanOutcome.FEASIBLE:
        text = (f"FEASIBLE — estimated peak {peak}, headroom {human_bytes(plan.headroom)} "
                f"under the {plan.budget} budget at ctx {plan.ctx:,}")
    else:
        lines = ", ".join(f"{line_name(name)} {human_bytes(n)}" for name, n in biggest_lines(plan.minimum_ledger))
        text = (f"IMPOSSIBLE — requested {plan.budget}, minimum required "
                f"{human_bytes(plan.minimum_required)}; biggest lines: {lines}")
    return PlanBanner(BannerState(outcome), text)


def pinned_text(model: ModelSpec, plan: MemoryPlan) -> str:
    """'k / L layers pinned', and what streaming the rest costs per token."""
    count = f"{plan.n_pinned} / {plan.n_layer} layers pinned"
    if plan.outcome is PlanOutcome.IMPOSSIBLE:
        return f"{count} — no plan fits the budget"
    streamed = TokenPrices.of(model).streamed_file_bytes(plan.n_pinned, plan.stream_lm_head)
    if streamed == 0:
        return f"{count} — nothing streams: each token reads weights from RAM only"
    return f"{count} — each token streams {human_bytes(streamed)} of weights from disk"
