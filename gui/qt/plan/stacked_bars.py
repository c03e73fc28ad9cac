"""Every segment of the ledger columns as one graphics item.

One item instead of one pyqtgraph `BarGraphItem` per ledger line: pyqtgraph asks each item
for its bounding rect many times per repaint, and a `BarGraphItem` computes it from the
view's pixel size every time (measured: ~57 calls and ~3 ms per budget tick for nine items).
This item's rect is the data's and is computed once per new set of segments; outlines are
cosmetic, so no pixel padding is needed.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QBrush, QColor, QPainter, QPen


@dataclass(frozen=True)
class Segment:
    """One drawn rectangle: its column's centre, bottom, height and colour."""

    x: float
    bottom: float
    height: float
    colour: QColor


class StackedBars(pg.GraphicsObject):
    """Rectangles of a fixed width centred on their column, painted in one pass."""

    def __init__(self, width: float):
        super().__init__()
        self._width = width
        self._segments: tuple[Segment, ...] = ()
        self._rect = QRectF()
        self._outline = QPen(QColor("white"))
        self._outline.setCosmetic(True)

    def set_segments(self, segments: tuple[Segment, ...]) -> None:
        self.prepareGeometryChange()
        self._segments = segments
        drawn = [s for s in segments if s.height > 0]
        if drawn:
            half = self._width / 2
            left, right = min(s.x for s in drawn) - half, max(s.x for s in drawn) + half
            top = max(s.bottom + s.height for s in drawn)
            self._rect = QRectF(left, 0.0, right - left, top)
        else:
            self._rect = QRectF()
        self.update()

    def set_outline(self, colour: QColor) -> None:
        self._outline.setColor(colour)
        self.update()

    def boundingRect(self) -> QRectF:
        return QRectF(self._rect)

    def paint(self, painter: QPainter, *args: object) -> None:
        painter.setPen(self._outline)
        half = self._width / 2
        for s in self._segments:
            if s.height > 0:
                painter.setBrush(QBrush(s.colour))
                painter.drawRect(QRectF(s.x - half, s.bottom, self._width, s.height))
