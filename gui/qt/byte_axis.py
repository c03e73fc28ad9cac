"""A pyqtgraph axis whose ticks fall on round binary sizes (256 MiB, 2 GiB, …).

pyqtgraph's default ticks are decimal (0.5e9, 1e9, …), which print as awkward binary
sizes. Here the unit (B, KiB, MiB, GiB, TiB) is chosen from the visible span, and the
step is 1, 2 or 5 times a power of ten of that unit, aiming for about five ticks.
"""

from __future__ import annotations

import math

import pyqtgraph as pg

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")
_TARGET_TICKS = 5


def _unit_for(span: float) -> int:
    power = 0
    while power < len(_UNITS) - 1 and span >= 1024 ** (power + 1):
        power += 1
    return power


def nice_step(span: float) -> tuple[float, int]:
    """(step in bytes, unit power) for a span in bytes."""
    power = _unit_for(span)
    raw = max(span / 1024**power / _TARGET_TICKS, 1e-9)
    decade = 10 ** math.floor(math.log10(raw))
    mult = next((m for m in (1, 2, 5, 10) if m * decade >= raw), 10)
    return mult * decade * 1024**power, power


class ByteAxis(pg.AxisItem):
    """Left axis in bytes, labelled in the binary unit that suits the span."""

    def __init__(self, orientation: str = "left", **kw):
        super().__init__(orientation, **kw)
        self.enableAutoSIPrefix(False)
        self._power = 0

    def tickValues(self, minVal: float, maxVal: float, size: float):
        span = max(maxVal - minVal, 1.0)
        step, self._power = nice_step(span)
        first = math.ceil(minVal / step) * step
        count = int((maxVal - first) // step) + 1
        return [(step, [first + i * step for i in range(max(count, 0))])]

    def tickStrings(self, values, scale, spacing):
        unit = 1024**self._power
        return [f"{v / unit:g} {_UNITS[self._power]}" for v in values]
