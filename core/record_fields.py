"""The fields of a kept JSON record, each checked on read: a record any bug, crash or other program wrote.

Rule 1: a field is read only as its type and range say: a whole number (never a bool, never a
        float) within [low, high]; a number (int or float, never a bool) finite and within
        [low, high]; a text at most `longest` characters. Anything else raises `error` with one
        line naming the field, so the caller treats the entry as absent.
Rule 2: the ranges are the physical bands of what is kept (a bandwidth, a rate, a date), so an
        entry that parses but could not have been measured (NaN, 1e308, 0, negative) is absent
        too; nothing read through here can overflow or divide by zero later.
"""

from __future__ import annotations

import math
from typing import Any

from gguf_budget.core.errors import DamagedRecord

LATEST_DATE = 32_503_680_000.0
"""The year 3000 in seconds since 1970: any later `measured_at` or `recorded_at` is damage."""


def whole(data: dict[str, Any], key: str, low: int, high: int, error: type[DamagedRecord]) -> int:
    """Rule 1 for a whole number."""
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise error(f"{key} must be a whole number from {low:,} to {high:,}")
    return value


def number(data: dict[str, Any], key: str, low: float, high: float, error: type[DamagedRecord]) -> float:
    """Rule 1 for a number, read as a float."""
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(value, float)
                                                                         and not math.isfinite(value)):
        raise error(f"{key} must be a finite number")
    if not low <= value <= high:  # compared as it is: a 400-digit int never becomes a float
        raise error(f"{key} must lie from {low:g} to {high:g}")
    return float(value)


def optional_number(data: dict[str, Any], key: str, low: float, high: float,
                    error: type[DamagedRecord]) -> float | None:
    """Rule 1 for a number that may be absent (missing or null)."""
    return None if data.get(key) is None else number(data, key, low, high, error)


def text(data: dict[str, Any], key: str, longest: int, error: type[DamagedRecord]) -> str:
    """Rule 1 for a text."""
    value = data.get(key)
    if not isinstance(value, str) or len(value) > longest:
        raise error(f"{key} must be a text of at most {longest} characters")
    return value
