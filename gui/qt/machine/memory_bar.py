"""One memory pool as a horizontal bar: used | reserve | usable, with a tick where the need ends.

Fed a `PoolBar` from the core; draws proportions of its total. The need tick sits at
used + reserve + need: past the bar's end means the placement does not fit that pool.

Rule 1: a new pool whose segments are the bar's repaints only what moved: a ctx tick moves the need tick alone, and
        the bar repainted its whole width (and its parents' ground under it, the bar not being opaque) for a tick
        3 px wide. Where the tick was and where it is now are repainted (`TICK_REACH` either side); the same pool
        repaints nothing.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QGridLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from gguf_budget.core.views.machine_view import POOL_LEGEND, PoolBar

from gguf_budget.gui.qt.theme import MEMORY_COLOURS
from gguf_budget.gui.qt.named import named
from gguf_budget.gui.qt.row_box import RowBox

SEGMENTS = ("used", "reserve", "usable")
LEGEND_COLUMNS = 2
FILLS = tuple(QColor(MEMORY_COLOURS[name]) for name in SEGMENTS)
TICK_WIDTH = 3
TICK_REACH = 3
"""Pixels either side of the need tick's x that its pen may touch (Rule 1)."""


class _Bar(QWidget):
    def __init__(self, parent: QWidget):
        super().__init__(parent)
        self.pool: PoolBar | None = None
        self.setMinimumHeight(16)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        return QSize(240, 16)

    def show_pool(self, pool: PoolBar) -> None:
        """Rule 1: repaint what the new pool moves."""
        before, self.pool = self.pool, pool
        if before == pool:
            return
        if before is None or (before.total, before.used, before.reserve, before.usable) != (
                pool.total, pool.used, pool.reserve, pool.usable):
            self.update()
            return
        for x in (self.tick_x(before), self.tick_x(pool)):
            if x is not None:
                self.update(QRect(x - TICK_REACH, 0, 2 * TICK_REACH + 1, self.height()))

    def tick_x(self, pool: PoolBar | None) -> int | None:
        """Where the pool's need tick is drawn; None where none is."""
        if pool is None or pool.total <= 0 or pool.need is None:
            return None
        return int(min((pool.used + pool.reserve + pool.need) * (self.width() / pool.total), self.width() - 2))

    def paintEvent(self, event: QPaintEvent) -> None:
        pool = self.pool
        if pool is None or pool.total <= 0:
            return
        painter = QPainter(self)
        scale = self.width() / pool.total
        x = 0.0
        for fill, n in zip(FILLS, (pool.used, pool.reserve, pool.usable), strict=True):
            painter.fillRect(QRectF(x, 0, n * scale, self.height()), fill)
            x += n * scale
        tick = self.tick_x(pool)
        if tick is not None:
            painter.setPen(QPen(self.palette().color(QPalette.ColorRole.WindowText), TICK_WIDTH))
            painter.drawLine(tick, 0, tick, self.height())
        painter.end()


class MemoryBar(QWidget):
    """Label, bar and caption of one pool; `pool()` is what is drawn."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.title = QLabel(self)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.bar = _Bar(self)
        self.caption = QLabel(self, wordWrap=True)
        self.caption.setTextFormat(Qt.TextFormat.PlainText)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 2)
        layout.setSpacing(2)
        layout.addWidget(RowBox(self.title, self))  # a new title or caption of as many lines lays nothing out
        layout.addWidget(self.bar)
        layout.addWidget(RowBox(self.caption, self))

    def set_pool(self, pool: PoolBar) -> None:
        self.title.setText(pool.label)
        self.caption.setText(pool.caption)
        self.bar.setToolTip(f"{pool.used:,} B used · {pool.reserve:,} B reserve · {pool.usable:,} B usable")
        self.bar.show_pool(pool)

    def pool(self) -> PoolBar | None:
        return self.bar.pool


class MemoryLegend(QWidget):
    """What the bars' colours and tick mean (`machine_view.POOL_LEGEND`): a swatch and words each."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("memoryLegend")
        layout = QGridLayout(self)  # two entries a row, words wrapped: as narrow as the side panel
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setHorizontalSpacing(4)
        layout.setVerticalSpacing(0)
        self.entries: dict[str, QLabel] = {}
        for i, (key, words) in enumerate(POOL_LEGEND):
            row, column = divmod(i, LEGEND_COLUMNS)
            if key in MEMORY_COLOURS:
                swatch = named(QLabel(self), f"legendSwatch_{key}")
                swatch.setFixedSize(10, 10)
                swatch.setStyleSheet(f"background-color: {MEMORY_COLOURS[key]};")
                layout.addWidget(swatch, row, 2 * column)
            label = named(QLabel(words, self, wordWrap=True), f"legend_{key}")
            label.setTextFormat(Qt.TextFormat.PlainText)
            layout.addWidget(label, row, 2 * column + 1)
            self.entries[key] = label
        for column in range(LEGEND_COLUMNS):
            layout.setColumnStretch(2 * column + 1, 1)

    def swatch_colour(self, key: str) -> str:
        """The colour a segment's swatch shows (what the bar paints that segment in)."""
        swatch = self.findChild(QLabel, f"legendSwatch_{key}")
        return swatch.styleSheet().split(":")[1].strip(" ;") if swatch is not None else ""
