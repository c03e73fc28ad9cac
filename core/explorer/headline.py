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
Rule 5: the headline's first words are two answers of equal weight (`Answer`), each in plain words first — what
        runs where, at which context, how fast — then its tier (fits / tight / won't: `fit.load_tier` for the full
        load; for the plan, won't when impossible or forced past its budget, tight under 10 % headroom or above
        this machine's usable RAM) and, when not fits, its cheapest fix and what it costs (`load_fix` for the full
        load, priced by `full_load`; the plan's from its own minimum). Jargon (the banner's and the full-load line's
        texts) stays in `detail`, with the glossary entry that explains it.
Rule 6: when the two answers' tiers differ, one line says why: what the Budget plan does that the full load cannot
        (stream layers from disk under a budget), or what the full load has that the plan does not (all usable
        RAM and the GPUs, not the budget set).
Rule 7: under the two answers, the goal last applied from the Goal control and whether the settings on screen are
        still its answer (`goal.goal_line`); empty when no goal was applied.
Rule 4: the full-load line gives the fit's verdict at its ctx and why that ctx (`fit.ctx.auto_ctx`:
        as asked, the trained context, or shrunk to fit as llama.cpp's default fit does), its
        speed when it fits, and — when the ctx was asked, or sits at the floor with fewer GPU
        layers — the largest ctx that fits with the same GPU layers (else it is the ctx itself).
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.explorer.ctx_tiers import rate_text
from gguf_budget.core.explorer.full_load import FullLoad
from gguf_budget.core.explorer.load_fix import Fix, FixKnob, cheapest_fix
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.speed.token_bytes import TokenPrices
from gguf_budget.core.fit.ctx.auto_ctx import FitCtxReason
from gguf_budget.core.fit.load_tier import TIGHT_HEADROOM, LoadTier, TierJudgement, load_tier
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
PLAN_TITLE = "Budget plan — a runtime that streams layers under a RAM budget"
LOAD_TITLE = "llama.cpp full load"


@dataclass(frozen=True, kw_only=True)
class Answer:
    """One runtime's answer (Rule 5): a title, plain words, its tier and why, the cheapest fix, the jargon."""

    title: str
    plain: str
    tier: LoadTier | None
    why: str
    fix: str
    flags: str
    detail: str
    glossary: str


@dataclass(frozen=True, kw_only=True)
class Headline:
    """The banner (`state`, `text`), the full-load line under it, and both as answers in plain words (Rules 5–6)."""

    state: BannerState
    text: str
    full_load: str
    plan: Answer | None = None
    load: Answer | None = None
    differ: str = ""
    goal: str = ""


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


def ctx_words(ctx: int) -> str:
    """A context as a person says it: '32k' on whole thousands of 1,024, else the exact count."""
    return f"{ctx // 1024}k" if ctx % 1024 == 0 else f"{ctx:,}-token"


def exact_size(n: int) -> str:
    """A size readable and exact: '16.47 GiB (17,688,006,656 B)'."""
    return f"{human_bytes(n)} ({n:,} B)"


def plan_flags(plan: MemoryPlan) -> str:
    """The plan's runtime flags with readable exact sizes."""
    limit = plan.budget.limit
    size = "unlimited (0)" if limit is None else exact_size(limit)
    return f"--ram-budget {size} --ctx {plan.ctx}"


def _plan_tier(plan: MemoryPlan, usable: int | None) -> tuple[LoadTier, str, str]:
    """Rule 5 for the plan: (tier, why, fix)."""
    limit, total = plan.budget.limit, plan.total
    if plan.outcome is PlanOutcome.IMPOSSIBLE or plan.outcome is PlanOutcome.OVERRIDDEN:
        need = plan.minimum_required
        more = need - (limit or 0)
        return (LoadTier.WONT, f"won't: needs at least {human_bytes(need)}",
                f"cheapest fix: a budget of {human_bytes(need)} — costs {human_bytes(more)} more RAM")
    if limit is not None and usable is not None and limit > usable:
        return (LoadTier.TIGHT, f"tight: the budget is above this machine's usable RAM ({human_bytes(usable)})",
                f"cheapest fix: a budget of {human_bytes(usable)} — costs more layers streamed, slower decode")
    if limit is not None and limit - total < TIGHT_HEADROOM * limit:
        room = int(total / (1 - TIGHT_HEADROOM)) + 1
        return (LoadTier.TIGHT, f"tight: {human_bytes(limit - total)} left of the budget (under "
                                f"{TIGHT_HEADROOM:.0%} headroom)",
                f"cheapest fix: a budget of {human_bytes(room)} — costs {human_bytes(room - limit)} more RAM")
    return LoadTier.FITS, "fits", ""


def _plan_plain(plan: MemoryPlan, speed: SpeedEstimate | None, slow: bool) -> str:
    ctx, budget = ctx_words(plan.ctx), human_bytes(plan.budget.limit) if plan.budget.limit else "no budget"
    rate = "" if speed is None else f", {rate_text(speed.tok_s)}" + (" (slow)" if slow else "")
    if plan.outcome is PlanOutcome.IMPOSSIBLE:
        return f"Won't run in {budget} at {ctx} context: it needs at least {human_bytes(plan.minimum_required)}"
    if plan.outcome is PlanOutcome.OVERRIDDEN:
        return f"Forced past its budget: needs {human_bytes(plan.total)}, {human_bytes(plan.over_budget_by)} over"
    if plan.n_pinned >= plan.n_layer:
        return f"Runs with all {plan.n_layer} layers in {budget} of RAM at {ctx} context{rate}"
    return (f"Runs in {budget} of RAM at {ctx} context, keeping {plan.n_pinned} of {plan.n_layer} layers and "
            f"streaming the rest from disk each token{rate}")


def plan_answer(plan: MemoryPlan, speed: SpeedEstimate | None, slow: bool, usable: int | None, detail: str) -> Answer:
    """Rule 5 for the Budget plan."""
    tier, why, fix = _plan_tier(plan, usable)
    return Answer(title=PLAN_TITLE, plain=_plan_plain(plan, speed, slow), tier=tier, why=why, fix=fix,
                  flags=plan_flags(plan), detail=detail, glossary="Budget plan")


def _load_plain(load: FullLoad) -> str:
    fit, ctx = load.fit, ctx_words(load.ctx)
    rate = "" if load.speed is None else f", {rate_text(load.speed.tok_s)}"
    if fit.verdict is FitVerdict.FITS_GPU:
        return f"Runs fully on the GPU at {ctx} context{rate}"
    if fit.verdict is FitVerdict.FITS_SPLIT:
        return f"Runs with {fit.offloaded_blocks} of {fit.n_layer} layers on the GPU at {ctx} context{rate}"
    if fit.verdict is FitVerdict.CPU_ONLY:
        return f"Runs on the CPU alone, in RAM, at {ctx} context{rate}"
    if fit.verdict is FitVerdict.DOES_NOT_FIT:
        short = ", ".join(f"{name} short by {human_bytes(b)}" for name, b in fit.shortfall.items())
        return f"Does not fit at {ctx} context: {short}"
    return "Cannot be judged: " + "; ".join(fit.unknowns)


def load_answer(load: FullLoad | None, fix: Fix | None, detail: str) -> Answer:
    """Rule 5 for the full load (no load: the probe is pending or the fit refused the request; said in `detail`)."""
    if load is None:
        return Answer(title=LOAD_TITLE, plain=detail.split(": ", 1)[-1], tier=None, why="", fix="", flags="",
                      detail=detail, glossary="Full load")
    judged = load_tier(load.fit)
    return Answer(title=LOAD_TITLE, plain=_load_plain(load), tier=None if judged is None else judged.tier,
                  why="" if judged is None else judged.why, fix=fix_text(judged, fix), flags="",
                  detail=detail, glossary="Full load")


def fix_text(judged: TierJudgement | None, fix: Fix | None) -> str:
    """The fix in words; for a load no single change rescues, that it was looked for ('' when it fits)."""
    if fix is not None:
        return fix.text
    if judged is None or judged.tier is LoadTier.FITS:
        return ""
    return f"no single change fixes it on this machine ({', '.join(k.value for k in FixKnob)} each tried)"


def differ_line(plan: MemoryPlan | None, load: FullLoad | None, a: Answer | None, b: Answer | None) -> str:
    """Rule 6: one line when the tiers differ ('' when they agree or one is unknown)."""
    if plan is None or load is None or a is None or b is None or a.tier is None or b.tier is None or a.tier == b.tier:
        return ""
    order = (LoadTier.FITS, LoadTier.TIGHT, LoadTier.WONT)
    if order.index(a.tier) < order.index(b.tier):
        streamed = plan.n_layer - plan.n_pinned
        how = (f"streams {streamed} of {plan.n_layer} layers from disk for every token" if streamed
               else "holds only what its budget allows")
        return (f"Why they differ: the Budget plan {how}, so it needs only its {human_bytes(plan.total)}; "
                f"llama.cpp's full load holds every weight and the KV cache at once ({b.why}).")
    budget = human_bytes(plan.budget.limit) if plan.budget.limit else "no"
    return (f"Why they differ: the Budget plan must stay under the {budget} budget you set ({a.why}); "
            f"llama.cpp's full load may use all of this machine's usable RAM and its GPUs.")


def _judged_fix(model: ModelSpec, state: ExplorerState, load: FullLoad) -> tuple[TierJudgement | None, Fix | None]:
    return load_tier(load.fit), cheapest_fix(model, state, load, TokenPrices.of(model))


def tier_lines(model: ModelSpec, state: ExplorerState, load: FullLoad) -> list[str]:
    """`fit`'s text: the tier and its cheapest fix, as the window's full-load answer says them."""
    judged, fix = _judged_fix(model, state, load)
    if judged is None:
        return []
    fixed = fix_text(judged, fix)
    return [f"Tier                   {judged.why}"] + ([f"Fix                    {fixed}"] if fixed else [])


def fix_dict(model: ModelSpec, state: ExplorerState, load: FullLoad) -> dict[str, object] | None:
    """`fit --json`'s `fix`: the cheapest fix's knob, change, cost and tier reached (None: fits, or none helps)."""
    _, fix = _judged_fix(model, state, load)
    if fix is None:
        return None
    return {"knob": fix.knob.value, "change": fix.change, "cost": fix.cost, "reaches": fix.reaches.value,
            "ctx": fix.load.ctx, "verdict": fix.load.fit.verdict.value}


def refused_answer(text: str) -> Answer:
    """The Budget plan's answer when the planner refused to price the model: the reason, no tier."""
    reason = text.removeprefix("CANNOT PLAN — ")
    return Answer(title=PLAN_TITLE, plain=f"Cannot plan: {reason}", tier=None, why="",
                  fix="", flags="", detail=text, glossary="Budget plan")
