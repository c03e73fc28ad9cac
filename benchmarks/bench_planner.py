"""Planner speed against its budgets (docs/performance.md): `plan_memory` ≤ 1 ms median, a 1,000-budget sweep ≤ 0.5 s.

The model is a header-only Llama-3-70B shape (80 layers, n_embd 8192, n_ff 28672, 64 heads,
8 KV heads, 128256-token vocabulary, 131072 context; Q4_K weights, Q6_K output) written by
`tests/gguf_factory.py`, so auto ctx searches 1,024 candidates from 131072 down.
Prints medians and their ratio to the budgets; exits 1 when a budget is exceeded.

Run: .venv/bin/python benchmarks/bench_planner.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

from bench_shapes import LLAMA3_70B, GiB, median_seconds
from gguf_factory import write_gguf

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import BudgetRequest, ModelSpec, budget_thresholds, load_model, plan_memory, sweep_budgets

PLAN_BUDGET_S = 1e-3
SWEEP_BUDGET_S = 0.5


def bench_plans(model: ModelSpec) -> float:
    lo, hi = budget_thresholds(model, BudgetRequest())
    cases = {"impossible": lo - 1, "minimum": lo, "ctx lowered": 24 * GiB, "some pinned": 64 * GiB, "all pinned": hi}
    medians = []
    for name, budget in cases.items():
        request = BudgetRequest(budget=Budget.of(budget))
        plan = plan_memory(model, request)
        t = median_seconds(lambda r=request: plan_memory(model, r), 500)
        medians.append(t)
        print(f"  plan_memory {name:<12} ctx {plan.ctx:>6}  pinned {plan.n_pinned:>2}/80  {t * 1e6:8.1f} µs")
    return statistics.median(medians)


def bench_sweep(model: ModelSpec) -> float:
    lo, hi = budget_thresholds(model, BudgetRequest())
    start = lo // 2
    step = (hi + 2 * GiB - start) // 999
    budgets = [start + i * step for i in range(1000)]
    return median_seconds(lambda: sweep_budgets(model, budgets, BudgetRequest()), 7)


def verdict(measured: float, budget: float) -> str:
    return f"{measured / budget:6.1%} of budget — {'ok' if measured <= budget else 'OVER BUDGET'}"


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        model = load_model(write_gguf(Path(folder) / "llama3-70b.gguf", LLAMA3_70B, "header_only")[0])
    print(f"Llama-3-70B shape: {model.n_layer} layers, {model.tensor_bytes / GiB:.1f} GiB of weights, "
          f"context {model.context_length}")
    plan_s = bench_plans(model)
    sweep_s = bench_sweep(model)
    print(f"plan_memory median   {plan_s * 1e3:8.3f} ms  ({verdict(plan_s, PLAN_BUDGET_S)}, budget 1 ms)")
    print(f"1,000-budget sweep   {sweep_s * 1e3:8.1f} ms  ({verdict(sweep_s, SWEEP_BUDGET_S)}, budget 0.5 s)")
    return 0 if plan_s <= PLAN_BUDGET_S and sweep_s <= SWEEP_BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
