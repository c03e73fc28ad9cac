"""How much of the screen the explorer takes: its first size and its docks' share (issue 17, item 3).

Rule 1: a window opens at DESIGN_SIZE where the screen's available area holds it; else each side
        shrinks to the available area (Qt keeps it at least at the window's own minimum, which is
        laid out to fit 1280 × 720).
Rule 2: a size the person left (the saved geometry) wins over Rule 1; the window restores it after.
Rule 3: a bottom dock opens at most DOCK_SHARE of the window's height and at least DOCK_FLOOR
        pixels, so the sweep dock leaves the plan above it room to be read.
"""

from __future__ import annotations

DESIGN_SIZE = (1440, 900)
DOCK_SHARE = 0.3
DOCK_FLOOR = 150


def opening_size(available: tuple[int, int]) -> tuple[int, int]:
    """Rule 1: (width, height) for a screen whose available area is `available`."""
    return min(DESIGN_SIZE[0], available[0]), min(DESIGN_SIZE[1], available[1])


def dock_height(wanted: int, window_height: int) -> int:
    """Rule 3: the height a bottom dock that asks for `wanted` pixels opens at."""
    return max(min(wanted, int(window_height * DOCK_SHARE)), DOCK_FLOOR)
