"""The reports say the same numbers as the JSON: Execution Plan, RAM budget impossible, forced, unlimited."""

from __future__ import annotations

import json

from gguf_factory import ArchDesc

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import LEDGER_LINES, BudgetRequest, plan_dict, plan_memory, plan_text
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.ledger_names import line_name

BASE = 24 * 1024 * 1024
UNTIED = ArchDesc(n_layer=4, n_vocab=2048)
MINIMUM = BASE + 200_448  # ctx 128, head streamed, one buffer (test_planner_ledger.py)
PLAN_KEYS = {"budget", "feasible", "overridden", "unlimited", "ctx", "ctx_capped", "stream_lm_head", "n_buffers",
             "n_pinned", "n_layer", "weight_ceiling", "ledger", "total", "minimum_required", "report"}


def test_execution_plan_lists_every_number_of_the_json(model):
    plan = plan_memory(model(UNTIED), BudgetRequest(budget=Budget.of(BASE + 500_000)))
    d = plan_dict(plan)
    text = plan_text(plan)
    assert text == d["report"] and text.startswith("Execution Plan")
    for name, value in d["ledger"].items():
        assert f"{value:,} B" in text and line_name(name) in text
    assert f"{d['total']:,} B" in text
    for fragment in ("384 tokens (lowered from 2048 to fit the budget)", "streamed through a window",
                     "1 buffer(s) × 38.75 KiB", "2 of 4", human_bytes(d["weight_ceiling"]),
                     human_bytes(plan.ledger.mandatory), human_bytes(d["budget"] - d["total"]) + " under budget"):
        assert fragment in text


def test_the_json_payload_has_the_contract_keys_and_the_eleven_lines(model):
    d = plan_dict(plan_memory(model(UNTIED), BudgetRequest(budget=Budget.of(BASE + 500_000))))
    assert PLAN_KEYS <= set(d)
    assert tuple(d["ledger"]) == LEDGER_LINES and d["total"] == sum(d["ledger"].values())
    assert json.loads(json.dumps(d)) == d


def test_impossible_report_breaks_the_minimum_down(model):
    budget = MINIMUM - 4096
    plan = plan_memory(model(UNTIED), BudgetRequest(budget=Budget.of(budget)))
    text = plan_text(plan)
    assert text.splitlines()[0] == (f"RAM budget impossible: requested {human_bytes(budget)}, minimum required "
                                    f"{human_bytes(MINIMUM)} (4.00 KiB short)")
    m = plan.minimum_ledger
    for name, value in m.items():
        line = next(row for row in text.splitlines() if row.strip().startswith(line_name(name)))
        assert line.endswith(human_bytes(value))
    assert "ctx 128, head streamed, 1-buffer ring" in text and "Raise the budget to at least" in text
    assert plan_dict(plan)["weight_ceiling"] is None


def test_impossible_report_suggests_only_what_would_help(model):
    resident = plan_text(plan_memory(model(UNTIED), BudgetRequest(budget=Budget.of(BASE), ctx=512, head_mode="resident")))
    assert "choose a smaller ctx" in resident and "let the head stream" in resident
    auto = plan_text(plan_memory(model(UNTIED), BudgetRequest(budget=Budget.of(BASE))))
    assert "smaller ctx" not in auto and "let the head stream" not in auto


def test_forced_report_says_how_far_over_budget(model):
    plan = plan_memory(model(UNTIED), BudgetRequest(budget=Budget.of(MINIMUM - 2048), force=True))
    text = plan_text(plan)
    assert text.startswith("RAM budget overridden (forced)")
    assert "2.00 KiB over the" in text and "Execution Plan — forced" in text
    assert plan_dict(plan)["over_budget_by"] == 2048


def test_unlimited_and_beyond_trained_context_are_said_plainly(model):
    unlimited = plan_text(plan_memory(model(UNTIED), BudgetRequest(budget=Budget.unlimited())))
    assert "unlimited budget" in unlimited and "none (unlimited)" in unlimited
    beyond = plan_text(plan_memory(model(UNTIED), BudgetRequest(budget=Budget.unlimited(), ctx=4096)))
    assert "4096 tokens (as requested; beyond the trained context of 2048)" in beyond
