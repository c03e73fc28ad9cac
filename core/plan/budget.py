"""A RAM budget: unlimited, or a whole number of bytes — one type, so nothing else ever stands for it.

Rule 1: `Budget.unlimited()`, or `Budget.of(n)` with 1 ≤ n ≤ 2^63−1; anything else (0, a
        negative, a bool, a float) is a RequestError. Before this type a budget travelled as 0,
        None, a bool beside a placeholder 1, and "exact while unlimited" — and one combination
        of them came out unlimited by accident.
Rule 2: 0 is only how the command line and JSON spell unlimited: `Budget.from_cli(n)` reads that
        spelling and `cli_bytes` writes it; nothing inside the core compares a budget with 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.errors import RequestError
from gguf_budget.core.units import INT64_MAX, human_bytes

UNLIMITED_WORD = "unlimited"


@dataclass(frozen=True)
class Budget:
    """`limit` bytes, or no limit (None)."""

    limit: int | None = None

    def __post_init__(self) -> None:
        n = self.limit
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= INT64_MAX):
            raise RequestError(f"a RAM budget is at least 1 byte and at most 2^63−1, got {n!r}")

    @classmethod
    def unlimited(cls) -> Budget:
        return cls(None)

    @classmethod
    def of(cls, n: int) -> Budget:
        """`n` bytes (Rule 1: n ≥ 1)."""
        if n is None:
            raise RequestError("a RAM budget needs a number of bytes")
        return cls(n)

    @classmethod
    def from_cli(cls, n: int) -> Budget:
        """Rule 2: the command line's and JSON's number, where 0 is unlimited."""
        return cls.unlimited() if n == 0 and not isinstance(n, bool) else cls.of(n)

    @property
    def is_unlimited(self) -> bool:
        return self.limit is None

    @property
    def cli_bytes(self) -> int:
        """Rule 2: the number the command line and JSON write (0 = unlimited)."""
        return 0 if self.limit is None else self.limit

    def admits(self, total: int) -> bool:
        """Whether `total` bytes stay within the budget (always, when unlimited)."""
        return self.limit is None or total <= self.limit

    def __str__(self) -> str:
        return UNLIMITED_WORD if self.limit is None else human_bytes(self.limit)
