"""One honest headline for two runtimes: the budget plan's banner, and a line for the full load.

Rule 1: the two runtimes are named the same way everywhere: BUDGET_PLAN (a
        layer-streaming runtime under a RAM budget, docs/budget-plan.md) and FULL_LOAD (llama.cpp's placement on
        the machine). Each text says which one it is about, so they never read as a contradiction.
Rule 2: the banner keeps the plan's verdict (`MemoryPlan.outcome`), with one more state:
        SLOW when a feasible plan's decode estimate at the start of a conversation is under the
        threshold, whether or not it streams weights; its text says why: the bytes each token
        streams and from where, or, with every layer pinned, the bytes each token reads at the
        RAM bandwidth — then the estimate and the threshold.
Rule 3: a budget above this machine's usable RAM (available − host reserve) is said on the
        banner; the plan's contract does not know the machine, so it is a note, not a verdict.
Rule 4: the full-load line gives the fit's verdict at its ctx and why that ctx (`fit.auto_ctx`:
        as asked, the trained context, or shrunk to fit as llama.cpp's default fit does), its
        speed when it fits, and — when the ctx was asked, or sits at the floor with fewer GPU
        layers — the largest ctx that fits with the same GPU layers (else it is the ctx itself).
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.explorer.full_load import FullLoad
from gguf_budget.core.fit.auto_ctx import FitCtxReason
from gguf_budget.core.fit.types import FitEstimate, FitVerdict
from gguf_budget.core.machine.snapshot import HardwareSnapshot, SnapshotSource
from gguf_budget.core.plan.types import MemoryPlan, PlanOutcome
from gguf_budget.core.speed.estimate import SpeedEstimate
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.fit_report import ctx_choice_text, verdict_text
from gguf_budget.core.views.plan_view import BannerState, plan_banner
from gguf_budget.core.views.speed_view import decode_text, streamed_text

BUDGET_PLAN = "Budget plan (layer-streaming runtime)"
FULL_LOAD = "Full load (llama.cpp placement on {where})"


@dataclass(frozen=True)
class Headline:
    """The banner (`state`, `text`) and the full-load line under it."""

    state: BannerState
    text: str
    full_load: str


def is_slow(plan: MemoryPlan, speed: SpeedEstimate | None, slow_below_tok_s: float) -> bool:
    """Rule 2: feasible, and decodes under the threshold from the first token, pinned or not."""
    return plan.outcome is PlanOutcome.FEASIBLE and speed is not None and speed.tok_s < slow_below_tok_s


def slow_reason(speed: SpeedEstimate) -> str:
    """Rule 2's why: streaming, or the RAM bandwidth."""
    if speed.bytes.stream:
        return streamed_text(speed)
    return f"each token reads {human_bytes(speed.bytes.total)} from RAM at {human_bytes(speed.ram.bytes_per_s)}/s"


def _plan_text(plan: MemoryPlan, speed: SpeedEstimate | None, slow: bool, slow_below_tok_s: float) -> str:
    if slow and speed is not None:
        return (f"FEASIBLE — SLOW: fits under the {plan.budget} budget (peak "
                f"{human_bytes(plan.total)} at ctx {plan.ctx:,}), but {slow_reason(speed)}: {decode_text(speed)}, "
                f"under the {slow_below_tok_s:g} tok/s the banner calls slow")
    text = plan_banner(plan).text
    return text if speed is None else f"{text}; {decode_text(speed)}"


def over_usable_note(plan: MemoryPlan, usable: int | None) -> str:
    limit = plan.budget.limit
    if usable is None or limit is None or limit <= usable:
        return ""
    return f" · the budget exceeds this machine's usable RAM ({human_bytes(usable)})"


def plan_headline(plan: MemoryPlan, speed: SpeedEstimate | None, slow_below_tok_s: float,
                  usable: int | None) -> tuple[BannerState, str]:
    """Rules 1–3: the banner's state and text."""
    slow = is_slow(plan, speed, slow_below_tok_s)
    state = BannerState.SLOW if slow else BannerState(plan.outcome)
    return state, f"{BUDGET_PLAN}: {_plan_text(plan, speed, slow, slow_below_tok_s)}{over_usable_note(plan, usable)}"


def full_load_name(machine: HardwareSnapshot | None) -> str:
    hypothetical = machine is not None and machine.source is SnapshotSource.HYPOTHETICAL
    return FULL_LOAD.format(where="the hypothetical machine" if hypothetical else "this machine")


def max_ctx_text(fit: FitEstimate, max_ctx: int | None) -> str:
    """Rule 4's largest ctx in words (the CLI's fit, the side panel and the full-load line say it so)."""
    if max_ctx is not None:
        return f"{max_ctx:,} tokens with {fit.gpu_layers} GPU layers (multiples of 256, as llama.cpp pads)"
    if fit.verdict is FitVerdict.UNKNOWN:
        return "unknown"
    return "none: not even 256 tokens fit with these GPU layers"


def full_load_line(load: FullLoad | None, machine: HardwareSnapshot | None) -> str:
    """Rule 4."""
    name = full_load_name(machine)
    if load is None:
        return f"{name}: waiting for the machine probe"
    fit = load.fit
    parts = [f"{verdict_text(fit)} at {ctx_choice_text(load.choice)}"]
    if load.speed is not None:
        parts.append(decode_text(load.speed))
    if fit.verdict is not FitVerdict.UNKNOWN and load.choice.reason in (FitCtxReason.ASKED, FitCtxReason.FLOOR):
        parts.append("largest ctx that fits: " + ("none" if load.max_ctx is None else f"{load.max_ctx:,}"))
    return f"{name}: " + " · ".join(parts)
