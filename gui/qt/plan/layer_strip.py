"""A strip of L cells, one per block: filled = pinned in RAM, hollow = streamed each token.

The planner pins layers 0..k−1, so the strip fills from the left. Each cell's tooltip
names the layer, its exact bytes (from the model) and whether it is pinned.

Rule 1: a new pinned count of the same layers repaints the cells between the old count and the new one, and a
        paint draws the cells its rectangle meets (and a neighbour either side, whose outline may reach it): a
        budget tick moves a few cells, and the whole 80-cell strip was drawn again (~0.9 ms, its translucent
        cells blended one by one).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QRectF, QSize
from PySide6.QtGui import QColor, QHelpEvent, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from gguf_budget.core.units import human_bytes

from gguf_budget.gui.qt.theme import PINNED_COLOUR, STREAMED_ALPHA, STREAMED_COLOUR, translucent

_GAP = 1.0


class LayerStrip(QWidget):
    """Draws which layers are pinned; `cells()` says the same in data."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("layerStrip")
        self.setMinimumHeight(22)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._layer_bytes: tuple[int, ...] = ()
        self._pinned = 0

    def set_layers(self, layer_bytes: tuple[int, ...], n_pinned: int) -> None:
        if layer_bytes == self._layer_bytes and n_pinned == self._pinned:
            return
        same_layers = layer_bytes == self._layer_bytes
        before, self._layer_bytes, self._pinned = self._pinned, layer_bytes, n_pinned
        self.setAccessibleDescription(f"{n_pinned} of {len(layer_bytes)} layers pinned")
        if same_layers:  # Rule 1
            first, last = self._cell_rect(min(before, n_pinned)), self._cell_rect(max(before, n_pinned) - 1)
            self.update(QRectF(first.topLeft(), last.bottomRight()).toAlignedRect().adjusted(-1, -1, 1, 1))
        else:
            self.update()

    def cells(self) -> tuple[bool, ...]:
        """True for each pinned layer, in layer order."""
        return tuple(i < self._pinned for i in range(len(self._layer_bytes)))

    def sizeHint(self) -> QSize:
        return QSize(320, 22)

    def _cell_rect(self, i: int) -> QRectF:
        w = self.width() / max(1, len(self._layer_bytes))
        return QRectF(i * w + _GAP / 2, 2, max(1.0, w - _GAP), self.height() - 4)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        outline = QPen(self.palette().color(QPalette.ColorRole.WindowText))
        outline.setWidthF(0.6)
        painter.setPen(outline)
        pinned, streamed = QColor(PINNED_COLOUR), translucent(STREAMED_COLOUR, STREAMED_ALPHA)
        n = len(self._layer_bytes)
        w = self.width() / max(1, n)
        area = event.rect()
        first, last = max(0, int(area.left() / w) - 1), min(n, int(area.right() / w) + 2)  # Rule 1
        for i in range(first, last):
            painter.fillRect(self._cell_rect(i), pinned if i < self._pinned else streamed)
            if n <= 160:
                painter.drawRect(self._cell_rect(i))
        painter.end()

    def event(self, event: QEvent) -> bool:
        if isinstance(event, QHelpEvent) and event.type() == QEvent.Type.ToolTip and self._layer_bytes:
            self._show_tooltip(event)
            return True
        return super().event(event)

    def _show_tooltip(self, event: QHelpEvent) -> None:
        n = len(self._layer_bytes)
        i = min(n - 1, max(0, int(event.pos().x() * n / max(1, self.width()))))
        state = "pinned in RAM" if i < self._pinned else "streamed every token"
        text = f"layer {i}: {human_bytes(self._layer_bytes[i])} ({self._layer_bytes[i]:,} bytes), {state}"
        QToolTip.showText(event.globalPos(), text, self)

