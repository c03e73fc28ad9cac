"""The ledger as stacked bars: one column per ledger (this plan, the minimum configuration).

The chart is fed plain numbers — `(line, bytes)` pairs in ledger order — and draws them;
it computes no bytes. Segments stack bottom-up in ledger order, so a column's top is the
ledger's total. A horizontal line marks the budget (hidden when unlimited) and a dashed
one the minimum-configuration total; the two share one label when they are close. Hovering a segment shows its exact
bytes. The legend is a Qt list beside the chart (`ledger_legend`), so the bars keep the chart's whole width however
short the chart; lines named `optional` (the Measured column's) are listed in it only while some column draws them.

Rule 1: the chart is one widget painted with QPainter, not a plotting library's scene: a few rectangles, lines and
        labels. pyqtgraph's scene cost ~4 ms of every slider tick on the 80-layer model (measured with the chart
        hidden: budget tick p50 11.5 → 6.9 ms) and importing it ~350 ms of every launch. `paint` draws the
        whole chart on any painter, so the screen, the PNG and the SVG export are one drawing.
Rule 2: the y axis runs from 0 to `axis_top` of the tallest of the columns, the minimum and (unless zoomed to the
        plan) the budget; its ticks fall on round binary sizes (`core.units` Rule 5). The x axis holds the
        columns at 0, 1, … with half a column and 5% of the span either side.
Rule 3: on screen the ground (the background, the grid, the axes and their labels) is kept as a pixmap and
        painted again only when what it shows changes (the size, the axis top, the column labels, the palette,
        the font): a slider tick moves the bars and lines under an unchanged axis, and its labels were a third of
        the chart's paint (~0.3 ms a tick on the 80-layer model). The pixmap is `paint_ground`'s drawing, so the
        screen shows the pixels the exports do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from PySide6.QtCore import QEvent, QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush, QColor, QFontMetricsF, QHelpEvent, QMouseEvent, QPainter, QPaintEvent, QPalette, QPen, QPixmap,
)
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from gguf_budget.core.units import human_bytes
from gguf_budget.core.units import AXIS_UNITS, axis_top, nice_step
from gguf_budget.core.views.ledger_names import line_name, line_tooltip

from gguf_budget.gui.qt.plan.ledger_legend import LedgerLegend
from gguf_budget.gui.qt.theme import ledger_colour

Items = Sequence[tuple[str, int]]
_WIDTH = 0.6
MIN_HEIGHT = 150
"""Low enough for 1280 × 720 with a dock open."""
BOTTOM_AXIS_HEIGHT = 40
PAD = 8
"""Pixels between the plot and the widget's top and right edges, and between an axis and its labels."""
X_PADDING = 0.05
GRID_SHARE = 0.25
"""How much of the text colour the grid lines take, the rest being the background's: mixed here, so the lines are
opaque (Qt's raster engine draws a translucent line ~20× slower, ~0.2 ms each)."""


def _two_lines(label: str) -> str:
    """A long column label on two lines, so it fits under a narrow column ('Minimum\nconfiguration')."""
    head, space, tail = label.partition(" ")
    return f"{head}\n{tail}" if space and len(label) > 12 else label


MINIMUM_LABEL_X = _WIDTH / 2 + 0.05
"""Where the minimum's label starts, in column units: just right of the first bar ("This plan"). Above the
line there it lies over the minimum configuration's own column, which ends at the line: no bar reaches it."""
MINIMUM_HANGS = 0.9
"""Above this share of the chart's height the minimum's label hangs below its line at the left, inside the chart."""
LABEL_INSET = 0.03
"""Share of the plot's width between a line's label and the plot's side."""

SHARED_LABEL_GAP = 0.15
"""Budget and minimum lines closer than this share of the chart's height share one label (the budget's):
two labels that close would overlap in a narrow chart."""


@dataclass(frozen=True)
class LineMark:
    """A labelled horizontal line as drawn: its height in bytes (the top when its value lies above the zoomed
    chart; None: hidden) and its label ('' when the other line's label says it)."""

    value: float | None
    text: str


HIDDEN = LineMark(None, "")


def y_ticks(top: float) -> list[tuple[float, str]]:
    """(bytes, label) of each tick from 0 to `top` (Rule 2)."""
    step, power = nice_step(max(top, 1.0))
    unit = 1024**power
    count = int(top // step + 1e-9) + 1
    return [(i * step, f"{i * step / unit:g} {AXIS_UNITS[power]}") for i in range(count)]


class LedgerChart(QWidget):
    """Stacked ledger bars with the budget line, the minimum marker and hover values; `legend` lists the lines
    top-down in the order the segments stack bottom-up. The chart makes it; its parent places it beside the chart."""

    def __init__(self, lines: Sequence[str], parent: QWidget | None = None, optional: Sequence[str] = ()):
        super().__init__(parent)
        self.setObjectName("ledgerChart")
        self.setMinimumSize(240, MIN_HEIGHT)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMouseTracking(True)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)  # `paint` fills every pixel
        self.legend = LedgerLegend(parent)
        self._lines = tuple(lines)
        self._optional = frozenset(optional)
        self._columns: list[tuple[str, tuple[tuple[str, int], ...]]] = []
        self._segments: dict[str, tuple[list[float], list[float]]] = {}
        self._top = axis_top(1)
        self._marks: tuple[int | None, int | None] = (None, None)
        self._drawn_marks = (HIDDEN, HIDDEN)
        self._zoom = False
        self._drawn: object = None
        self._hovered: str | None = None
        self.hover_text = ""
        self._ground: tuple[object, QPixmap, QRectF] | None = None
        self._fill_legend(())

    def _fill_legend(self, drawn_optional: Sequence[str]) -> None:
        self.legend.set_lines([line for line in reversed(self._lines)
                               if line not in self._optional or line in drawn_optional])

    def legend_tooltips(self) -> tuple[str, ...]:
        """Each legend entry's tooltip, top-down (the swatch's and the name's are the same)."""
        return self.legend.tooltips()

    def legend_lines(self) -> tuple[str, ...]:
        """The lines listed in the legend now, top-down."""
        return self.legend.names()

    def legend_names(self) -> list[str]:
        """The legend's labels, top-down."""
        return list(self.legend.names())

    # -- what is drawn ----------------------------------------------------------------

    def show_ledgers(self, columns: Sequence[tuple[str, Items]], budget: int | None, minimum: int | None) -> None:
        """Draw one stacked column per (label, items); `budget` None hides the budget line. Repaints only when
        something drawn changed."""
        self._columns = [(label, tuple(items)) for label, items in columns]
        self._segments = {line: self._stack(line) for line in self._lines}
        self._fill_legend([line for line in self._lines if line in self._optional and any(self._segments[line][1])])
        self._marks = (budget, minimum)
        tops = [sum(n for _, n in items) for _, items in self._columns]
        self._top = axis_top(max(tops + [minimum or 0, 1] + ([] if self._zoom else [budget or 0])))
        close = budget is not None and minimum is not None and abs(budget - minimum) < SHARED_LABEL_GAP * self._top
        self._drawn_marks = (
            self._mark("budget", budget, f" · minimum {human_bytes(minimum)}" if close and minimum is not None else ""),
            self._mark("minimum", minimum, None if close else ""))
        drawn = (tuple(self._columns), self._top, self._drawn_marks)
        if drawn != self._drawn:
            self._drawn = drawn
            self.update()

    def _mark(self, label: str, value: int | None, more: str | None) -> LineMark:
        """`more`: text after the label's own (None: no label — the other line's says it, the two being close)."""
        if value is None:
            return HIDDEN
        above = value > self._top
        text = f"{label} {human_bytes(value)}{' ↑ above the zoomed chart' if above else ''}"
        return LineMark(self._top if above else float(value), "" if more is None else text + more)

    def set_zoom(self, on: bool) -> None:
        """Zoom to the plan: the axis ends above the tallest column, not at the budget, so a plan far under a
        large budget is a bar, not a sliver; a budget above the top is pinned to it, labelled ↑."""
        self._zoom = on
        if self._columns or any(self._marks):
            self.show_ledgers(self._columns, *self._marks)

    def top(self) -> float:
        """The y axis's top in bytes (Rule 2)."""
        return self._top

    def marks(self) -> tuple[LineMark, LineMark]:
        """The budget line and the minimum line, as drawn."""
        return self._drawn_marks

    def _stack(self, line: str) -> tuple[list[float], list[float]]:
        y0, heights = [], []
        for _, items in self._columns:
            below = 0
            value = 0
            for name, n in items:
                if name == line:
                    value = n
                    break
                below += n
            y0.append(float(below))
            heights.append(float(value))
        return y0, heights

    def segment(self, column: int, line: str) -> tuple[float, float]:
        """(bottom, height) of one drawn segment."""
        bottoms, heights = self._segments[line]
        return bottoms[column], heights[column]

    def segment_at(self, x: float, y: float) -> tuple[int, str] | None:
        """The (column, line) drawn under a point in data coordinates, if any."""
        column = round(x)
        if not 0 <= column < len(self._columns) or abs(x - column) > _WIDTH / 2:
            return None
        for line in self._lines:
            bottom, height = self.segment(column, line)
            if height > 0 and bottom <= y < bottom + height:
                return column, line
        return None

    def _segment_text(self, column: int, line: str) -> str:
        """The tooltip text of one drawn segment."""
        label, items = self._columns[column]
        n = dict(items)[line]
        return f"{label} · {line_name(line)}: {human_bytes(n)} ({n:,} bytes)\n{line_tooltip(line)}"

    # -- where things are drawn -------------------------------------------------------

    def _x_range(self) -> tuple[float, float]:
        lo, hi = -0.5, max(0.5, len(self._columns) - 0.5)
        pad = X_PADDING * (hi - lo)
        return lo - pad, hi + pad

    def plot_rect(self, width: float | None = None, height: float | None = None) -> QRectF:
        """The area the bars are drawn in, inside a chart of this size (default: the widget's)."""
        w = float(self.width() if width is None else width)
        h = float(self.height() if height is None else height)
        metrics = QFontMetricsF(self.font())
        left = max(metrics.horizontalAdvance(text) for _, text in y_ticks(self._top)) + 2 * PAD
        return QRectF(left, PAD, max(w - left - PAD, 1.0), max(h - PAD - BOTTOM_AXIS_HEIGHT, 1.0))

    def to_pixel(self, x: float, y: float, plot: QRectF | None = None) -> QPointF:
        """A point in data coordinates (column, bytes) on the widget."""
        plot = plot or self.plot_rect()
        lo, hi = self._x_range()
        return QPointF(plot.left() + (x - lo) / (hi - lo) * plot.width(),
                       plot.bottom() - y / self._top * plot.height())

    def to_data(self, point: QPointF) -> tuple[float, float]:
        """A point on the widget in data coordinates (column, bytes)."""
        plot = self.plot_rect()
        lo, hi = self._x_range()
        return (lo + (point.x() - plot.left()) / plot.width() * (hi - lo),
                (plot.bottom() - point.y()) / plot.height() * self._top)

    def column_labels(self, plot: QRectF | None = None) -> list[tuple[QRectF, str]]:
        """Each column's label and the rectangle it is drawn in, under the plot."""
        plot = plot or self.plot_rect()
        metrics = QFontMetricsF(self.font())
        placed = []
        for i, (label, _) in enumerate(self._columns):
            text = _two_lines(label)
            size = metrics.size(0, text)
            centre = self.to_pixel(i, 0, plot).x()
            placed.append((QRectF(centre - size.width() / 2, plot.bottom() + PAD / 2, size.width(), size.height()), text))
        return placed

    # -- drawing ----------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        ground, plot = self._kept_ground()
        painter.drawPixmap(0, 0, ground)
        self._paint_data(painter, plot)
        painter.end()

    def _kept_ground(self) -> tuple[QPixmap, QRectF]:
        """Rule 3: the ground as last painted and its plot area, or painted again where what it shows changed."""
        ratio = self.devicePixelRatioF()
        key = (self.width(), self.height(), ratio, self._top, tuple(label for label, _ in self._columns),
               self.palette().cacheKey(), self.font().key())
        if self._ground is None or self._ground[0] != key:
            pixmap = QPixmap(round(self.width() * ratio), round(self.height() * ratio))
            pixmap.setDevicePixelRatio(ratio)
            painter = QPainter(pixmap)
            self.paint_ground(painter, float(self.width()), float(self.height()))
            painter.end()
            self._ground = (key, pixmap, self.plot_rect())
        return self._ground[1], self._ground[2]

    def paint(self, painter: QPainter, width: float, height: float) -> None:
        """Rule 1: the whole chart at (0, 0)–(width, height) on `painter`: the widget, a PNG or an SVG."""
        self.paint_ground(painter, width, height)
        self._paint_data(painter, self.plot_rect(width, height))

    def paint_ground(self, painter: QPainter, width: float, height: float) -> None:
        """The background, the grid and the axes with their labels: what the bars and lines are drawn over."""
        pal = self.palette()
        base = pal.color(QPalette.ColorRole.Base)
        painter.fillRect(QRectF(0, 0, width, height), base)
        painter.setFont(self.font())
        self._paint_axes(painter, self.plot_rect(width, height), QColor(pal.color(QPalette.ColorRole.WindowText)), base)

    def _paint_data(self, painter: QPainter, plot: QRectF) -> None:
        """The bars, the budget and minimum lines and their labels, inside `plot`."""
        pal = self.palette()
        painter.setFont(self.font())
        self._paint_bars(painter, plot, pal.color(QPalette.ColorRole.Base))
        self._paint_marks(painter, plot, QColor(pal.color(QPalette.ColorRole.WindowText)))

    def _paint_axes(self, painter: QPainter, plot: QRectF, text: QColor, base: QColor) -> None:
        grid = _mixed(base, text, GRID_SHARE)
        metrics = QFontMetricsF(self.font())
        for value, label in y_ticks(self._top):
            y = self.to_pixel(0, value, plot).y()
            painter.setPen(QPen(grid, 0))
            painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
            painter.setPen(QPen(text, 0))
            painter.drawLine(QPointF(plot.left() - PAD / 2, y), QPointF(plot.left(), y))
            box = QRectF(0, y - metrics.height() / 2, plot.left() - PAD, metrics.height())
            painter.drawText(box, int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), label)
        painter.setPen(QPen(text, 0))
        painter.drawLine(plot.bottomLeft(), plot.topLeft())
        painter.drawLine(plot.bottomLeft(), plot.bottomRight())
        for rect, label in self.column_labels(plot):
            painter.drawText(rect, int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop), label)

    def _paint_bars(self, painter: QPainter, plot: QRectF, outline: QColor) -> None:
        painter.setPen(QPen(outline, 0))
        half = _WIDTH / 2
        for line, (bottoms, heights) in self._segments.items():
            painter.setBrush(QBrush(ledger_colour(line)))
            for x, (bottom, height) in enumerate(zip(bottoms, heights, strict=True)):
                if height > 0:
                    painter.drawRect(QRectF(self.to_pixel(x - half, bottom + height, plot),
                                            self.to_pixel(x + half, bottom, plot)))
        painter.setBrush(Qt.BrushStyle.NoBrush)

    def _paint_marks(self, painter: QPainter, plot: QRectF, text: QColor) -> None:
        budget, minimum = self._drawn_marks
        for mark, style, width in ((minimum, Qt.PenStyle.DashLine, 1.2), (budget, Qt.PenStyle.SolidLine, 2.0)):
            if mark.value is not None:
                y = self.to_pixel(0, mark.value, plot).y()
                pen = QPen(text, width, style)
                pen.setCosmetic(True)
                painter.setPen(pen)
                painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
        painter.setPen(QPen(text, 0))
        for rect, label in self.mark_labels(plot):
            painter.drawText(rect, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), label)

    def mark_labels(self, plot: QRectF | None = None) -> list[tuple[QRectF, str]]:
        """Each line's label and the rectangle it is drawn in. The budget's hangs below its line at the right; the
        minimum's sits above its line just right of the first bar, or hangs below it at the left near the top of the
        chart (MINIMUM_HANGS)."""
        plot = plot or self.plot_rect()
        metrics = QFontMetricsF(self.font())
        inset = LABEL_INSET * plot.width()
        placed = []
        for mark, budget in zip(self._drawn_marks, (True, False), strict=True):
            if mark.value is None or not mark.text:
                continue
            y = self.to_pixel(0, mark.value, plot).y()
            width, height = metrics.horizontalAdvance(mark.text) + 2, metrics.height()
            if budget:
                x = plot.right() - inset - width
            elif mark.value > MINIMUM_HANGS * self._top:
                x = plot.left() + inset
            else:
                x, y = self.to_pixel(MINIMUM_LABEL_X, 0, plot).x(), y - height
            placed.append((QRectF(x, y, width, height), mark.text))
        return placed

    # -- hover ------------------------------------------------------------------------

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        """Keep the hovered segment's text; the tooltip shows it."""
        hit = self.segment_at(*self.to_data(event.position()))
        self.hover_text = "" if hit is None else self._segment_text(*hit)
        self._hovered = None if hit is None else hit[1]
        super().mouseMoveEvent(event)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            hit = self.segment_at(*self.to_data(QPointF(event.pos())))
            if hit is None:
                QToolTip.hideText()
                event.ignore()
            else:
                QToolTip.showText(event.globalPos(), self._segment_text(*hit), self)
            return True
        return super().event(event)

    def leaveEvent(self, event: QEvent) -> None:
        self.hover_text, self._hovered = "", None
        super().leaveEvent(event)

    def tooltip(self, line: str) -> str:
        """The tooltip shown over this line's segments now."""
        return self.hover_text if self._hovered == line else ""

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.FontChange):
            self.update()
        super().changeEvent(event)


def _mixed(base: QColor, over: QColor, share: float) -> QColor:
    """`share` of `over` on `base`, as one opaque colour."""
    return QColor.fromRgbF(*(b + (o - b) * share for b, o in ((base.redF(), over.redF()), (base.greenF(), over.greenF()),
                                                               (base.blueF(), over.blueF()))))
