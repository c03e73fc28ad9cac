"""Auto ctx "speed first above 4096" (docs/budget-plan.md, "The search") and the ring's requested-vs-planned depth.

The catalogue's Llama-3.1-8B Q4_K_M skeleton is the issue's worked case: at 6 GiB the ctx-first
ctx-first search from the trained context (131072) gave ctx 40,832 with 0 of 32 layers pinned;
the default policy keeps every layer and grows ctx only as far as they all stay pinned.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from gguf_factory import ArchDesc, write_gguf
from hypothesis import given, settings
from hypothesis import strategies as st
from test_planner_properties import Reference, arch_descs

from gguf_budget.core.model.context import DEFAULT_CTX
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import BudgetRequest, load_model, plan_dict, plan_memory, plan_text
from gguf_budget.core.plan.ledger import LedgerPrices
from gguf_budget.core.plan.types import CtxPolicy, CtxReason, RingReason

GiB = 1 << 30


def plan(model, budget: int, **kw):
    return plan_memory(model, BudgetRequest(budget=Budget.of(budget), **kw))


def test_8b_at_6_gib_pins_every_layer_at_the_largest_ctx_that_keeps_them(llama8b):
    p = plan(llama8b, 6 * GiB)
    assert (p.feasible, p.n_pinned, p.n_layer) == (True, 32, 32)
    assert 11_000 <= p.ctx <= 12_288 and p.ctx % 128 == 0
    assert p.ctx_reason is CtxReason.SPEED_GROWN and p.ctx_policy is CtxPolicy.SPEED
    assert plan(llama8b, 6 * GiB, ctx=p.ctx).n_pinned == 32
    assert plan(llama8b, 6 * GiB, ctx=p.ctx + 128).n_pinned < 32  # one more step and a layer streams
    assert f"{p.ctx + 128} would stream a layer" in plan_text(p)


def test_8b_at_4_gib_holds_4096_and_pins_as_many_layers_as_fit(llama8b):
    p = plan(llama8b, 4 * GiB)
    assert (p.ctx, p.ctx_reason) == (DEFAULT_CTX, CtxReason.SPEED_HELD)
    ctx_first_at_4096 = plan(llama8b, 4 * GiB, ctx=DEFAULT_CTX, prefer=CtxPolicy.CONTEXT)
    assert 0 < p.n_pinned == ctx_first_at_4096.n_pinned < 32
    ctx_first = plan(llama8b, 4 * GiB, prefer=CtxPolicy.CONTEXT)
    assert ctx_first.ctx > DEFAULT_CTX and ctx_first.n_pinned < p.n_pinned
    assert "held at 4096 of the 131072 cap" in plan_text(p)


def test_prefer_context_is_the_ctx_first_ranking(llama8b):
    p = plan(llama8b, 6 * GiB, prefer=CtxPolicy.CONTEXT)
    assert (p.ctx, p.n_pinned, p.ctx_reason) == (40_832, 0, CtxReason.LOWERED)
    assert "lowered from 131072 to fit the budget" in plan_text(p)


@pytest.mark.parametrize("prefer", list(CtxPolicy))
def test_a_ctx_cap_bounds_both_policies(llama8b, prefer):
    p = plan(llama8b, 6 * GiB, ctx_cap=8192, prefer=prefer)
    assert (p.ctx, p.ctx_cap, p.ctx_reason) == (8192, 8192, CtxReason.CAP)
    assert plan(llama8b, 64 * GiB, ctx_cap=2000, prefer=prefer).ctx == 2000


def test_a_budget_too_small_for_4096_lowers_ctx_as_the_ctx_first_search_does(llama8b):
    p = plan(llama8b, 800 << 20)
    assert p.feasible and p.ctx < DEFAULT_CTX and p.ctx_reason is CtxReason.LOWERED
    ctx_first = plan(llama8b, 800 << 20, ctx_cap=DEFAULT_CTX, prefer=CtxPolicy.CONTEXT)
    assert (p.ctx, p.n_pinned, p.stream_lm_head) == (ctx_first.ctx, ctx_first.n_pinned, ctx_first.stream_lm_head)
    assert "lowered from 4096 to fit the budget" in plan_text(p)


def test_a_big_budget_still_gets_the_trained_context(llama8b):
    p = plan(llama8b, 64 * GiB)
    assert (p.ctx, p.n_pinned, p.ctx_reason) == (131_072, 32, CtxReason.CAP)


def test_plan_json_names_the_policy_and_the_ring(llama8b):
    d = plan_dict(plan(llama8b, 4 * GiB))
    assert (d["ctx_policy"], d["ctx_reason"], d["ctx_cap"]) == ("speed", "speed_held", 131_072)
    assert d["ring"]["requested"] == 2 and d["ring"]["planned"] == 1 and d["ring"]["reason"] == "one_pins_more"
    assert d["n_buffers"] == 1  # the existing key keeps its meaning: the configuration's ring depth


def test_one_buffer_is_planned_only_when_it_pins_more_and_says_how_many(llama8b):
    p = plan(llama8b, 4 * GiB)
    prices = LedgerPrices.of(llama8b, "f16")
    room_two = 4 * GiB - prices.fixed(p.ctx, p.stream_lm_head) - 2 * prices.largest_layer
    pinned_with_two = prices.max_pinned(room_two)
    assert p.ring.reason is RingReason.ONE_PINS_MORE and p.ring.extra_pinned == p.n_pinned - pinned_with_two > 0
    assert f"requested 2, planned 1: 1 buffer pins {p.ring.extra_pinned} more layer(s)" in plan_text(p)


def test_no_ring_is_planned_when_every_layer_is_pinned(llama8b):
    p = plan(llama8b, 6 * GiB, n_buffers=3)
    assert (p.ring.requested, p.ring.planned, p.ring.reason) == (3, 0, RingReason.ALL_PINNED)
    assert p.ledger.ring == 0 and "requested 3, planned 0" in plan_text(p)


def test_a_requested_single_buffer_is_planned_as_requested(llama8b):
    p = plan(llama8b, 4 * GiB, n_buffers=1)
    assert (p.ring.requested, p.ring.planned, p.ring.reason) == (1, 1, RingReason.AS_REQUESTED)
    assert "1 (as requested)" in plan_text(p)


def test_a_refused_plan_reports_the_minimum_ring(llama8b):
    p = plan(llama8b, 100 << 20)
    assert p.impossible and (p.ring.planned, p.ring.reason) == (1, RingReason.MINIMUM)


# ---- the policy against a brute-force walk of every candidate ----

@st.composite
def long_context_descs(draw) -> ArchDesc:
    return replace(draw(arch_descs()), context_length=draw(st.integers(4097, 9000)))


@pytest.fixture(scope="module")
def write(tmp_path_factory):
    folder = tmp_path_factory.mktemp("policy-models")
    counter = itertools.count()

    def make(desc: ArchDesc):
        return load_model(write_gguf(folder / f"m{next(counter)}.gguf", desc, "header_only")[0])

    return make


def speed_reference(ref: Reference, budget: int):
    """The ctx-first walk capped at 4096; if it pins every layer there, the highest ctx (steps of 128, then the top)
    at which every layer stays pinned with that head and no ring."""
    capped = Reference(ref.m, replace(ref.r, ctx_cap=min(ref.top, DEFAULT_CTX)))
    best = capped.plan(budget)
    if best is None:
        return None
    (ctx, stream, nb, k), ledger = best
    if ctx != DEFAULT_CTX or k != ref.m.n_layer:
        return best
    for c in sorted({ref.top, *range(DEFAULT_CTX + 128, ref.top, 128)}):
        grown = ref.ledger(c, stream, nb, k)
        if sum(grown.values()) <= budget:
            ctx, ledger = c, grown
    return (ctx, stream, nb, k), ledger


@settings(max_examples=80, deadline=None)
@given(data=st.data(), desc=long_context_descs())
def test_speed_first_is_what_the_brute_force_walk_returns(write, data, desc):
    model = write(desc)
    request = BudgetRequest(n_buffers=data.draw(st.integers(1, 3)),
                            head_mode=data.draw(st.sampled_from(("auto", "resident") if desc.tied
                                                                else ("auto", "resident", "stream"))))
    ref = Reference(model, request)
    hi = sum(ref.ledger(ref.top, False, 1, model.n_layer).values())
    budget = data.draw(st.integers(1, 2 * hi))
    got = plan_memory(model, replace(request, budget=Budget.of(budget)))
    expected = speed_reference(ref, budget)
    if expected is None:
        assert not got.feasible
    else:
        assert ((got.ctx, got.stream_lm_head, got.n_buffers, got.n_pinned), dict(got.ledger.items())) == expected
