"""The ledger as stacked bars: one column per ledger (this plan, the minimum configuration).

The chart is fed plain numbers — `(line, bytes)` pairs in ledger order — and draws them;
it computes no bytes. Segments stack bottom-up in ledger order, so a column's top is the
ledger's total. A horizontal line marks the budget (hidden when unlimited) and a dashed
one the minimum-configuration total; the two share one label when they are close. Hovering a segment shows its exact bytes. The legend is a Qt list beside the chart
(`ledger_legend`), so the bars keep the chart's whole width however short the chart; lines named
`optional` (the Measured column's) are listed in it only while some column draws them.
"""

from __future__ import annotations

from typing import Sequence

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QColor, QPalette, QPen
from PySide6.QtWidgets import QGraphicsItem, QWidget

from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.byte_ticks import axis_top
from gguf_budget.core.views.ledger_names import line_name, line_tooltip

from gguf_budget.gui.qt.byte_axis import ByteAxis
from gguf_budget.gui.qt.plan.ledger_legend import LedgerLegend
from gguf_budget.gui.qt.plan.stacked_bars import Segment, StackedBars
from gguf_budget.gui.qt.theme import ledger_colour

Items = Sequence[tuple[str, int]]
_WIDTH = 0.6
MIN_HEIGHT = 150
"""Low enough for 1280 × 720 with a dock open."""
BOTTOM_AXIS_HEIGHT = 40


def _two_lines(label: str) -> str:
    """A long column label on two lines, so it fits under a narrow column ('Minimum\nconfiguration')."""
    head, space, tail = label.partition(" ")
    return f"{head}\n{tail}" if space and len(label) > 12 else label


MINIMUM_LABEL_X = _WIDTH / 2 + 0.05
"""Where the minimum's label starts, in column units: just right of the first bar ("This plan"). Above the
line there it lies over the minimum configuration's own column, which ends at the line: no bar reaches it."""
MINIMUM_HANGS = 0.9
"""Above this share of the chart's height the minimum's label hangs below its line at the left, inside the chart."""

SHARED_LABEL_GAP = 0.15
"""Budget and minimum lines closer than this share of the chart's height share one label (the budget's):
two labels that close would overlap in a narrow chart."""


class LedgerChart(pg.GraphicsLayoutWidget):
    """Stacked ledger bars with the budget line, the minimum marker and hover values; `legend` lists the lines
    top-down in the order the segments stack bottom-up. The chart makes it; its parent places it beside the chart."""

    def __init__(self, lines: Sequence[str], parent: QWidget | None = None, optional: Sequence[str] = ()):
        super().__init__(parent=parent)
        self.setObjectName("ledgerChart")
        self.plot = self.addPlot(row=0, col=0, axisItems={"left": ByteAxis()})
        self.setMinimumSize(240, MIN_HEIGHT)
        self.legend = LedgerLegend(parent)
        self._lines = tuple(lines)
        self._optional = frozenset(optional)
        self._columns: list[tuple[str, tuple[tuple[str, int], ...]]] = []
        self._drawn: dict[str, object] = {}
        self._zoom = False
        self._marks: tuple[int | None, int | None] = (None, None)
        self.hover_text = ""
        self._setup_plot()
        self._bars = StackedBars(_WIDTH)
        self.plot.addItem(self._bars)
        self._segments: dict[str, tuple[list[float], list[float]]] = {}
        self._hovered: str | None = None
        self._fill_legend(())
        self._line_styles = {"budget": (Qt.PenStyle.SolidLine, 2.0), "minimum": (Qt.PenStyle.DashLine, 1.2)}
        self._budget_line, self._minimum_line = self._add_hline(below=True), self._add_hline()
        self.scene().sigMouseMoved.connect(self._hover)
        self.apply_palette()

    def _setup_plot(self) -> None:
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.enableAutoRange(False)
        self.plot.showGrid(y=True, alpha=0.25)
        self.plot.getAxis("bottom").setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.plot.getAxis("bottom").setHeight(BOTTOM_AXIS_HEIGHT)  # a column label may take two lines

    def _fill_legend(self, drawn_optional: Sequence[str]) -> None:
        self.legend.set_lines([line for line in reversed(self._lines)
                               if line not in self._optional or line in drawn_optional])

    def legend_tooltips(self) -> tuple[str, ...]:
        """Each legend entry's tooltip, top-down (the swatch's and the name's are the same)."""
        return self.legend.tooltips()

    def legend_lines(self) -> tuple[str, ...]:
        """The lines listed in the legend now, top-down."""
        return self.legend.names()

    def _add_hline(self, below: bool = False) -> pg.InfiniteLine:
        """A labelled line. The budget's label hangs below it at the right, so it stays inside the chart at any
        height; the minimum's sits above its line just right of the first bar (MINIMUM_LABEL_X), or at the top of
        the chart below it at the left (`_set_hline`). Lines closer than SHARED_LABEL_GAP share one label."""
        anchor = (1, 0) if below else (0, 1)
        line = pg.InfiniteLine(angle=0, movable=False, label="",
                               labelOpts={"position": 0.97 if below else 0.03, "anchors": [anchor, anchor]})
        line.setZValue(10)
        line.setVisible(False)
        self.plot.addItem(line)
        return line

    def apply_palette(self) -> None:
        """Follow the widget palette (light or dark): background, text, outlines."""
        pal = self.palette()
        text = pal.color(QPalette.ColorRole.WindowText)
        self.setBackground(pal.color(QPalette.ColorRole.Base))
        for name in ("left", "bottom"):
            axis = self.plot.getAxis(name)
            axis.setPen(text)
            axis.setTextPen(text)
        self._bars.set_outline(pal.color(QPalette.ColorRole.Base))
        for line, key in ((self._budget_line, "budget"), (self._minimum_line, "minimum")):
            style, width = self._line_styles[key]
            pen = QPen(QColor(text), width, style)
            pen.setCosmetic(True)
            line.setPen(pen)
            line.label.setColor(text)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "_bars"):
            self.apply_palette()
        super().changeEvent(event)

    def show_ledgers(self, columns: Sequence[tuple[str, Items]], budget: int | None, minimum: int | None) -> None:
        """Draw one stacked column per (label, items); `budget` None hides the budget line."""
        self._columns = [(label, tuple(items)) for label, items in columns]
        self._segments = {line: self._stack(line) for line in self._lines}
        if self._changed("segments", self._segments):
            self._bars.set_segments(tuple(
                Segment(x, bottom, height, ledger_colour(line))
                for line, (bottoms, heights) in self._segments.items()
                for x, (bottom, height) in enumerate(zip(bottoms, heights, strict=True))))
        drawn_optional = [line for line in self._lines if line in self._optional and any(self._segments[line][1])]
        if self._changed("legend", tuple(drawn_optional)):
            self._fill_legend(drawn_optional)
        self._marks = (budget, minimum)
        top = self._set_ranges(budget, minimum)
        close = budget is not None and minimum is not None and abs(budget - minimum) < SHARED_LABEL_GAP * top
        self._set_hline(self._budget_line, budget, "budget", top,
                        f" · minimum {human_bytes(minimum)}" if close and minimum is not None else "")
        self._set_hline(self._minimum_line, minimum, "minimum", top, None if close else "")

    def set_zoom(self, on: bool) -> None:
        """Zoom to the plan: the axis ends above the tallest column, not at the budget, so a plan far under a
        large budget is a bar, not a sliver; a budget above the top is pinned to it, labelled ↑."""
        self._zoom = on
        if self._columns or any(self._marks):
            self.show_ledgers(self._columns, *self._marks)

    def _changed(self, key: str, drawn: object) -> bool:
        """Remember what was last drawn under `key`; True when `drawn` differs (pyqtgraph redraws are dear)."""
        if self._drawn.get(key) == drawn:
            return False
        self._drawn[key] = drawn
        return True

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

    def _set_hline(self, line: pg.InfiniteLine, value: int | None, label: str, top: float, more: str | None) -> None:
        """`more`: text after the label's own (None: no label — the other line's says it, the two being close)."""
        above = value is not None and value > top
        minimum = line is self._minimum_line  # its label's place depends on the top and the columns too
        key = (value, top, more, len(self._columns)) if minimum else (value, top if above else None, more)
        if not self._changed(label, key):  # pinned to the top: a new top moves it
            return
        line.setVisible(value is not None)
        if value is not None and minimum:
            hangs = min(value, top) > MINIMUM_HANGS * top
            anchor = (0, 0) if hangs else (0, 1)
            line.label.anchors = [anchor, anchor]
            lo, hi = self.plot.vb.viewRange()[0]
            line.label.setPosition(0.03 if hangs else (MINIMUM_LABEL_X - lo) / (hi - lo))
        if value is not None:
            line.setValue(top if above else float(value))
            line.label.updatePosition()
            text = f"{label} {human_bytes(value)}{' ↑ above the zoomed chart' if above else ''}"
            line.label.setFormat("" if more is None else text + more)

    def _set_ranges(self, budget: int | None, minimum: int | None) -> float:
        """The y range (the budget left out when zoomed to the plan); returns its top."""
        tops = [sum(n for _, n in items) for _, items in self._columns]
        top = axis_top(max(tops + [minimum or 0, 1] + ([] if self._zoom else [budget or 0])))
        ticks = [(i, _two_lines(label)) for i, (label, _) in enumerate(self._columns)]
        if not self._changed("ranges", (top, ticks)):
            return top
        self.plot.setYRange(0, top, padding=0)
        self.plot.setXRange(-0.5, max(0.5, len(self._columns) - 0.5), padding=0.05)
        self.plot.getAxis("bottom").setTicks([ticks])
        return top

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

    def legend_names(self) -> list[str]:
        """The legend's labels, top-down."""
        return list(self.legend.names())

    def tooltip(self, line: str) -> str:
        """The tooltip the scene would show over this line's segments now."""
        return self._bars.toolTip() if self._hovered == line else ""

    def _hover(self, scene_pos: QPointF) -> None:
        """Put the hovered segment's text on the bars item; the scene shows it as the tooltip."""
        point = self.plot.vb.mapSceneToView(scene_pos)
        hit = self.segment_at(point.x(), point.y())
        self.hover_text = "" if hit is None else self._segment_text(*hit)
        self._hovered = None if hit is None else hit[1]
        self._bars.setToolTip(self.hover_text)
