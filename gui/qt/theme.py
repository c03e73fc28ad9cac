"""Colours that stay readable on light and dark palettes, in one place.

Rule 1: ledger and memory colours are mid-luminance hues (Tableau 10 family), each with a
        contrast of at least MIN_CONTRAST:1 against both a white and a near-black (#1E1E1E)
        background (WCAG relative luminance); weights are blues/greens, the KV cache orange,
        fixed overheads reds/purples/grey.
Rule 2: bar segments are outlined in the chart's background (the palette's base colour), so adjacent segments
        separate in either palette without relying on hue alone.
Rule 3: banner states use dark saturated backgrounds with white text (contrast ≥ 4.5:1),
        independent of the palette.
Rule 4: one error colour for every one-line error label (load, budget, machine, compare),
        readable on both backgrounds; bold where the error replaces the view's content.
Rule 5: translucent fills (streamed layers, the sweep's impossible region) take their alpha
        from here, so a shade is tuned once.
"""

from __future__ import annotations

from PySide6.QtGui import QColor

from gguf_budget.core.views.plan_view import BannerState

LEDGER_COLOURS: dict[str, str] = {
    "base": "#79706E",
    "scratch": "#C78AB7",
    "logits": "#7E5BA6",
    "attn": "#3A9E98",
    "resid": "#E15759",
    "out_norm": "#B6992D",
    "embeddings": "#9C755F",
    "lm_head": "#59A14F",
    "kv": "#F18113",
    "ring": "#5EA7D8",
    "pinned": "#3B6AA0",
    # what llama.cpp measured (the Measured column): muted hues of the same families
    "Measured: weights": "#4E79A7",
    "Measured: repacked weights": "#6F8FAF",
    "Measured: KV cache": "#AA7733",
    "Measured: compute buffers": "#CC6677",
    "Measured: output buffer": "#8F6BB3",
    "Measured: rest of peak RSS": "#7F7F7F",
}
FALLBACK_COLOUR = "#9D9D9D"

BANNER_COLOURS: dict[BannerState, str] = {
    BannerState.FEASIBLE: "#1B7F3B",
    BannerState.SLOW: "#977000",
    BannerState.IMPOSSIBLE: "#B3261E",
    BannerState.OVERRIDDEN: "#A05F00",
    BannerState.UNLIMITED: "#2F5DA8",
    BannerState.ERROR: "#6B2C91",
    BannerState.EMPTY: "#5F6368",
}

MEMORY_COLOURS: dict[str, str] = {"used": "#79706E", "reserve": "#F18113", "usable": "#59A14F"}
ERROR_COLOUR = "#D93025"
STREAMED_ALPHA = 90
IMPOSSIBLE_ALPHA = 40
LIGHT_BACKGROUND, DARK_BACKGROUND = "#FFFFFF", "#1E1E1E"
MIN_CONTRAST = 2.5

PINNED_COLOUR = LEDGER_COLOURS["pinned"]
USABLE_MARK_COLOUR = MEMORY_COLOURS["usable"]
STREAMED_COLOUR = LEDGER_COLOURS["ring"]


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two '#RRGGBB' colours."""
    def luminance(c: str) -> float:
        channels = (int(c[i:i + 2], 16) / 255 for i in (1, 3, 5))
        r, g, b = (x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def ledger_colour(line: str) -> QColor:
    return QColor(LEDGER_COLOURS.get(line, FALLBACK_COLOUR))


def error_style(bold: bool = False) -> str:
    """The stylesheet of a one-line error label (Rule 4)."""
    return f"color: {ERROR_COLOUR};" + (" font-weight: bold;" if bold else "")


def translucent(colour: str, alpha: int) -> QColor:
    """`colour` with the given alpha (0–255), for fills drawn over a plot or a strip (Rule 5)."""
    shade = QColor(colour)
    shade.setAlpha(alpha)
    return shade


TIER_COLOURS: dict[str, str] = {"fits": "#1B7F3B", "tight": "#977000", "won't": "#B3261E", "unknown": "#5F6368"}
"""The three tiers (`core.fit.load_tier.LoadTier`) and no tier yet: green, amber, red, grey."""


def tier_style(selector: str) -> str:
    """A stylesheet colouring `selector` by its `tier` dynamic property (white text on the tier's colour)."""
    return "\n".join(f'{selector}[tier="{t}"] {{ background: {c}; color: white; }}' for t, c in TIER_COLOURS.items())
