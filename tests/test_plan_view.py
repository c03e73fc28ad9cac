"""The plan's at-a-glance texts (banner, pinned count, streaming cost), worked by hand.

Model: 4 blocks of 39,680 bytes, an untied 8,192 × 64 Q8_0 head of 557,056 bytes
(544.00 KiB). Its minimum configuration needs 25,390,848 bytes (24.21 MiB); every layer is
pinned from 27,145,728 bytes on (with the head streamed), and 27,663,104 bytes hold
everything resident at ctx 2048.
"""

from __future__ import annotations

import pytest
from gguf_factory import ArchDesc

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import BudgetRequest, budget_thresholds, plan_memory
from gguf_budget.core.speed.token_bytes import TokenPrices
from gguf_budget.core.views.plan_view import biggest_lines, plan_banner, pinned_text

LOW, ALL_PINNED, RESIDENT = 25_390_848, 27_145_728, 27_663_104
LAYERS, HEAD = 4 * 39_680, 557_056


@pytest.fixture
def tiny(model):
    return model(ArchDesc(n_layer=4, n_vocab=8192))


def test_the_thresholds_are_the_hand_worked_ones(tiny):
    assert budget_thresholds(tiny, BudgetRequest()) == (LOW, ALL_PINNED)


@pytest.mark.parametrize("request_, state, banner, streamed, pinned", [
    (BudgetRequest(budget=Budget.of(LOW - 1)), "impossible",
     "IMPOSSIBLE — requested 24.21 MiB, minimum required 24.21 MiB; "
     "biggest lines: Process overhead 24.00 MiB, KV cache 64.00 KiB, Output head 38.75 KiB",
     LAYERS + HEAD, "0 / 4 layers pinned — no plan fits the budget"),
    (BudgetRequest(budget=Budget.of(LOW - 1), force=True), "overridden",
     "OVERRIDDEN — forced: the minimum configuration needs 24.21 MiB, 1 B over the 24.21 MiB budget",
     LAYERS + HEAD, "0 / 4 layers pinned — each token streams 699.00 KiB of weights from disk"),
    (BudgetRequest(budget=Budget.of(LOW)), "feasible",
     "FEASIBLE — estimated peak 24.21 MiB, headroom 0 B under the 24.21 MiB budget at ctx 128",
     LAYERS + HEAD, "0 / 4 layers pinned — each token streams 699.00 KiB of weights from disk"),
    (BudgetRequest(budget=Budget.of(ALL_PINNED)), "feasible",
     "FEASIBLE — estimated peak 25.89 MiB, headroom 0 B under the 25.89 MiB budget at ctx 2,048",
     HEAD, "4 / 4 layers pinned — each token streams 544.00 KiB of weights from disk"),
    (BudgetRequest(budget=Budget.of(RESIDENT + 482_620)), "feasible",
     "FEASIBLE — estimated peak 26.38 MiB, headroom 471.31 KiB under the 26.84 MiB budget at ctx 2,048",
     0, "4 / 4 layers pinned — nothing streams: each token reads weights from RAM only"),
    (BudgetRequest(budget=Budget.unlimited()), "unlimited",
     "UNLIMITED — no budget: everything resident, estimated peak 26.38 MiB at ctx 2,048",
     0, "4 / 4 layers pinned — nothing streams: each token reads weights from RAM only"),
])
def test_banner_streaming_cost_and_pinned_text(tiny, request_, state, banner, streamed, pinned):
    plan = plan_memory(tiny, request_)
    assert plan.outcome == state
    assert plan_banner(plan).text == banner and plan_banner(plan).state == state
    assert TokenPrices.of(tiny).streamed_file_bytes(plan.n_pinned, plan.stream_lm_head) == streamed
    assert pinned_text(tiny, plan) == pinned


def test_biggest_lines_skip_zeros_and_break_ties_in_ledger_order(tiny):
    ledger = plan_memory(tiny, BudgetRequest(budget=Budget.of(LOW))).ledger
    assert biggest_lines(ledger, 5) == (("base", 25_165_824), ("kv", 65_536), ("lm_head", 39_680),
                                        ("ring", 39_680), ("logits", 32_768))
    assert all(n > 0 for _, n in biggest_lines(ledger, 11))
