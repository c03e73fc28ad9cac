"""Two plans side by side: each ledger line of both, then the total, and what the second holds more.

Rule 1: a row per ledger line in ledger order, then the total (TOTAL_LINE); both plans price the same
        lines, so a ledger of other lines is a programming error (zip is strict).
Rule 2: a line's difference is second − first: positive where the second plan holds more.
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.plan.types import MemoryPlan

TOTAL_LINE = "total"


@dataclass(frozen=True)
class LineDifference:
    """One ledger line (or the total) of both plans."""

    line: str
    first: int
    second: int

    @property
    def difference(self) -> int:
        """Rule 2."""
        return self.second - self.first

    @property
    def values(self) -> tuple[int, int, int]:
        """First, second and their difference, in the order a table shows them."""
        return self.first, self.second, self.difference


def line_differences(first: MemoryPlan, second: MemoryPlan) -> tuple[LineDifference, ...]:
    """Rule 1: every ledger line, then the total."""
    pairs = zip(first.ledger.items(), second.ledger.items(), strict=True)
    lines = [LineDifference(name, a, b) for (name, a), (_, b) in pairs]
    return (*lines, LineDifference(TOTAL_LINE, first.total, second.total))
