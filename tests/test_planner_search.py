"""The search rules and the four outcomes (feasible, impossible, forced, unlimited), on real files.

Untied 4-layer llama, vocab 2048 (see test_planner_ledger.py for the arithmetic): the cheapest
configuration at ctx ≤ 2048 costs BASE + 91392 + 852·ctx (streamed head, one 39680-byte buffer).
"""

from __future__ import annotations

import dataclasses

import pytest
from gguf_factory import ArchDesc

from gguf_budget.core.errors import RequestError
from gguf_budget.core.model.context import DEFAULT_CTX
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import BudgetRequest, PlanError, budget_thresholds, plan_memory, plan_text

BASE = 24 * 1024 * 1024
MiB64 = 64 * 1024 * 1024
UNTIED = ArchDesc(n_layer=4, n_vocab=2048)


def cheapest(ctx: int) -> int:
    return BASE + 91392 + 852 * ctx


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"budget": 0}, "budget"),
    ({"budget": -1}, "budget"),
    ({"ctx": 0}, "ctx"),
    ({"ctx": 1.5}, "ctx"),
    ({"ctx_cap": -128}, "ctx_cap"),
    ({"n_buffers": 0}, "n_buffers"),
    ({"n_buffers": 9}, "n_buffers"),
    ({"head_mode": "sometimes"}, "head_mode"),
    ({"kv_type": "q3_k"}, "kv_type"),
    ({"force": "yes"}, "force"),
])
def test_nonsense_requests_are_refused_on_construction(kwargs, message):
    with pytest.raises(RequestError, match=message) as info:
        BudgetRequest(**kwargs)
    assert "\n" not in str(info.value)


def test_streaming_a_tied_head_is_refused(model):
    with pytest.raises(PlanError, match="tied"):
        plan_memory(model(ArchDesc(tied=True)), BudgetRequest(budget=Budget.of(MiB64), head_mode="stream"))


@pytest.mark.parametrize(("budget", "ctx", "capped"), [
    (MiB64, 2000, False),  # the cap itself, though not a multiple of 128
    (cheapest(2000) - 1, 1920, True),  # then the multiples of 128 below it
    (cheapest(1920) - 1, 1792, True),
    (cheapest(128), 128, True),  # down to 128
])
def test_auto_ctx_steps_down_from_the_cap_in_multiples_of_128(model, budget, ctx, capped):
    plan = plan_memory(model(dataclasses.replace(UNTIED, context_length=2000)), BudgetRequest(budget=Budget.of(budget)))
    assert (plan.feasible, plan.ctx, plan.ctx_capped, plan.ctx_cap) == (True, ctx, capped, 2000)


def test_a_context_under_128_is_its_own_only_candidate(model):
    spec = model(dataclasses.replace(UNTIED, context_length=100))
    assert plan_memory(spec, BudgetRequest(budget=Budget.of(MiB64))).ctx == 100
    assert plan_memory(spec, BudgetRequest(budget=Budget.of(cheapest(100)))).ctx == 100
    assert plan_memory(spec, BudgetRequest(budget=Budget.of(cheapest(100) - 1))).impossible


@pytest.mark.parametrize(("cap", "ctx"), [(512, 512), (1000, 1000), (4096, 2048)])
def test_a_ctx_cap_lowers_the_top_but_never_raises_it(model, cap, ctx):
    assert plan_memory(model(UNTIED), BudgetRequest(budget=Budget.of(MiB64), ctx_cap=cap)).ctx == ctx


def test_unknown_context_length_stops_auto_at_the_default_ctx_unless_capped_or_asked(model):
    """`model.context` Rule 2: no trained context, the ceiling is the cap, else DEFAULT_CTX (said in the report)."""
    spec = dataclasses.replace(model(UNTIED), context_length=None)
    plan = plan_memory(spec, BudgetRequest(budget=Budget.of(MiB64)))
    assert (plan.ctx, plan.ctx_cap) == (DEFAULT_CTX, DEFAULT_CTX)
    assert f"the file gives no trained context, so auto stops at {DEFAULT_CTX}" in plan_text(plan)
    assert plan_memory(spec, BudgetRequest(budget=Budget.of(MiB64), ctx_cap=700)).ctx == 700
    assert plan_memory(spec, BudgetRequest(budget=Budget.of(MiB64), ctx=300)).ctx == 300


def test_an_explicit_ctx_that_does_not_fit_is_refused_not_lowered(model):
    plan = plan_memory(model(UNTIED), BudgetRequest(budget=Budget.of(cheapest(1024) - 1), ctx=1024))
    assert plan.impossible and plan.ctx == 1024 and plan.minimum_required == cheapest(1024)
    assert plan_memory(model(UNTIED), BudgetRequest(budget=Budget.of(cheapest(1024)), ctx=1024)).feasible


def test_force_plans_the_minimum_configuration_and_says_by_how_much(model):
    spec = model(UNTIED)
    plan = plan_memory(spec, BudgetRequest(budget=Budget.of(cheapest(128) - 1000), force=True))
    assert (plan.feasible, plan.overridden, plan.impossible) == (False, True, False)
    assert (plan.ctx, plan.stream_lm_head, plan.n_buffers, plan.n_pinned) == (128, True, 1, 0)
    assert plan.over_budget_by == 1000 and plan.weight_ceiling is None
    roomy = plan_memory(spec, BudgetRequest(budget=Budget.of(MiB64), force=True))
    assert roomy.feasible and not roomy.overridden and roomy.over_budget_by == 0


def test_budget_zero_is_unlimited_and_not_planned(model):
    plan = plan_memory(model(UNTIED), BudgetRequest(budget=Budget.unlimited()))
    assert (plan.unlimited, plan.feasible, plan.ctx, plan.n_pinned, plan.stream_lm_head) == (True, True, 2048, 4, False)
    assert plan.ledger.ring == 0 and plan.weight_ceiling is None


def test_the_requested_ring_depth_is_kept_when_every_layer_is_pinned(model):
    plan = plan_memory(model(UNTIED), BudgetRequest(budget=Budget.of(MiB64), n_buffers=3))
    assert (plan.n_buffers, plan.n_pinned, plan.ledger.ring) == (3, 4, 0)


def test_a_streamed_head_on_request_even_when_resident_would_fit(model):
    plan = plan_memory(model(UNTIED), BudgetRequest(budget=Budget.of(MiB64), head_mode="stream"))
    assert plan.stream_lm_head and plan.n_pinned == 4 and plan.ledger.lm_head == 39680


def test_thresholds_of_the_hand_worked_model(model):
    # minimum: cheapest(128); all pinned at 2048 with the head resident: BASE + 1896192 + 4·39680.
    assert budget_thresholds(model(UNTIED), BudgetRequest()) == (cheapest(128), BASE + 1_896_192 + 4 * 39680)


def test_absurd_context_lengths_stay_logarithmic_and_exact(model):
    spec = dataclasses.replace(model(UNTIED), context_length=2**40)
    plan = plan_memory(spec, BudgetRequest(budget=Budget.of(MiB64)))
    assert plan.feasible and plan.total <= MiB64 and plan.ctx % 128 == 0 and plan.ctx_capped
    assert plan_memory(spec, BudgetRequest(budget=Budget.of(plan.total + 852 * 128 + 139264 + 3 * 39680))).ctx > plan.ctx
    unlimited = plan_memory(spec, BudgetRequest(budget=Budget.unlimited()))
    assert unlimited.ctx == 2**40 and "784.00 TiB" in plan_text(unlimited)
    huge = plan_memory(spec, BudgetRequest(budget=Budget.of(MiB64), ctx=2**62))
    assert huge.impossible and huge.minimum_required > 2**62
