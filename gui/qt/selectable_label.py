"""A label whose text the mouse can select, at the cost of a plain label while the mouse is elsewhere.

Qt lays a selectable label's text out through a text document: sizing a new text costs several times
what a plain label's does, and draws the same pixels. The side panel's dozen word-wrapped labels all
take a new text on each ctx tick, which made that layout the largest share of the tick.

Rule 1: the label is selectable while the mouse is over it, and while a selection made there stands:
        the person selects, copies and sees the I-beam as before.
Rule 2: a new text set while the mouse is elsewhere drops the selection (as any new text does) and
        the label is plain again until the mouse comes back.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QEnterEvent
from PySide6.QtWidgets import QLabel

SELECTABLE = Qt.TextInteractionFlag.TextSelectableByMouse
PLAIN = Qt.TextInteractionFlag.NoTextInteraction


class SelectableLabel(QLabel):
    """Rules 1–2."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._pointed = False

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        """Rule 2: a new text is laid out as a plain label's unless the mouse is on it."""
        if text != self.text() and not self._pointed:
            self.setTextInteractionFlags(PLAIN)
        super().setText(text)

    def is_selectable(self) -> bool:
        """Whether the mouse can select the text now (Rule 1)."""
        return bool(self.textInteractionFlags() & SELECTABLE)

    def enterEvent(self, event: QEnterEvent) -> None:  # noqa: N802 - Qt's name
        self._pointed = True
        self.setTextInteractionFlags(SELECTABLE)
        super().enterEvent(event)

    def leaveEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        self._pointed = False
        if not self.hasSelectedText():
            self.setTextInteractionFlags(PLAIN)
        super().leaveEvent(event)
