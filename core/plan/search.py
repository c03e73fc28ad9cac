"""The RAM-budget contract planner (seed 000, DESIGN §3.3): peak memory ≤ budget, or why not.

Rule 1: candidate ctx values are the top (the explicit ctx, else min(ctx_cap, context_length))
        and every multiple of CTX_STEP below it, so an auto search always reaches CTX_STEP
        (a top below CTX_STEP is its own only candidate). An explicit ctx is the only candidate,
        ignores ctx_cap, and may exceed the trained context (the report says so).
Rule 2: head: resident and streamed when untied, resident only when tied, unless the request
        fixes it (streaming a tied head is refused). Ring: the requested depth, then 1 buffer.
Rule 3: per (head, ring): every layer pinned with no ring if that fits, else the ring plus the
        most leading layers whose exact bytes fit.
Rule 4: ranking: higher ctx, then resident head, then more pinned layers, then the requested
        ring depth. The cheapest configuration at a ctx (streamed head if allowed, 1 buffer,
        0 pinned) grows with ctx, so feasibility is monotone and the best ctx is bisected.
Rule 5: feasible → weight_ceiling = budget − mandatory lines. Impossible → the minimum
        configuration (lowest ctx, cheapest head, 1 buffer, 0 pinned) exceeds the budget; with
        `force` that configuration is planned anyway, marked overridden. Budget 0 → unlimited:
        top ctx, every layer pinned, the head resident unless the request streams it.
Rule 6: a model missing a fact the ledger needs raises PlanError naming it (`missing_facts`).

A consequence of Rule 4 worth knowing: while streaming, dropping to one buffer always frees
room for at least one more layer (no layer is larger than a ring slot), so the requested
depth shows in a plan only when every layer is pinned (ring 0). `ctx_capped` means the
budget pushed ctx below the top; `all_pinned_budget` is exact even though "every layer
pinned" is not monotone in budget (a streamed head can pin all where a resident one cannot).
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.errors import PlanError
from gguf_budget.core.plan.ledger import LedgerPrices, MemLedger, missing_facts
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.plan.types import BudgetRequest, HeadMode, MemoryPlan

CTX_STEP = 128


@dataclass(frozen=True)
class Configuration:
    """One point of the search: the knobs a plan fixes."""

    ctx: int
    stream_head: bool
    n_buffers: int
    n_pinned: int


def _top_ctx(model: ModelSpec, request: BudgetRequest) -> int:
    if request.ctx is not None:
        return request.ctx
    caps = [c for c in (request.ctx_cap, model.context_length) if c]
    if not caps:
        raise PlanError("the file does not give context_length: choose an explicit ctx or a ctx cap")
    return min(caps)


def _heads(model: ModelSpec, mode: HeadMode) -> tuple[bool, ...]:
    """Head-streaming choices in ranking order (resident first)."""
    if mode is HeadMode.STREAM and model.tied_embeddings:
        raise PlanError("the output head is tied to token_embd, so it can only be resident")
    if mode is HeadMode.AUTO:
        return (False,) if model.tied_embeddings else (False, True)
    return (mode is HeadMode.STREAM,)


@dataclass(frozen=True)
class PlanSearch:
    """A model's prices and a request's search space, built once and asked for many budgets."""

    prices: LedgerPrices
    top: int
    explicit: bool
    heads: tuple[bool, ...]
    rings: tuple[int, ...]

    @classmethod
    def of(cls, model: ModelSpec, request: BudgetRequest) -> PlanSearch:
        missing = missing_facts(model)
        if missing:
            raise PlanError(f"cannot plan: the file does not give {', '.join(missing)}")
        heads = _heads(model, request.head_mode)
        rings = (request.n_buffers, 1) if request.n_buffers > 1 else (1,)
        return cls(LedgerPrices.of(model, request.kv_type), _top_ctx(model, request), request.ctx is not None,
                   heads, rings)

    @property
    def n_candidates(self) -> int:
        return 1 if self.explicit else -(-self.top // CTX_STEP)

    def ctx_at(self, i: int) -> int:
        """The i-th candidate ctx, lowest first."""
        return self.top if i == self.n_candidates - 1 else CTX_STEP * (i + 1)

    def cheapest(self, ctx: int) -> int:
        """The least any configuration at this ctx costs (cheapest head, 1 buffer, 0 pinned)."""
        return self.prices.fixed(ctx, self.heads[-1]) + self.rings[-1] * self.prices.largest_layer

    @property
    def minimum(self) -> Configuration:
        return Configuration(self.ctx_at(0), self.heads[-1], self.rings[-1], 0)

    def best_ctx(self, budget: int) -> int | None:
        """Bisection for the highest candidate ctx at which anything fits."""
        if self.cheapest(self.ctx_at(0)) > budget:
            return None
        lo, hi = 0, self.n_candidates - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.cheapest(self.ctx_at(mid)) <= budget:
                lo = mid
            else:
                hi = mid - 1
        return self.ctx_at(lo)

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

    def best(self, budget: int) -> Configuration | None:
        ctx = self.best_ctx(budget)
        return None if ctx is None else self.best_at(ctx, budget)

    def ledger(self, c: Configuration) -> MemLedger:
        return self.prices.ledger(c.ctx, c.stream_head, c.n_buffers, c.n_pinned)

    def all_pinned_budget(self) -> int:
        """The least budget whose plan pins every layer at the top ctx."""
        top, n = self.top, self.prices.n_layer
        costs = sorted(self.prices.fixed(top, s) + self.prices.prefix[-1] for s in self.heads)
        return next(b for b in costs if (c := self.best(b)) is not None and (c.ctx, c.n_pinned) == (top, n))


def _plan(search: PlanSearch, model: ModelSpec, request: BudgetRequest) -> MemoryPlan:
    budget = request.budget_bytes
    minimum = search.ledger(search.minimum)
    if request.unlimited:
        choice: Configuration | None = Configuration(search.top, search.heads[0], search.rings[0], model.n_layer)
    else:
        choice = search.best(budget)
    feasible = choice is not None
    overridden = not feasible and request.force
    chosen = choice or search.minimum
    ledger = search.ledger(chosen)
    ceiling = budget - ledger.mandatory if feasible and not request.unlimited else None
    return MemoryPlan(
        feasible=feasible, overridden=overridden, unlimited=request.unlimited, budget_bytes=budget,
        ctx=chosen.ctx, ctx_capped=chosen.ctx < search.top, ctx_explicit=search.explicit, ctx_cap=search.top,
        context_length=model.context_length, stream_lm_head=chosen.stream_head,
        tied_head=model.tied_embeddings, n_buffers=chosen.n_buffers, n_pinned=chosen.n_pinned,
        n_layer=model.n_layer, kv_type=request.kv_type, weight_ceiling=ceiling, ledger=ledger,
        minimum_required=minimum.total(), minimum_ledger=minimum,
    )


def plan_memory(model: ModelSpec, request: BudgetRequest) -> MemoryPlan:
    """Plan a run of `model` under `request`; pure. Raises PlanError when the model cannot be priced."""
    return _plan(PlanSearch.of(model, request), model, request)


def budget_thresholds(model: ModelSpec, request: BudgetRequest) -> tuple[int, int]:
    """(minimum budget that is feasible, least budget that pins every layer at the top ctx)."""
    search = PlanSearch.of(model, request)
    return search.ledger(search.minimum).total(), search.all_pinned_budget()
