"""`derive(state)`: everything the explorer screen shows, from what the person chose. Pure.

Rule 1: the budget plan is `plan_memory(model, state.request())`; a request the planner cannot
        price (a `BudgetError`: a missing fact, no context length with auto ctx and no cap, knobs
        out of range) is the view's `error`, in the CLI's words, and the screen shows no plan.
Rule 2: the full load is `estimate_fit` at the plan's ctx (no plan: the explicit ctx, else the
        model's context length) on `state.machine`, with the largest ctx that still fits its
        GPU layers up to the cap (`largest_fitting_ctx`); no machine yet, no full load.
Rule 3: speeds: the plan's with the machine's available RAM deciding page cache or disk, the
        full load's when it fits (`core.speed.estimate`).
Rule 4: the budget slider's span is the model's and the machine's alone (`budget_span`: from
        below any request's minimum to at least the machine's total RAM), so ctx, knobs and
        budget never rescale it; the ctx slider spans CTX_STEP to the largest of the trained
        context, the cap and the asked ctx (at most `ranges.CONTEXT`), in CTX_STEP steps (an asked ctx off the steps is
        still planned exactly). A new model's budget starts halfway between its thresholds.
Rule 5: the report (rendered when read) is the plan's report followed by the speed estimate's
        block, as the CLI prints it.
Rule 6: `derive(state, previous)` equals `derive(state)`; it only reuses the parts of `previous`
        whose inputs are the same (the same model object and equal other inputs): the model's
        token prices, the thresholds (they ignore budget and force), the full load (it ignores
        the budget; `Kept` holds the last KEPT asked ctxs' full loads, so a ctx met again while nothing else
        moved is judged once) and, when only ctx moved and the GPU layers stayed, the
        largest ctx that fits. A budget tick then costs a plan and a speed estimate, plus one
        fit when ctx moved, instead of the max-ctx search's ten fits. The budget span is reused
        while the model object and the machine's total RAM stay. The full load's cheapest fix is reused with the
        full load; each context tier while nothing but the asked ctx moved (a tier's figures are its own ctx's:
        only the chosen and largest marks move, `ctx_tiers` Rule 4), so a tick that moves the largest ctx judges one
        new tier at most.
Rule 7: the headline's two answers and its goal line (`headline` Rules 5–7) and the context tiers (`ctx_tiers`) are
        the view's, so the window draws them and the CLI's `fit --tiers` prints the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gguf_budget.core.model.context import ctx_slider_top
from gguf_budget.core.explorer.budget_span import Span, budget_span, machine_total
from gguf_budget.core.explorer.dock_inputs import DockInputs, dock_inputs
from gguf_budget.core.explorer.full_load import FullLoad, full_load
from gguf_budget.core.fit.ctx.auto_ctx import largest_cap
from gguf_budget.core.fit.types import FitEstimate, FitRequest
from gguf_budget.core.explorer.captions import ctx_label, measured_row, pinned_caption, ring_note
from gguf_budget.core.explorer.ctx_tiers import CtxTier, marked, tier_asks, tier_figures
from gguf_budget.core.explorer.goal import goal_line
from gguf_budget.core.explorer.headline import (
    Headline, differ_line, full_load_line, full_load_name, load_answer, plan_answer, plan_headline,
    refused_answer,
)
from gguf_budget.core.explorer.load_fix import Fix, cheapest_fix
from gguf_budget.core.machine.usable import usable_ram
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.machine.bandwidth import Bandwidths
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.plan.search import budget_thresholds, plan_memory
from gguf_budget.core.errors import BudgetError
from gguf_budget.core.plan.types import CTX_STEP, BudgetRequest, MemoryPlan
from gguf_budget.core.ranges import BUDGET
from gguf_budget.core.speed.estimate import SpeedEstimate, plan_speed
from gguf_budget.core.speed.token_bytes import TokenPrices
from gguf_budget.core.views.plan_view import BannerState
from gguf_budget.core.views.plan_report import plan_text
from gguf_budget.core.views.speed_view import plan_report_with_speed

MiB = 1 << 20
KEPT = 64
"""Rule 6: full loads and context tiers kept by asked ctx, the newest."""


@dataclass(frozen=True, kw_only=True)
class FullLoadKey:
    """Everything the full load depends on (Rule 6): the fit request holds every knob of the fit itself."""

    model: ModelSpec
    machine: HardwareSnapshot | None
    request: FitRequest
    ctx_cap: int | None
    bandwidths: Bandwidths
    evidence: str | None
    prompt_tokens: int

    @classmethod
    def of(cls, model: ModelSpec, state: ExplorerState) -> FullLoadKey:
        return cls(model=model, machine=state.machine, request=state.fit_request(state.ctx), ctx_cap=state.ctx_cap,
                   bandwidths=state.bandwidths, evidence=state.evidence, prompt_tokens=state.prompt_tokens)

    def same(self, other: FullLoadKey | None) -> bool:
        return other is not None and other.model is self.model and other == self


@dataclass(frozen=True)
class Kept:
    """Rule 6: what was judged under one full-load key (`key`, its ctx None) at the asked ctxs met, newest last: each
    full load with why it could not be estimated and its cheapest fix, and each context tier unmarked."""

    key: FullLoadKey
    loads: tuple[tuple[int | None, FullLoad | None, str | None, Fix | None], ...] = ()
    tiers: tuple[tuple[int, CtxTier], ...] = ()


@dataclass(frozen=True, kw_only=True)
class ExplorerView:
    """What the screen shows for one state."""

    state: ExplorerState
    plan: MemoryPlan | None
    error: str | None
    thresholds: tuple[int, int] | None
    budget_span: Span | None
    ctx_span: Span | None
    usable_ram: int | None
    full_load: FullLoad | None
    plan_speed: SpeedEstimate | None
    headline: Headline
    pinned_caption: str
    ctx_label: str
    ring_note: str
    prices: TokenPrices | None = None
    threshold_key: BudgetRequest | None = None
    full_load_key: FullLoadKey | None = None
    full_load_error: str | None = None
    docks: DockInputs | None = None
    """Every dock's inputs for this state, built once (`dock_inputs` Rule 5)."""
    fix: Fix | None = None
    tiers: tuple[CtxTier, ...] = ()
    kept: Kept | None = field(default=None, compare=False, repr=False)
    """Rule 6: what this view's key judged at other asked ctxs, for the next view; no part of what is shown."""

    @property
    def fit(self) -> FitEstimate | None:
        return None if self.full_load is None else self.full_load.fit

    @property
    def report(self) -> str:
        """Rule 5, rendered when read (a slider tick renders no text); a refused request's reason otherwise."""
        if self.plan is None:
            return self.error or ""
        return plan_report_with_speed(plan_text(self.plan), self.plan_speed)

    @property
    def measured_row(self) -> str | None:
        """What a real run gave, beside the estimates (`captions.measured_row`), rendered when read."""
        return measured_row(self.state)


def initial_budget(thresholds: tuple[int, int]) -> int:
    """Rule 4: halfway between the thresholds, on a whole MiB (a plan that streams some layers), at most the
    largest budget there is (`ranges.BUDGET`: a model that needs more is shown as impossible)."""
    return min(max((thresholds[0] + thresholds[1]) // 2 // MiB * MiB, MiB), BUDGET.high)


def ctx_span(model: ModelSpec, state: ExplorerState) -> Span:
    """Rule 4: `model.context.ctx_slider_top`."""
    top = ctx_slider_top(model.context_length, state.ctx_cap, state.ctx)
    return Span(CTX_STEP, max(top, CTX_STEP), CTX_STEP)


@dataclass(frozen=True)
class _Reuse:
    """The parts of a previous view that a new state may take over (Rule 6)."""

    previous: ExplorerView | None
    model: ModelSpec

    def prices(self) -> TokenPrices:
        p = self.previous
        if p is not None and p.prices is not None and p.state.model is self.model:
            return p.prices
        return TokenPrices.of(self.model)

    def thresholds(self, request: BudgetRequest) -> tuple[BudgetRequest, tuple[int, int]]:
        key = replace(request, budget=Budget.unlimited(), force=False)
        p = self.previous
        if p is not None and p.thresholds is not None and p.state.model is self.model and p.threshold_key == key:
            return key, p.thresholds
        return key, budget_thresholds(self.model, key)

    def budget_span(self, state: ExplorerState) -> Span | None:
        """Rule 4 (None: a model the planner cannot price at all), reused while model and machine total stay."""
        p = self.previous
        total = machine_total(state.machine)
        if p is not None and p.state.model is self.model and machine_total(p.state.machine) == total:
            return p.budget_span
        try:
            return budget_span(self.model, total)
        except BudgetError:
            return None

    def judged(self, state: ExplorerState,
               prices: TokenPrices) -> tuple[FullLoadKey | None, FullLoad | None, str | None, Fix | None, Kept | None]:
        """(its key, the full load or None, why it could not be estimated, its cheapest fix (`load_fix`), what is kept
        beside them): taken over where judged before under the same key but its asked ctx (Rule 6)."""
        try:
            key = FullLoadKey.of(self.model, state)
        except BudgetError as e:  # a split or reserve the fit refuses: said on the full-load line
            return None, None, str(e), None, None
        kept = self._kept(key)
        ctx = key.request.ctx
        for asked, load, error, fix in kept.loads:
            if asked == ctx:
                return key, load, error, fix, kept
        try:
            load, error = full_load(self.model, state, prices, self._known_max_ctx(key)), None
        except BudgetError as e:
            load, error = None, str(e)
        fix = None if load is None else cheapest_fix(self.model, state, load, prices)
        return key, load, error, fix, replace(kept, loads=(*kept.loads, (ctx, load, error, fix))[-KEPT:])

    def tiers(self, kept: Kept | None, state: ExplorerState,
              load: FullLoad | None) -> tuple[tuple[CtxTier, ...], Kept | None]:
        """The context tiers beside the full load (Rule 7): a tier asked before under the same key but its ctx is
        taken over, only re-marked (Rule 6; `ctx_tiers` Rule 4); with what is kept after them."""
        if load is None or kept is None:
            return (), kept
        known = dict(kept.tiers)
        figures = tier_figures(self.model, state, tier_asks(self.model, load.max_ctx), known)
        newest = {**{ctx: t for ctx, t in known.items() if ctx not in figures}, **figures}
        return marked(figures, load), replace(kept, tiers=tuple(newest.items())[-KEPT:])

    def _kept(self, key: FullLoadKey) -> Kept:
        """Rule 6: the previous view's judgements while nothing but the asked ctx moved, else none."""
        any_ctx = replace(key, request=replace(key.request, ctx=None))
        p = self.previous
        if p is not None and p.kept is not None and any_ctx.same(p.kept.key):
            return p.kept
        return Kept(any_ctx)

    def _known_max_ctx(self, key: FullLoadKey) -> tuple[int, int, int | None] | None:
        """The previous full load's (GPU layers, the cap its largest ctx was searched to, that largest ctx) when only
        an asked ctx moved (`full_load` Rule 2)."""
        p = self.previous
        if p is None or p.full_load is None or p.full_load_key is None or p.full_load_key.model is not self.model:
            return None
        previous = p.full_load_key
        before, now = previous.request.ctx, key.request.ctx
        if before is None or now is None or replace(previous, request=replace(previous.request, ctx=now)) != key:
            return None
        return p.full_load.fit.gpu_layers, largest_cap(p.full_load.choice), p.full_load.max_ctx


def _line(load: FullLoad | None, error: str | None, state: ExplorerState) -> str:
    if error is not None:
        return f"{full_load_name(state.machine)}: cannot be estimated — {error}"
    return full_load_line(load, state.machine)


def _goal_line(state: ExplorerState, key: FullLoadKey | None) -> str:
    """Rule 7's goal line: held while this full load reads what the goal's answer set (`goal` Rule 3)."""
    applied = state.goal
    if applied is None:
        return ""
    made, model = applied.settings, applied.settings.model
    held = key is not None and model is not None and key.same(FullLoadKey.of(model, made))
    return goal_line(applied, held)


def _empty(state: ExplorerState, previous: ExplorerView | None) -> ExplorerView:
    headline = Headline(state=BannerState.EMPTY, text="No model loaded", full_load="")
    return ExplorerView(state=state, plan=None, error=None, thresholds=None, budget_span=None, ctx_span=None,
                        usable_ram=None, full_load=None, plan_speed=None, headline=headline, pinned_caption="—",
                        ctx_label="auto", ring_note="", docks=dock_inputs(state, _docks(previous)))


def _docks(previous: ExplorerView | None) -> DockInputs | None:
    return None if previous is None else previous.docks


def _refused(reuse: _Reuse, state: ExplorerState, message: str) -> ExplorerView:
    model = reuse.model
    prices = reuse.prices()
    key, load, load_error, fix, kept = reuse.judged(state, prices)
    line = _line(load, load_error, state)
    tiers, kept = reuse.tiers(kept, state, load)
    text = f"CANNOT PLAN — {message}"
    headline = Headline(state=BannerState.ERROR, text=text, full_load=line, plan=refused_answer(text),
                        load=load_answer(load, fix, line), goal=_goal_line(state, key))
    ctx = "auto" if state.ctx is None else f"{state.ctx:,} tokens (as asked)"
    return ExplorerView(state=state, plan=None, error=message, thresholds=None, budget_span=reuse.budget_span(state),
                        ctx_span=ctx_span(model, state), usable_ram=usable_ram(state.machine, state.reserves.host),
                        full_load=load, plan_speed=None, headline=headline, pinned_caption="—", ctx_label=ctx,
                        ring_note="", prices=prices, full_load_key=key, full_load_error=load_error, fix=fix,
                        tiers=tiers, kept=kept, docks=dock_inputs(state, _docks(reuse.previous)))


def derive(state: ExplorerState, previous: ExplorerView | None = None) -> ExplorerView:
    """Rules 1–6."""
    model = state.model
    if model is None:
        return _empty(state, previous)
    reuse = _Reuse(previous, model)
    try:
        request = state.request()
        plan = plan_memory(model, request)
        threshold_key, thresholds = reuse.thresholds(request)
    except BudgetError as e:
        return _refused(reuse, state, str(e))
    prices = reuse.prices()
    host_available = None if state.machine is None else state.machine.host_available
    speed = plan_speed(prices, plan, state.bandwidths, host_available, state.prompt_tokens)
    key, load, load_error, fix, kept = reuse.judged(state, prices)
    usable = usable_ram(state.machine, state.reserves.host)
    banner, text = plan_headline(plan, speed, state.slow_below_tok_s, usable)
    line = _line(load, load_error, state)
    tiers, kept = reuse.tiers(kept, state, load)
    answers = (plan_answer(plan, speed, banner is BannerState.SLOW, usable, text), load_answer(load, fix, line))
    headline = Headline(state=banner, text=text, full_load=line, plan=answers[0], load=answers[1],
                        differ=differ_line(plan, load, *answers), goal=_goal_line(state, key))
    return ExplorerView(state=state, plan=plan, error=None, thresholds=thresholds, budget_span=reuse.budget_span(state),
                        ctx_span=ctx_span(model, state), usable_ram=usable,
                        full_load=load, plan_speed=speed, headline=headline,
                        pinned_caption=pinned_caption(plan, speed), ctx_label=ctx_label(plan), ring_note=ring_note(plan),
                        prices=prices, threshold_key=threshold_key, full_load_key=key, full_load_error=load_error,
                        fix=fix, tiers=tiers, kept=kept, docks=dock_inputs(state, _docks(previous)))
