"""The automatic sweep range (issue 17, item 4): round numbers, both thresholds and the window's
budget inside it, never more than a few hundred budgets."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gguf_budget.core.plan.sweep import DEFAULT_SWEEP_POINTS, budget_range, default_range

MIB = 1 << 20
ROUND = {m * 10**k for m in (1, 2, 5) for k in range(16)}
sizes = st.integers(MIB, 1 << 44)


@given(sizes, sizes, st.none() | sizes)
def test_the_range_is_round_holds_both_thresholds_and_the_budget(a, b, budget):
    low, high = sorted((a, b))
    text = default_range(low, high, budget=budget)
    start, stop, step = (int(part[:-1]) for part in text.split(":"))
    assert text.count("M") == 3 and step in ROUND and stop % step == 0
    assert start % step == 0 or start in ROUND
    budgets = budget_range(text)
    assert budgets[0] <= min(low, budget or low) and budgets[-1] >= max(high, budget or high)
    assert len(budgets) <= 2.5 * DEFAULT_SWEEP_POINTS + 2
