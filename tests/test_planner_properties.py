"""Planner properties over random real GGUF models, budgets and requests.

`reference_plan` is the brute-force walk kept as the spec: it prices every ledger line from the
tensor directory and the docs/budget-plan.md table (not through the planner's code), then tries every
candidate ctx, head, ring depth and pinned count and keeps the best-ranked one that fits.
The models are every family `arch_strategies` draws: dense, sliding window, MoE, MLA, pure
recurrent and hybrid layers, with or without an "other" global tensor.
"""

from __future__ import annotations

import itertools
from collections import defaultdict

import pytest
from arch_strategies import arch_descs
from gguf.constants import GGML_QUANT_SIZES
from gguf_factory import ArchDesc, write_gguf
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import BudgetRequest, ModelSpec, budget_thresholds, load_model, plan_memory
from gguf_budget.core.model.kv import KV_TYPES

BASE = 24 * 1024 * 1024
F32 = 4


@st.composite
def requests(draw, model: ModelSpec) -> BudgetRequest:
    modes = ("auto", "resident") if model.tied_embeddings else ("auto", "resident", "stream")
    return BudgetRequest(
        ctx=draw(st.none() | st.none() | st.integers(1, 4000)),
        ctx_cap=draw(st.none() | st.integers(1, 4000)),
        n_buffers=draw(st.integers(1, 3)),
        head_mode=draw(st.sampled_from(modes)),
        kv_type=draw(st.sampled_from(tuple(KV_TYPES))),
        force=draw(st.booleans()),
    )


@pytest.fixture(scope="module")
def write(tmp_path_factory):
    folder = tmp_path_factory.mktemp("planner-models")
    counter = itertools.count()

    def make(desc: ArchDesc) -> ModelSpec:
        return load_model(write_gguf(folder / f"m{next(counter)}.gguf", desc, "header_only")[0])

    return make


def budgets_around(model: ModelSpec, request: BudgetRequest) -> st.SearchStrategy[int]:
    """Budgets anywhere up to twice the all-pinned threshold, and right at both thresholds."""
    lo, hi = budget_thresholds(model, request)
    edges = [b for b in (lo - 1, lo, lo + 1, hi - 1, hi) if b >= 1]
    return st.integers(1, 2 * hi) | st.integers(max(lo - 200_000, 1), hi) | st.sampled_from(edges)


# ---- the reference: docs/budget-plan.md priced from the tensor directory, every candidate walked ----

def _row(kv_type: str, n: int) -> int:
    block, size = GGML_QUANT_SIZES[KV_TYPES[kv_type]]
    return -(-n // block) * size


class Reference:
    def __init__(self, model: ModelSpec, request: BudgetRequest):
        self.m, self.r = model, request
        self.layers = [0] * model.n_layer
        self.globals: dict[str, int] = defaultdict(int)
        for t in model.tensors:
            if t.layer is None:
                self.globals[t.name.split(".")[0]] += t.nbytes
            else:
                self.layers[t.layer] += t.nbytes
        self.tied = "output" not in self.globals
        self.head = self.globals["token_embd" if self.tied else "output"]

    def recurrent_state(self) -> int:
        """One SSM layer's F32 state: conv (d_conv − 1)·(d_inner + 2·groups·d_state) + scan d_state·d_inner."""
        s = self.m.ssm
        return ((s.d_conv - 1) * (s.d_inner + 2 * s.n_group * s.d_state) + s.d_state * s.d_inner) * F32

    def kv(self, ctx: int) -> int:
        total = 0
        for layer in self.m.layers:
            if layer.kind == "recurrent":
                total += self.recurrent_state()
                continue
            cells = min(ctx, layer.window) if layer.kind == "swa" else ctx  # MLA: one latent row in K
            total += cells * (_row(self.r.kv_type, layer.n_head_kv * layer.k_dim)
                              + _row(self.r.kv_type, layer.n_head_kv * layer.v_dim))
        return total

    def ledger(self, ctx: int, stream: bool, nb: int, k: int) -> dict[str, int]:
        m, g = self.m, self.globals
        k_dim = m.head_dim_k or 0  # a pure recurrent model has no heads, so no head dims
        scratch = m.n_embd * 8 + max(m.n_ff) * 2 + max(m.n_head) * k_dim + 2 * max(m.n_head_kv) * k_dim
        row = g["token_embd"] // m.n_vocab
        return dict(
            base=BASE, scratch=scratch * 4, logits=m.n_vocab * 4, attn=max(m.n_head) * ctx * 4,
            resid=ctx * m.n_embd * 4, out_norm=sum(b for name, b in g.items() if name not in ("token_embd", "output")),
            embeddings=0 if self.tied and not stream else min(g["token_embd"], row * min(m.n_vocab, ctx)),
            lm_head=min(self.head, max(self.layers)) if stream else self.head, kv=self.kv(ctx),
            ring=0 if k == m.n_layer else nb * max(self.layers), pinned=sum(self.layers[:k]),
        )

    @property
    def top(self) -> int:
        return self.r.ctx or min(c for c in (self.r.ctx_cap, self.m.context_length) if c)

    def ctxs(self) -> list[int]:
        return [self.top] if self.r.ctx else sorted({self.top, *range(128, self.top, 128)})

    def heads(self) -> list[bool]:
        return {"auto": [False] if self.tied else [False, True], "resident": [False], "stream": [True]}[
            self.r.head_mode]

    def minimum(self) -> tuple[tuple[int, bool, int, int], dict[str, int]]:
        knobs = (self.ctxs()[0], self.heads()[-1], 1, 0)
        return knobs, self.ledger(*knobs)

    def plan(self, budget: int):
        """(knobs, ledger) of the best-ranked configuration that fits, or None."""
        best = None
        for ctx, stream, nb, k in itertools.product(self.ctxs(), self.heads(), {self.r.n_buffers, 1},
                                                    range(self.m.n_layer + 1)):
            ledger = self.ledger(ctx, stream, nb, k)
            if sum(ledger.values()) <= budget:
                score = (ctx, not stream, k, nb == self.r.n_buffers)
                if best is None or score > best[0]:
                    best = (score, (ctx, stream, nb, k), ledger)
        return None if best is None else best[1:]


def knobs(plan) -> tuple[int, bool, int, int]:
    return plan.ctx, plan.stream_lm_head, plan.n_buffers, plan.n_pinned


def rank(plan) -> tuple[bool, int, bool, int]:
    return plan.feasible, plan.ctx, not plan.stream_lm_head, plan.n_pinned


# ---- properties ----

@settings(max_examples=120, deadline=None)
@given(data=st.data(), desc=arch_descs())
def test_bisection_returns_what_the_brute_force_walk_returns(write, data, desc):
    model = write(desc)
    request = data.draw(requests(model))
    budget = data.draw(budgets_around(model, request))
    plan = plan_memory(model, BudgetRequest(**{**request.__dict__, "budget": Budget.of(budget)}))
    ref = Reference(model, request)
    expected = ref.plan(budget)
    min_knobs, min_ledger = ref.minimum()
    assert dict(plan.minimum_ledger.items()) == min_ledger
    assert plan.minimum_required == sum(min_ledger.values())
    if expected is None:
        assert not plan.feasible and plan.minimum_required > budget
        assert (knobs(plan), dict(plan.ledger.items())) == (min_knobs, min_ledger)
        assert plan.overridden == request.force
    else:
        assert plan.feasible and not plan.overridden and plan.minimum_required <= budget
        assert (knobs(plan), dict(plan.ledger.items())) == expected


@settings(max_examples=60, deadline=None)
@given(data=st.data(), desc=arch_descs())
def test_a_feasible_plan_stays_under_budget_and_its_ceiling_covers_its_weights(write, data, desc):
    model = write(desc)
    request = data.draw(requests(model))
    budget = data.draw(budgets_around(model, request))
    plan = plan_memory(model, BudgetRequest(**{**request.__dict__, "budget": Budget.of(budget)}))
    if plan.feasible:
        led = plan.ledger
        assert plan.total <= budget
        assert plan.weight_ceiling == budget - led.base - led.scratch - led.logits - led.attn - led.resid - led.kv
        assert plan.weight_ceiling >= led.out_norm + led.embeddings + led.lm_head + led.ring + led.pinned
    else:
        assert plan.weight_ceiling is None and plan.minimum_required > budget
        assert plan.over_budget_by == (plan.total - budget if request.force else 0)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), desc=arch_descs())
def test_raising_the_budget_never_ranks_the_plan_lower(write, data, desc):
    model = write(desc)
    request = data.draw(requests(model))
    low, high = sorted(data.draw(st.lists(budgets_around(model, request), min_size=2, max_size=2)))
    plans = [plan_memory(model, BudgetRequest(**{**request.__dict__, "budget": Budget.of(b)})) for b in (low, high)]
    assert rank(plans[0]) <= rank(plans[1])


@settings(max_examples=60, deadline=None)
@given(data=st.data(), desc=arch_descs(), ctx=st.integers(1, 5000))
def test_an_explicit_ctx_is_the_plans_ctx_or_the_plan_is_refused(write, data, desc, ctx):
    model = write(desc)
    request = BudgetRequest(**{**data.draw(requests(model)).__dict__, "ctx": ctx, "force": False})
    budget = data.draw(budgets_around(model, request))
    plan = plan_memory(model, BudgetRequest(**{**request.__dict__, "budget": Budget.of(budget)}))
    assert plan.ctx_explicit and not plan.ctx_capped
    assert plan.ctx == ctx or plan.impossible
    assert plan.feasible == (budget >= budget_thresholds(model, request)[0])


@settings(max_examples=60, deadline=None)
@given(data=st.data(), desc=arch_descs())
def test_thresholds_are_where_the_plan_becomes_feasible_and_pins_every_layer(write, data, desc):
    model = write(desc)
    request = data.draw(requests(model))
    lo, hi = budget_thresholds(model, request)
    ref = Reference(model, request)

    def plan(b: int):
        return plan_memory(model, BudgetRequest(**{**request.__dict__, "budget": Budget.of(b), "force": False}))

    assert plan(lo).feasible and (lo == 1 or not plan(lo - 1).feasible)
    top = plan(hi)
    assert (top.ctx, top.n_pinned) == (ref.top, model.n_layer)
    below = plan(data.draw(st.integers(1, hi - 1)))
    assert (below.ctx, below.n_pinned) != (ref.top, model.n_layer)


@settings(max_examples=30, deadline=None)
@given(data=st.data(), desc=arch_descs())
def test_an_unlimited_budget_keeps_everything_resident(write, data, desc):
    model = write(desc)
    request = data.draw(requests(model))
    plan = plan_memory(model, request)
    ref = Reference(model, request)
    assert plan.unlimited and plan.feasible and plan.weight_ceiling is None
    assert (plan.ctx, plan.n_pinned, plan.ledger.ring) == (ref.top, model.n_layer, 0)
    assert plan.stream_lm_head == (request.head_mode == "stream")
