"""Untrusted text on widgets is plain text: escaped by the core's `safe_text`, never read as HTML.

Rule 1: a label that can show untrusted text (a file name, a model name, a GPU name, an error
        message quoting what was typed) is set to `Qt.TextFormat.PlainText`; left on Qt's
        automatic guess, a file called `<img src=x>.gguf` would be drawn as an image.
Rule 2: tooltips have no text format of their own, so `plain_tooltip` hands Qt text already
        converted from plain text (every `<` and `&` escaped).
"""

from __future__ import annotations

from PySide6.QtGui import Qt

from gguf_budget.core.safe_text import safe_text

TOOLTIP_LIMIT = 300


def plain_tooltip(value: object, limit: int = TOOLTIP_LIMIT) -> str:
    """A tooltip that shows `value` exactly as `safe_text` writes it, whatever markup it holds."""
    return Qt.convertFromPlainText(safe_text(value, limit), Qt.WhiteSpaceMode.WhiteSpaceNormal)
