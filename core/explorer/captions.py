"""The short texts beside the controls: the pinned strip's caption, the ctx label, the ring knob's note.

Rule 1: the pinned caption says how many layers are pinned, how many bytes each token
        streams and from where, and the decode estimate at both ends of a conversation (labelled
        as one; the banner and the report say what it is calibrated on).
Rule 2: the ctx label says whether ctx was asked for or chosen, and by which policy; a ctx
        beyond the trained context says so.
Rule 3: the ring note is empty when the planned depth is the requested one; otherwise it is
        the report's "requested N, planned M: why".
Rule 4: the measured row is what a real run gave (`state.measured`), with the log's timings beside
        the estimates at the run's own settings; a log the estimate cannot price (another model)
        leaves the row alone. None before a run. The log's comparison (`evidence.compare`, with the
        log parser: ~15 ms of imports) is imported with the first run shown, not with the window.
"""

from __future__ import annotations

from gguf_budget.core.errors import BudgetError
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.plan.types import CtxPolicy, MemoryPlan, PlanOutcome, RingReason
from gguf_budget.core.speed.estimate import SpeedEstimate
from gguf_budget.core.views.plan_report import ring_text
from gguf_budget.core.views.speed_view import decode_brief, streamed_text

POLICY_WORDS = {CtxPolicy.SPEED: "speed first", CtxPolicy.CONTEXT: "context first"}


def pinned_caption(plan: MemoryPlan, speed: SpeedEstimate | None) -> str:
    """Rule 1."""
    count = f"{plan.n_pinned} / {plan.n_layer} layers pinned"
    if plan.outcome is PlanOutcome.IMPOSSIBLE or speed is None:
        return f"{count} — no plan fits the budget"
    return f"{count} — {streamed_text(speed)}; {decode_brief(speed)}"


def ctx_label(plan: MemoryPlan) -> str:
    """Rule 2: '11,904 tokens (auto, speed first)', '100,000 tokens (beyond the trained 8,192)'."""
    how = "as asked" if plan.ctx_explicit else f"auto, {POLICY_WORDS[plan.ctx_policy]}"
    trained = plan.context_length
    beyond = f"; beyond the trained {trained:,}" if trained and plan.ctx > trained else ""
    return f"{plan.ctx:,} tokens ({how}{beyond})"


def ring_note(plan: MemoryPlan) -> str:
    """Rule 3."""
    return "" if plan.ring.reason is RingReason.AS_REQUESTED else ring_text(plan.ring)


def measured_row(state: ExplorerState) -> str | None:
    """Rule 4."""
    run, model = state.measured, state.model
    if run is None:
        return None
    beside = ""
    if run.log is not None and model is not None:
        from gguf_budget.core.evidence.compare import compare
        from gguf_budget.core.views.evidence_report import speed_beside

        try:
            beside = speed_beside(compare(run.log, model, state.bandwidths))
        except BudgetError:  # a log of another model, or one the estimate cannot price: the row stands alone
            beside = ""
    return run.summary + (f" — {beside}" if beside else "")
