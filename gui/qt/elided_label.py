"""A one-line label that never clips: when its text is wider than its room it ends in "…", and
its tooltip holds the whole text.

Rule 1: `text()` is always the whole text (what tests and Copy read); only the painting elides,
        and the tooltip always holds the whole text (or a longer one the owner gives).
Rule 2: its size does not depend on its text: one line tall, and as wide as `min_chars` average
        characters at least, the layout giving it what room there is (a stretch beside it, or
        its own). So a long text never widens the window, and a new text asks for no new layout:
        QLabel's own setText always does (and Qt then lays out every layout up to the window), so
        the text is kept here and painted here, and QLabel's is left empty. Screen readers read
        the text as the label's accessible name.
Rule 3: what is painted is worked out once per text, width and font, not in each paint. A new text of a line
        painted elided is elided at once: when its painted line is the same (it differs only past the "…", as a
        headline title's exact sizes do on most ticks) nothing is repainted, the pixels would be the same. A line
        painted whole repaints with its new text, worked out by the paint; a new width or font repaints through
        Qt's own events.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    """Rules 1–2."""

    def __init__(self, parent: QWidget | None = None, min_chars: int = 12):
        super().__init__(parent)
        self._min_chars = min_chars
        self._text = ""
        self._fonts = 0  # Rule 3: the font changes met (a count, as a font's key takes longer to make than to compare)
        self._shown: tuple[tuple[str, int, int], str] = (("", -1, -1), "")  # Rule 3: (text, width, font), shown
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

    def text(self) -> str:
        """The whole text (Rule 1)."""
        return self._text

    def setText(self, text: str, tip: str | None = None) -> None:  # noqa: N802 - Qt's name
        """A new text repaints this line and nothing else (Rule 2), and only when what is painted changes (Rule 3);
        the same text and tooltip is no change."""
        tip = text if tip is None else tip
        if text == self._text and tip == self.toolTip():
            return
        if text != self._text:
            key, painted = self._shown  # what the last paint (or setText) worked out
            elided = key[0] == self._text and painted != self._text
            self._text = text
            self.setAccessibleName(text)
            # a line painted whole changes with its text; an elided one only if its start or the room changed
            if not elided or self.shown_text() != painted or self._shown[0][1:] != key[1:]:
                self.update()
        self.setToolTip(tip)

    def is_elided(self) -> bool:
        """Whether the text is wider than the room it has (then the tooltip holds it whole)."""
        return self.fontMetrics().horizontalAdvance(self._text) > self.contentsRect().width()

    def shown_text(self) -> str:
        """What is painted: the text, or its start and "…" (Rule 3: worked out once per text, width and font)."""
        key = (self._text, self.contentsRect().width(), self._fonts)
        if key != self._shown[0]:
            self._shown = (key, self.fontMetrics().elidedText(self._text, Qt.TextElideMode.ElideRight, key[1]))
        return self._shown[1]

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(self.fontMetrics().averageCharWidth() * self._min_chars, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return self.minimumSizeHint()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.FontChange:  # Rule 3: every new font, set or inherited or a style sheet's
            self._fonts += 1
        super().changeEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        painter.setFont(self.font())
        painter.setPen(self.palette().color(self.foregroundRole()))
        flags = int(self.alignment() | Qt.AlignmentFlag.AlignVCenter)
        painter.drawText(self.contentsRect(), flags, self.shown_text())
