"""How much of the screen the explorer takes: its first size and its docks' share (issue 17, item 3).

Rule 1: a window opens at DESIGN_SIZE where the screen's available area holds it; else each side
        shrinks to the available area (Qt keeps it at least at the window's own minimum, which is
        laid out to fit 1280 × 720).
Rule 2: a size the person left (the saved geometry) wins over Rule 1; the window restores it after.
Rule 3: a bottom dock opens at most DOCK_SHARE of the window's height and at least DOCK_FLOOR
        pixels, so the sweep dock leaves the plan above it room to be read.
Rule 4: a window is on screen frame included (issue 36, item 5): where its frame (title bar, borders)
        leaves the available area, its inside shrinks by the overflow and the frame moves inside.
Rule 5: a full-size view (Quants, Library) is its own window at VIEW_SHARE of the available area,
        centred, so at 1280 × 720 its table shows a dozen rows and more.
"""

from __future__ import annotations

DESIGN_SIZE = (1440, 900)
DOCK_SHARE = 0.3
DOCK_FLOOR = 150
VIEW_SHARE = 0.85

Rect = tuple[int, int, int, int]
"""x, y, width, height."""


def opening_size(available: tuple[int, int]) -> tuple[int, int]:
    """Rule 1: (width, height) for a screen whose available area is `available`."""
    return min(DESIGN_SIZE[0], available[0]), min(DESIGN_SIZE[1], available[1])


def dock_height(wanted: int, window_height: int) -> int:
    """Rule 3: the height a bottom dock that asks for `wanted` pixels opens at."""
    return max(min(wanted, int(window_height * DOCK_SHARE)), DOCK_FLOOR)


def on_screen(frame: Rect, inside: Rect, available: Rect) -> Rect:
    """Rule 4: the inside geometry that puts a window whose frame is `frame` around `inside` within `available`."""
    left, top = inside[0] - frame[0], inside[1] - frame[1]
    right, bottom = frame[2] - inside[2] - left, frame[3] - inside[3] - top
    width = min(inside[2], available[2] - left - right)
    height = min(inside[3], available[3] - top - bottom)
    x = min(max(frame[0], available[0]), available[0] + available[2] - (width + left + right))
    y = min(max(frame[1], available[1]), available[1] + available[3] - (height + top + bottom))
    return x + left, y + top, width, height


def view_geometry(available: Rect) -> Rect:
    """Rule 5: where a full-size view opens."""
    width, height = int(available[2] * VIEW_SHARE), int(available[3] * VIEW_SHARE)
    return available[0] + (available[2] - width) // 2, available[1] + (available[3] - height) // 2, width, height
