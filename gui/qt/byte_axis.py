"""A pyqtgraph axis whose ticks fall on round binary sizes (256 MiB, 2 GiB, …).

pyqtgraph's default ticks are decimal (0.5e9, 1e9, …), which print as awkward binary
sizes. Where the ticks fall is the core's rule (`core.units` Rule 5).
"""

from __future__ import annotations

import math

import pyqtgraph as pg

from gguf_budget.core.units import AXIS_UNITS, nice_step


class ByteAxis(pg.AxisItem):
    """Left axis in bytes, labelled in the binary unit that suits the span."""

    def __init__(self, orientation: str = "left", **kw: object):
        super().__init__(orientation, **kw)
        self.enableAutoSIPrefix(False)
        self._power = 0

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, list[float]]]:
        span = max(maxVal - minVal, 1.0)
        step, self._power = nice_step(span)
        first = math.ceil(minVal / step) * step
        count = int((maxVal - first) // step) + 1
        return [(step, [first + i * step for i in range(max(count, 0))])]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        unit = 1024**self._power
        return [f"{v / unit:g} {AXIS_UNITS[self._power]}" for v in values]
