"""A one-line label that never clips: when its text is wider than its room it ends in "…", and
its tooltip holds the whole text.

Rule 1: `text()` is always the whole text (what tests and Copy read); only the painting elides,
        and the tooltip always holds the whole text (or a longer one the owner gives).
Rule 2: it asks for its whole text but can shrink to `min_chars` average characters (or its text,
        if shorter), so a long text never widens the window; the layout gives it what room there is.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    """Rules 1–2."""

    def __init__(self, parent: QWidget | None = None, min_chars: int = 12):
        super().__init__(parent)
        self._min_chars = min_chars
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)

    def setText(self, text: str, tip: str | None = None) -> None:  # noqa: N802 - Qt's name
        """A text and tooltip as they are already is no change: no new size, no repaint (a tick sets every line)."""
        tip = text if tip is None else tip
        if text == self.text() and tip == self.toolTip():
            return
        super().setText(text)
        self.setToolTip(tip)
        self.updateGeometry()

    def is_elided(self) -> bool:
        """Whether the text is wider than the room it has (then the tooltip holds it whole)."""
        return self.fontMetrics().horizontalAdvance(self.text()) > self.contentsRect().width()

    def shown_text(self) -> str:
        """What is painted: the text, or its start and "…"."""
        return self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, self.contentsRect().width())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        least = min(self.fontMetrics().horizontalAdvance(self.text()) + 2, self.fontMetrics().averageCharWidth() * self._min_chars)
        return QSize(least, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(self.fontMetrics().horizontalAdvance(self.text()) + 2, super().sizeHint().height())

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        painter.setFont(self.font())
        painter.setPen(self.palette().color(self.foregroundRole()))
        flags = int(self.alignment() | Qt.AlignmentFlag.AlignVCenter)
        painter.drawText(self.contentsRect(), flags, self.shown_text())
