"""The RAM-budget contract planner (docs/budget-plan.md): peak memory ≤ budget, or why not.

Rule 1: the top ctx is the explicit ctx, else `model.context.ctx_ceiling` (the trained context,
        lowered by a cap; no trained context: the cap, else DEFAULT_CTX). Candidate ctx values are the top and every multiple of CTX_STEP
        below it, so an auto search always reaches CTX_STEP (a top below CTX_STEP is its own
        only candidate). An explicit ctx is the only candidate, ignores ctx_cap, and may exceed
        the trained context (the report says so).
Rule 2: auto ctx, policy `speed` (the default, "speed first above 4096"): the contract's ctx-first search runs
        from the *default cap* DEFAULT_CTX (or the top, when lower) — llama.cpp's `--fit`
        likewise never shrinks context below 4096 before it gives up GPU layers
        (common/common.h `fit_params_min_ctx = 4096`). If that plan pins every layer at
        DEFAULT_CTX, ctx grows past it, up to the top, for as long as every layer stays
        pinned with the head that plan chose (bisection: the cost of "all pinned, this head"
        grows with ctx). Policy `context` is that ctx-first search from the top, unchanged.
Rule 3: head: resident and streamed when untied, resident only when tied, unless the request
        fixes it (streaming a tied head is refused). Ring: the requested depth, then 1 buffer.
Rule 4: per (head, ring): every layer pinned with no ring if that fits, else the ring plus the
        most leading layers whose exact bytes fit.
Rule 5: ranking: higher ctx, then resident head, then more pinned layers, then the requested
        ring depth. The cheapest configuration at a ctx (streamed head if allowed, 1 buffer,
        0 pinned) grows with ctx, so feasibility is monotone and the best ctx is bisected.
Rule 6: feasible → weight_ceiling = budget − mandatory lines. Impossible → the minimum
        configuration (lowest ctx, cheapest head, 1 buffer, 0 pinned) exceeds the budget; with
        `force` that configuration is planned anyway, marked overridden. An unlimited budget:
        top ctx, every layer pinned, the head resident unless the request streams it.
Rule 7: a model missing a fact the ledger needs raises PlanError naming it (`missing_facts`).

A consequence of Rule 5 worth knowing: while streaming, dropping to one buffer always frees
room for at least one more layer (no layer is larger than a ring slot), so the requested
depth shows in a plan only when every layer is pinned — and then no ring is planned at all
(`RingChoice.planned` 0). `all_pinned_budget` is exact even though "every layer pinned" is
not monotone in budget (a streamed head can pin all where a resident one cannot).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, replace
from typing import Callable

from gguf_budget.core.model.context import DEFAULT_CTX, ctx_ceiling
from gguf_budget.core.errors import PlanError
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.plan.ledger import LedgerPrices, MemLedger, missing_facts
from gguf_budget.core.plan.types import (
    CTX_STEP, BudgetRequest, CtxPolicy, CtxReason, HeadMode, MemoryPlan, RingChoice, RingReason,
)


@dataclass(frozen=True)
class Configuration:
    """One point of the search: the knobs a plan fixes."""

    ctx: int
    stream_head: bool
    n_buffers: int
    n_pinned: int


def _top_ctx(model: ModelSpec, request: BudgetRequest) -> int:
    """Rule 1: the explicit ctx, else the one ceiling every auto ctx stops at (`model.context.ctx_ceiling`)."""
    return request.ctx if request.ctx is not None else ctx_ceiling(model.context_length, request.ctx_cap)


def _heads(model: ModelSpec, mode: HeadMode) -> tuple[bool, ...]:
    """Head-streaming choices in ranking order (resident first)."""
    if mode is HeadMode.STREAM and model.tied_embeddings:
        raise PlanError("the output head is tied to token_embd, so it can only be resident")
    if mode is HeadMode.AUTO:
        return (False,) if model.tied_embeddings else (False, True)
    return (mode is HeadMode.STREAM,)


def _n_candidates(low: int, top: int) -> int:
    """Candidates above `low` (a multiple of CTX_STEP, or 0) up to `top`: the steps between, then top."""
    return -(-(top - low) // CTX_STEP)


def _largest(n: int, fits: Callable[[int], bool]) -> int | None:
    """The largest i in [0, n) with fits(i), for a predicate true up to some i and false after (bisection)."""
    i = bisect_left(range(n), True, key=lambda j: not fits(j)) - 1
    return None if i < 0 else i


@dataclass(frozen=True)
class PlanSearch:
    """A model's prices and a request's search space, built once and asked for many budgets."""

    prices: LedgerPrices
    top: int
    explicit: bool
    heads: tuple[bool, ...]
    rings: tuple[int, ...]
    policy: CtxPolicy

    @classmethod
    def of(cls, model: ModelSpec, request: BudgetRequest) -> PlanSearch:
        missing = missing_facts(model)
        if missing:
            raise PlanError(f"cannot plan: the file does not give {', '.join(missing)}")
        heads = _heads(model, request.head_mode)
        rings = (request.n_buffers, 1) if request.n_buffers > 1 else (1,)
        return cls(LedgerPrices.of(model, request.kv_type), _top_ctx(model, request), request.ctx is not None,
                   heads, rings, request.prefer)

    @property
    def search_top(self) -> int:
        """Where the ctx-first search starts: the top, or DEFAULT_CTX under the speed policy."""
        if self.explicit or self.policy is CtxPolicy.CONTEXT:
            return self.top
        return min(self.top, DEFAULT_CTX)

    def ctx_at(self, i: int, top: int | None = None) -> int:
        """The i-th candidate ctx at or below `top` (default: the search's top), lowest first."""
        top = self.search_top if top is None else top
        if self.explicit:
            return top
        return top if i == _n_candidates(0, top) - 1 else CTX_STEP * (i + 1)

    def cheapest(self, ctx: int) -> int:
        """The least any configuration at this ctx costs (cheapest head, 1 buffer, 0 pinned)."""
        return self.prices.fixed(ctx, self.heads[-1]) + self.rings[-1] * self.prices.largest_layer

    @property
    def minimum(self) -> Configuration:
        return Configuration(self.ctx_at(0), self.heads[-1], self.rings[-1], 0)

    def best_ctx(self, budget: int) -> int | None:
        """Bisection for the highest candidate ctx up to the search's top at which anything fits."""
        n = 1 if self.explicit else _n_candidates(0, self.search_top)
        i = _largest(n, lambda j: self.cheapest(self.ctx_at(j)) <= budget)
        return None if i is None else self.ctx_at(i)

    def best_at(self, ctx: int, budget: int) -> Configuration | None:
        """The best-ranked configuration at this ctx, or None when nothing fits."""
        p = self.prices
        for stream in self.heads:
            fixed = p.fixed(ctx, stream)
            if fixed + p.prefix[-1] <= budget:
                return Configuration(ctx, stream, self.rings[0], p.n_layer)
            options = [(p.max_pinned(room), nb == self.rings[0], nb) for nb in self.rings
                       if (room := budget - fixed - nb * p.largest_layer) >= 0]
            if options:
                k, _, nb = max(options)
                return Configuration(ctx, stream, nb, k)
        return None

    def grown(self, c: Configuration, budget: int) -> Configuration:
        """Rule 2: past DEFAULT_CTX, the highest candidate ctx at which every layer stays pinned."""
        low = self.search_top
        if c.ctx != low or c.n_pinned < self.prices.n_layer or low >= self.top:
            return c
        n = _n_candidates(low, self.top)
        all_pinned = self.prices.prefix[-1]

        def ctx(j: int) -> int:
            return self.top if j == n - 1 else low + CTX_STEP * (j + 1)

        j = _largest(n, lambda i: self.prices.fixed(ctx(i), c.stream_head) + all_pinned <= budget)
        return c if j is None else replace(c, ctx=ctx(j))

    def best(self, budget: int) -> Configuration | None:
        ctx = self.best_ctx(budget)
        if ctx is None:
            return None
        choice = self.best_at(ctx, budget)
        return None if choice is None else self.grown(choice, budget)

    def ledger(self, c: Configuration) -> MemLedger:
        return self.prices.ledger(c.ctx, c.stream_head, c.n_buffers, c.n_pinned)

    def all_pinned_budget(self) -> int:
        """The least budget whose plan pins every layer at the top ctx."""
        top, n = self.top, self.prices.n_layer
        costs = sorted(self.prices.fixed(top, s) + self.prices.prefix[-1] for s in self.heads)
        return next(b for b in costs if (c := self.best(b)) is not None and (c.ctx, c.n_pinned) == (top, n))

    def ctx_reason(self, c: Configuration | None) -> CtxReason:
        """Why a chosen configuration's ctx is what it is (None: refused or forced)."""
        if self.explicit:
            return CtxReason.EXPLICIT
        if c is None:
            return CtxReason.MINIMUM
        if c.ctx == self.top:
            return CtxReason.CAP
        if c.ctx > self.search_top:
            return CtxReason.SPEED_GROWN
        if c.ctx == self.search_top and self.search_top < self.top:
            return CtxReason.SPEED_HELD
        return CtxReason.LOWERED

    def ring_choice(self, c: Configuration | None, budget: int | None) -> RingChoice:
        """The requested ring depth against what the plan uses, and why they differ."""
        requested = self.rings[0]
        if c is None:
            return RingChoice(requested, self.rings[-1], RingReason.MINIMUM)
        if c.n_pinned == self.prices.n_layer or budget is None:  # unlimited: every layer is pinned
            return RingChoice(requested, 0, RingReason.ALL_PINNED)
        if c.n_buffers == requested:
            return RingChoice(requested, c.n_buffers, RingReason.AS_REQUESTED)
        room = budget - self.prices.fixed(c.ctx, c.stream_head) - requested * self.prices.largest_layer
        if room < 0:
            return RingChoice(requested, c.n_buffers, RingReason.REQUESTED_DOES_NOT_FIT)
        extra = c.n_pinned - self.prices.max_pinned(room)
        return RingChoice(requested, c.n_buffers, RingReason.ONE_PINS_MORE, extra)


def _plan(search: PlanSearch, model: ModelSpec, request: BudgetRequest) -> MemoryPlan:
    budget = request.budget.limit
    minimum = search.ledger(search.minimum)
    if budget is None:
        choice: Configuration | None = Configuration(search.top, search.heads[0], search.rings[0], model.n_layer)
    else:
        choice = search.best(budget)
    feasible = choice is not None
    overridden = not feasible and request.force
    chosen = choice or search.minimum
    ledger = search.ledger(chosen)
    ceiling = budget - ledger.mandatory if feasible and budget is not None else None
    return MemoryPlan(
        feasible=feasible, overridden=overridden, budget=request.budget,
        ctx=chosen.ctx, ctx_capped=chosen.ctx < search.top, ctx_explicit=search.explicit, ctx_cap=search.top,
        ctx_start=search.search_top, context_length=model.context_length, stream_lm_head=chosen.stream_head,
        tied_head=model.tied_embeddings, n_buffers=chosen.n_buffers, n_pinned=chosen.n_pinned,
        n_layer=model.n_layer, kv_type=request.kv_type, weight_ceiling=ceiling, ledger=ledger,
        minimum_required=minimum.total(), minimum_ledger=minimum, ctx_policy=search.policy,
        ctx_reason=search.ctx_reason(choice), ring=search.ring_choice(choice, budget),
    )


def plan_memory(model: ModelSpec, request: BudgetRequest) -> MemoryPlan:
    """Plan a run of `model` under `request`; pure. Raises PlanError when the model cannot be priced."""
    return _plan(PlanSearch.of(model, request), model, request)


def budget_thresholds(model: ModelSpec, request: BudgetRequest) -> tuple[int, int]:
    """(minimum budget that is feasible, least budget that pins every layer at the top ctx)."""
    search = PlanSearch.of(model, request)
    return search.ledger(search.minimum).total(), search.all_pinned_budget()
