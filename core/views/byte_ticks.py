"""Round binary sizes for a byte axis: where its ticks fall, and a top that stays put.

Rule 1: the unit (B, KiB, MiB, GiB, TiB) is the largest of which the span holds one; the
        step is 1, 2 or 5 × 10^k of that unit, aiming for about TARGET_TICKS ticks.
Rule 2: a chart's top is the first tick at or above its tallest value plus HEADROOM, so it
        moves only when that value crosses a tick. Dragging the budget then rescales the axis
        a handful of times across the whole range instead of on every step (each rescale
        re-lays out and repaints the whole chart), and the top is always a labelled tick.
"""

from __future__ import annotations

import math

UNITS = ("B", "KiB", "MiB", "GiB", "TiB")
TARGET_TICKS = 5
HEADROOM = 0.06
"""Room above the tallest value for the line labels that sit on it."""


def unit_for(span: float) -> int:
    """The power of 1024 whose unit suits `span` bytes (Rule 1)."""
    power = 0
    while power < len(UNITS) - 1 and span >= 1024 ** (power + 1):
        power += 1
    return power


def nice_step(span: float) -> tuple[float, int]:
    """(step in bytes, unit power) for a span in bytes (Rule 1)."""
    power = unit_for(span)
    raw = max(span / 1024**power / TARGET_TICKS, 1e-9)
    decade = 10 ** math.floor(math.log10(raw))
    mult = next((m for m in (1, 2, 5, 10) if m * decade >= raw), 10)
    return mult * decade * 1024**power, power


def axis_top(tallest: float) -> float:
    """The top of a byte axis from 0 that shows `tallest` bytes with room above it (Rule 2)."""
    top = max(tallest, 1.0) * (1 + HEADROOM)
    while True:  # the axis ticks by the step of its own span: round up until the top is one
        step, _ = nice_step(top)
        rounded = math.ceil(top / step - 1e-9) * step
        if rounded == top:
            return top
        top = rounded
