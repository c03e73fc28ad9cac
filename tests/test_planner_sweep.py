"""Budget sweeps: each row is the plan at that budget; the thresholds are the planner's own."""

from __future__ import annotations

import pytest
from gguf_factory import ArchDesc, write_gguf
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_budget.core.errors import RequestError
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import (BudgetRequest, budget_range, budget_thresholds, load_model, plan_memory, sweep_budgets,
                              sweep_dict, sweep_text)

BASE = 24 * 1024 * 1024
MiB = 1024 * 1024
UNTIED = ArchDesc(n_layer=4, n_vocab=2048)


@pytest.fixture(scope="module")
def untied(tmp_path_factory):
    return load_model(write_gguf(tmp_path_factory.mktemp("sweep") / "m.gguf", UNTIED, "header_only")[0])


@settings(max_examples=40, deadline=None)
@given(budgets=st.lists(st.integers(1, 30 * MiB), min_size=1, max_size=20),
       n_buffers=st.integers(1, 3), head=st.sampled_from(("auto", "resident", "stream")))
def test_every_row_is_the_plan_at_that_budget(untied, budgets, n_buffers, head):
    request = BudgetRequest(n_buffers=n_buffers, head_mode=head, force=True)
    result = sweep_budgets(untied, budgets, request)
    assert len(result.rows) == len(budgets)
    for row in result.rows:
        plan = plan_memory(untied, BudgetRequest(budget=Budget.of(row.budget), n_buffers=n_buffers, head_mode=head))
        assert (row.feasible, row.ctx, row.n_pinned, row.stream_lm_head, row.n_buffers, row.total) == (
            plan.feasible, plan.ctx, plan.n_pinned, plan.stream_lm_head, plan.n_buffers, plan.total)


def test_thresholds_match_budget_thresholds(untied):
    lo, hi = budget_thresholds(untied, BudgetRequest())
    result = sweep_budgets(untied, [lo - 1, lo, hi - 1, hi, hi + 1], BudgetRequest())
    assert (result.first_feasible, result.all_pinned, result.n_layer, result.ctx_cap) == (lo, hi, 4, 2048)
    none = sweep_budgets(untied, [lo - 1], BudgetRequest())
    assert (none.first_feasible, none.all_pinned) == (None, None)
    assert "not within this range" in sweep_text(none)


def test_dict_and_text_carry_the_rows_and_thresholds(untied):
    result = sweep_budgets(untied, budget_range("24M:27M:1M"), BudgetRequest())
    d = sweep_dict(result)
    assert set(d) == {"rows", "first_feasible", "all_pinned", "n_layer", "ctx_cap", "n_buffers_requested"}
    assert [set(r) for r in d["rows"]] == [{"budget", "feasible", "ctx", "n_pinned", "stream_lm_head", "n_buffers",
                                             "total", "ring_planned", "tok_s", "tok_s_full_context",
                                             "stream_bytes_per_token"}] * 4
    assert [r["feasible"] for r in d["rows"]] == [False, True, True, True]
    text = sweep_text(result)
    assert "First feasible: 25.00 MiB" in text and "Every layer pinned at ctx 2048: 26.00 MiB" in text


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_a_sweep_budget_must_be_a_real_budget(untied, bad):
    with pytest.raises(RequestError, match="budgets"):
        sweep_budgets(untied, [MiB, bad], BudgetRequest())


@pytest.mark.parametrize(("text", "budgets"), [
    ("1:10:3", (1, 4, 7, 10)),
    ("1:11:3", (1, 4, 7, 10)),
    ("5:5:1", (5,)),
    ("128M:2G:64M", tuple(range(128 * MiB, 2048 * MiB + 1, 64 * MiB))),
    ("0.5K:1KiB:256", (512, 768, 1024)),
])
def test_budget_range_lists_from_to_inclusive(text, budgets):
    assert budget_range(text) == budgets


@pytest.mark.parametrize(("text", "message"), [
    ("1M:2M", "FROM:TO:STEP"),
    ("0:2M:1M", "at least 1 byte"),
    ("1M:2M:0", "at least 1 byte"),
    ("2M:1M:1", "TO is below FROM"),
    ("1:1T:1", "at most"),
    ("a:b:c", "not a size"),
])
def test_budget_range_refuses_nonsense_in_one_line(text, message):
    with pytest.raises(RequestError, match=message) as info:
        budget_range(text)
    assert "\n" not in str(info.value)
