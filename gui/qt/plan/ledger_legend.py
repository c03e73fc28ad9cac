"""The ledger chart's legend: a Qt list beside the chart, a swatch and the line's name each, top-down.

Rule 1: it sits outside the chart's scene, as wide as its longest name, and scrolls vertically when
        the chart is short. Inside the scene a short chart had to lay its legend out in two columns,
        which with the Measured bar's lines left the bars under a third of the chart's width and
        their column labels overlapping at 1280 × 720.
Rule 2: each entry's swatch and name carry the core's one sentence for that line (`line_tooltip`).
Rule 3: exports draw it beside the chart (`paint_beside`), every entry, whatever the scroll shows.
"""

from __future__ import annotations

from typing import Sequence

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from gguf_budget.core.views.ledger_names import line_name, line_tooltip

from gguf_budget.gui.qt.named import named
from gguf_budget.gui.qt.theme import ledger_colour

SWATCH = 12


class LedgerLegend(QScrollArea):
    """Rule 1: the list, vertical scroll only."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("ledgerLegend")
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setBackgroundRole(QPalette.ColorRole.Base)  # of a piece with the chart beside it
        self._lines: tuple[str, ...] = ()
        self.entries: list[tuple[QLabel, QLabel]] = []
        self._fill()

    def set_lines(self, lines: Sequence[str]) -> None:
        """List `lines` top-down (a no-op when they are the ones listed)."""
        if tuple(lines) != self._lines:
            self._lines = tuple(lines)
            self._fill()

    def _fill(self) -> None:
        inner = QWidget()
        inner.setBackgroundRole(QPalette.ColorRole.Base)
        rows = QVBoxLayout(inner)
        rows.setContentsMargins(6, 6, 6, 6)
        rows.setSpacing(3)
        self.entries = []
        for line in self._lines:
            swatch = named(QLabel(inner), f"legendSwatch_{line}")
            swatch.setFixedSize(SWATCH, SWATCH)
            swatch.setStyleSheet(f"background-color: {ledger_colour(line).name()};")
            label = QLabel(line_name(line), inner)
            label.setTextFormat(Qt.TextFormat.PlainText)
            for item in (swatch, label):  # Rule 2
                item.setToolTip(line_tooltip(line))
            row = QHBoxLayout()
            row.setSpacing(6)
            row.addWidget(swatch)
            row.addWidget(label, 1)
            rows.addLayout(row)
            self.entries.append((swatch, label))
        rows.addStretch(1)
        self.setWidget(inner)
        self._inner = inner
        bar = self.verticalScrollBar().sizeHint().width()
        self.setFixedWidth(inner.sizeHint().width() + bar)  # room for the bar, so a scroll never cuts a name

    def names(self) -> tuple[str, ...]:
        return tuple(label.text() for _, label in self.entries)

    def tooltips(self) -> tuple[str, ...]:
        return tuple(label.toolTip() for _, label in self.entries)

    def whole_size(self) -> tuple[int, int]:
        """The list's size with every entry shown (Rule 3): never below its layout's minimum, so all of it. A legend
        never shown (a chart exported on its own) is laid out at its own size first."""
        inner = self._inner
        if not inner.isVisible():
            inner.resize(inner.sizeHint())
        return inner.width(), inner.height()

    def paint_beside(self, painter: QPainter, x: int) -> None:
        """Rule 3: draw every entry with `painter`, its left edge at `x`."""
        self._inner.render(painter, QPoint(x, 0))
