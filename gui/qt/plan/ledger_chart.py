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
        screen shows the pixels the exports do. The last `KEPT_GROUNDS` grounds are kept, each under what it shows:
        a budget drag moves the axis top back and forth over a few round sizes, and each new top cost a ground
        (~1.5 ms on the 80-layer model, one budget tick in six).
Rule 4: the bars are drawn one line at a time, one brush and one `drawRects` for the line's segments (one per
        column; columns never overlap, so the pixels are those of one rectangle at a time), placed with the
        arithmetic `to_pixel` does; a line no column draws sets no brush. Drawing them rectangle by rectangle
        through `to_pixel` was a quarter of the chart's paint.
Rule 5: a new drawing under the same ground repaints only where it differs from the last: where each segment, line
        and label is drawn is worked out once a drawing (`DataLayer`, which the paint then draws), and in each column
        the box around the segments that moved, came or went, each moved line and each moved or new label are
        repainted over a margin that holds their pen and glyphs (`DIRTY_MARGIN`); a new ground repaints the whole
        chart. A paint draws a label only where it is asked to paint. A ctx tick moves a few segments, the
        minimum's line and its label, and the chart blitted its whole ground and drew every bar again.
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

DIRTY_MARGIN = 4
"""Pixels around a segment, line or label that its drawing may touch (Rule 5): the outline's and the budget line's
pens, and glyphs that reach out of their line's box."""
KEPT_GROUNDS = 8
"""Grounds kept (Rule 3): ~1 MB each at the chart's usual size."""

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

Box = tuple[float, float, float, float]
"""x, y, width, height on the widget."""


@dataclass(frozen=True)
class DataLayer:
    """What `_paint_data` draws inside one plot (Rules 4–5): each line's segments as (column, box), bottom-up; the
    budget's and the minimum's line heights (None: hidden) across the plot's (left, width); each label's box and
    text."""

    bars: tuple[tuple[str, tuple[tuple[int, Box], ...]], ...]
    lines: tuple[float | None, float | None]
    span: tuple[float, float]
    labels: tuple[tuple[Box, str], ...]


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
        self._grounds: dict[object, tuple[QPixmap, QRectF]] = {}
        self._shown: tuple[object, DataLayer] | None = None
        self._plot: tuple[object, QRectF] | None = None
        self._look: tuple[int, str] | None = None
        self._brushes: dict[str, QBrush] = {}
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
        self._segments = self._stacks()
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
            self._repaint_changes()

    def _repaint_changes(self) -> None:
        """Rule 5: repaint what moved, came or went since the drawing last asked for, or all of a new ground."""
        before, key = self._shown, self._ground_key()
        after = self._layer(self.plot_rect())
        self._shown = (key, after)
        if before is None or before[0] != key:
            self.update()
            return
        for x, y, w, h in _changes(before[1], after):
            self.update(QRectF(x, y, w, h).toAlignedRect().adjusted(-DIRTY_MARGIN, -DIRTY_MARGIN,
                                                                    DIRTY_MARGIN, DIRTY_MARGIN))

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

    def _stacks(self) -> dict[str, tuple[list[float], list[float]]]:
        """Each line's (bottoms, heights) across the columns, in one pass over each column: a line sits on what is
        listed before it; a line a column does not list has no height, at the column's top."""
        placed: list[tuple[dict[str, tuple[int, int]], tuple[int, int]]] = []
        for _, items in self._columns:
            below = 0
            found: dict[str, tuple[int, int]] = {}
            for name, n in items:
                found.setdefault(name, (below, n))
                below += n
            placed.append((found, (below, 0)))
        stacks = {}
        for line in self._lines:
            spans = [found.get(line, top) for found, top in placed]
            stacks[line] = ([float(b) for b, _ in spans], [float(n) for _, n in spans])
        return stacks

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
        key = (w, h, self._top, self._ground_key()[-1])
        if self._plot is None or self._plot[0] != key:
            metrics = QFontMetricsF(self.font())
            left = max(metrics.horizontalAdvance(text) for _, text in y_ticks(self._top)) + 2 * PAD
            self._plot = (key, QRectF(left, PAD, max(w - left - PAD, 1.0), max(h - PAD - BOTTOM_AXIS_HEIGHT, 1.0)))
        return QRectF(self._plot[1])

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
        key = self._ground_key()
        ground, plot = self._kept_ground(key)
        painter.drawPixmap(0, 0, ground)  # clipped to the region asked for (Rule 5)
        if self._shown is None or self._shown[0] != key:
            self._shown = (key, self._layer(plot))
        self._paint_data(painter, self._shown[1], QRectF(event.rect()))
        painter.end()

    def _ground_key(self) -> tuple[object, ...]:
        """What the ground shows (Rule 3)."""
        if self._look is None:  # dropped by a new palette or font (changeEvent)
            self._look = (self.palette().cacheKey(), self.font().key())
        return (self.width(), self.height(), self.devicePixelRatioF(), self._top,
                tuple(label for label, _ in self._columns), self._look)

    def _kept_ground(self, key: object) -> tuple[QPixmap, QRectF]:
        """Rule 3: the ground as last painted for what it shows (`key`) and its plot area, or painted anew (the oldest
        kept ground then dropped)."""
        ratio = self.devicePixelRatioF()
        kept = self._grounds.pop(key, None)
        if kept is None:
            pixmap = QPixmap(round(self.width() * ratio), round(self.height() * ratio))
            pixmap.setDevicePixelRatio(ratio)
            painter = QPainter(pixmap)
            self.paint_ground(painter, float(self.width()), float(self.height()))
            painter.end()
            kept = (pixmap, self.plot_rect())
            if len(self._grounds) >= KEPT_GROUNDS:
                del self._grounds[next(iter(self._grounds))]
        self._grounds[key] = kept  # the newest last: the first is the one longest unused
        return kept

    def paint(self, painter: QPainter, width: float, height: float) -> None:
        """Rule 1: the whole chart at (0, 0)–(width, height) on `painter`: the widget, a PNG or an SVG."""
        self.paint_ground(painter, width, height)
        self._paint_data(painter, self._layer(self.plot_rect(width, height)))

    def paint_ground(self, painter: QPainter, width: float, height: float) -> None:
        """The background, the grid and the axes with their labels: what the bars and lines are drawn over."""
        pal = self.palette()
        base = pal.color(QPalette.ColorRole.Base)
        painter.fillRect(QRectF(0, 0, width, height), base)
        painter.setFont(self.font())
        self._paint_axes(painter, self.plot_rect(width, height), QColor(pal.color(QPalette.ColorRole.WindowText)), base)

    def _paint_data(self, painter: QPainter, layer: DataLayer, area: QRectF | None = None) -> None:
        """The bars, the budget and minimum lines and their labels of `layer`; a label only where it meets `area`
        (None: everywhere)."""
        pal = self.palette()
        painter.setFont(self.font())
        painter.setPen(QPen(pal.color(QPalette.ColorRole.Base), 0))
        for line, segments in layer.bars:  # Rule 4
            painter.setBrush(self._brush(line))
            painter.drawRects([QRectF(*box) for _, box in segments])
        painter.setBrush(Qt.BrushStyle.NoBrush)
        text = QColor(pal.color(QPalette.ColorRole.WindowText))
        (budget, minimum), (left, width) = layer.lines, layer.span
        for y, style, pen_width in ((minimum, Qt.PenStyle.DashLine, 1.2), (budget, Qt.PenStyle.SolidLine, 2.0)):
            if y is not None:
                pen = QPen(text, pen_width, style)
                pen.setCosmetic(True)
                painter.setPen(pen)
                painter.drawLine(QPointF(left, y), QPointF(left + width, y))
        painter.setPen(QPen(text, 0))
        for box, label in layer.labels:
            rect = QRectF(*box)
            if area is None or area.intersects(rect.adjusted(-DIRTY_MARGIN, -DIRTY_MARGIN, DIRTY_MARGIN, DIRTY_MARGIN)):
                painter.drawText(rect, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), label)

    def _layer(self, plot: QRectF) -> DataLayer:
        """What the bars, lines and labels are drawn as inside `plot` (Rules 4–5), at the points `to_pixel` gives."""
        lo, hi = self._x_range()
        left, width, base, height, top = plot.left(), plot.width(), plot.bottom(), plot.height(), self._top
        half = _WIDTH / 2
        sides = [(left + (x - half - lo) / (hi - lo) * width, left + (x + half - lo) / (hi - lo) * width)
                 for x in range(len(self._columns))]
        bars = []
        for line, (bottoms, heights) in self._segments.items():
            segments = []
            for column, ((x0, x1), bottom, n) in enumerate(zip(sides, bottoms, heights, strict=True)):
                if n > 0:
                    y0 = base - (bottom + n) / top * height
                    segments.append((column, (x0, y0, x1 - x0, base - bottom / top * height - y0)))
            if segments:
                bars.append((line, tuple(segments)))
        budget, minimum = (None if mark.value is None else base - mark.value / top * height for mark in self._drawn_marks)
        return DataLayer(tuple(bars), (budget, minimum), (left, width),
                         tuple(((rect.x(), rect.y(), rect.width(), rect.height()), label)
                               for rect, label in self.mark_labels(plot)))

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

    def _brush(self, line: str) -> QBrush:
        brush = self._brushes.get(line)
        if brush is None:
            brush = self._brushes[line] = QBrush(ledger_colour(line))
        return brush

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
            self._look = None
            self.update()
        super().changeEvent(event)


def _changes(before: DataLayer, after: DataLayer) -> list[Box]:
    """Rule 5: where two drawings under one ground differ: in each column, the box around its segments that moved,
    came or went; each line at its old and new height; each label that moved or changed, where it was and is."""
    columns: dict[int, set[tuple[str, Box]]] = {}
    for layer in (before, after):
        for line, segments in layer.bars:
            for column, box in segments:
                columns.setdefault(column, set()).symmetric_difference_update({(line, box)})
    changed = []
    for moved in columns.values():
        if moved:
            xs = [x for _, (x, _, w, _) in moved for x in (x, x + w)]
            ys = [y for _, (_, y, _, h) in moved for y in (y, y + h)]
            changed.append((min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)))
    left, width = after.span  # one ground, one plot
    for old, new in zip(before.lines, after.lines, strict=True):
        if old != new:
            changed += [(left, y, width, 0.0) for y in (old, new) if y is not None]
    changed += [box for box, _ in set(before.labels) ^ set(after.labels)]
    return changed


def _mixed(base: QColor, over: QColor, share: float) -> QColor:
    """`share` of `over` on `base`, as one opaque colour."""
    return QColor.fromRgbF(*(b + (o - b) * share for b, o in ((base.redF(), over.redF()), (base.greenF(), over.greenF()),
                                                               (base.blueF(), over.blueF()))))
