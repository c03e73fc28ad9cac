"""A budget sweep drawn: predicted peak, chosen ctx, pinned layers and decode tok/s against the budget.

Every plot's x axis is the RAM budget (its ticks are byte sizes; the chart's tooltip says so): the axes carry no
title line, which at 1280 × 720 would take a fifth of each plot's height.

Four plots side by side share the budget axis; the fourth is the decode estimate (an upper
bound, labelled so), which climbs with the pinned count — "pinned count and decode climb", as
the layer-streaming runtime measured (docs/budget-plan.md). An infeasible row has no estimate and leaves a gap. Each draws one SweepRow field as a step
curve (a row's value holds from its budget up to the next), exactly the numbers `sweep`
prints; the peak plot adds the line peak = budget, which a feasible plan stays under.
Vertical lines mark the two thresholds (first feasible budget; every layer pinned) and the
budget now chosen; budgets below the first feasible one are shaded "impossible" (their
rows show the minimum configuration, as `sweep` does). A left click picks the swept budget
nearest the click. The chart computes no bytes. No grid: with a grid each axis spans its
plot, so moving the budget mark on a slider tick repainted every tick label (~3 ms a frame).
The chart is built a plot at a time when asked (`build_step`: one piece an event-loop turn, where the whole took
~100 ms on a loaded 2-core machine and held a click or a close behind it), or at once (`build`).

Rule 1: a moved budget mark repaints a narrow strip of each plot, and what the strip crosses is copied rather than
        drawn again: each curve is kept as a pixmap at the screen's pixels (`DeviceCoordinateCache`), drawn anew
        only when its data or its plot's scale change. Drawing the five curves whole, clipped to the strips, was
        half of a mark's repaint (~1 ms of a 70B budget tick that moved it); the pixels are the same. An export
        draws the curves themselves (`uncached`): an SVG keeps them as lines, a PNG is drawn at its own scale.
"""

from __future__ import annotations

import bisect
from contextlib import contextmanager
from typing import Iterator

import numpy as np
import pyqtgraph as pg
from pyqtgraph.GraphicsScene.mouseEvents import MouseClickEvent
from PySide6.QtCore import QEvent, QPointF, Qt, Signal
from PySide6.QtGui import QColor, QCursor, QPalette, QPen
from PySide6.QtWidgets import QGraphicsItem, QToolTip, QWidget

from gguf_budget.core import SweepResult, SweepRow
from gguf_budget.core.views.plan_view import BannerState
from gguf_budget.core.views.sweep_view import row_text

from gguf_budget.gui.qt.byte_axis import ByteAxis
from gguf_budget.gui.qt.theme import BANNER_COLOURS, IMPOSSIBLE_ALPHA, LEDGER_COLOURS, translucent

CURVES: dict[str, tuple[str, str]] = {  # field → (plot title, colour)
    "total": ("Predicted peak", LEDGER_COLOURS["logits"]),
    "ctx": ("Chosen ctx (tokens)", LEDGER_COLOURS["kv"]),
    "n_pinned": ("Pinned layers", LEDGER_COLOURS["pinned"]),
    "tok_s": ("Decode tok/s at the start of a conversation (estimate)", LEDGER_COLOURS["lm_head"]),
}
MARKERS: dict[str, str] = {
    "first_feasible": BANNER_COLOURS[BannerState.FEASIBLE],
    "all_pinned": BANNER_COLOURS[BannerState.UNLIMITED],
}
# Each mark's label sits in its own plot (so no two can collide), in the band the y range keeps
# free above every curve (HEADROOM), on the side of its line facing the middle of the plot (so it
# is never clipped): the plot that carries it, and its text.
MARKER_LABELS = {"first_feasible": ("total", "first feasible"), "all_pinned": ("ctx", "all pinned")}
BUDGET_LABEL = ("n_pinned", "budget")
HEADROOM = 1.25
"""The y range is at least HEADROOM × the tallest value, and enough more that the top band is a label's
height (plus LABEL_GAP pixels): the band holds the labels, clear of the curves, at any plot height."""
LABEL_GAP = 3
MAX_HEADROOM = 4.0
LABEL_POSITION = 0.99
IMPOSSIBLE_BRUSH = translucent(BANNER_COLOURS[BannerState.IMPOSSIBLE], IMPOSSIBLE_ALPHA)


KEPT = QGraphicsItem.CacheMode.DeviceCoordinateCache


def _kept(curve: pg.PlotDataItem) -> pg.PlotDataItem:
    """Rule 1: the curve drawn once into a pixmap at the screen's pixels and copied from it until its data or the
    view's scale change (a moved budget mark repaints a strip of each plot, and every curve was drawn whole again,
    clipped to it)."""
    curve.curve.setCacheMode(KEPT)
    return curve


class SweepChart(pg.GraphicsLayoutWidget):
    """Step plots of a SweepResult with threshold markers; click to pick a budget.

    Signals:
        budgetPicked(object): the swept budget (an int of bytes) nearest a left click.
            Declared `object` because Qt's int is 32-bit and budgets pass 2 GiB.
    """

    budgetPicked = Signal(object)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent=parent)
        self.setObjectName("sweepChart")
        self.setMinimumSize(480, 120)
        self._result: SweepResult | None = None
        self.hover_text = ""
        self.setToolTip("Each plot against the RAM budget (x axis); click a plot to make that budget the window's")
        self.plots: dict[str, pg.PlotItem] = {}
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.markers: dict[str, list[pg.InfiniteLine]] = {key: [] for key in MARKERS}
        self.budget_lines: list[pg.InfiniteLine] = []
        self.regions: list[pg.LinearRegionItem] = []
        self.whole = False
        """Built to the end (`build_step`, `build`)."""
        self._pieces = self._build()
        self.hide()  # until a sweep is drawn (`show_result`)

    def build_step(self) -> None:
        """Build the next piece: one plot with its curve and lines, then what joins them (nothing once whole)."""
        next(self._pieces, None)

    def build(self) -> SweepChart:
        """Build whatever is left, at once."""
        for _piece in self._pieces:
            pass
        return self

    def _build(self) -> Iterator[None]:
        for col, name in enumerate(CURVES):
            plot = self.plots[name] = self._add_plot(col, name)
            self.curves[name] = self._add_curve(name)
            if name == "total":
                self._diagonal = _kept(plot.plot([], [], name="peak = budget"))
            for key, lines in self.markers.items():
                lines.append(self._add_marker(key, name, plot))
            self.budget_lines.append(self._add_vline(plot, BUDGET_LABEL[1] if name == BUDGET_LABEL[0] else None))
            self.regions.append(self._add_region(plot))
            yield
        for name in ("ctx", "n_pinned", "tok_s"):
            self.plots[name].setXLink(self.plots["total"])
        self.scene().sigMouseClicked.connect(self._clicked)
        self.scene().sigMouseMoved.connect(self._hover)
        self.whole = True
        self.apply_palette()
        for plot in self.plots.values():
            plot.vb.sigResized.connect(self._fit_heights)

    def _add_plot(self, col: int, name: str) -> pg.PlotItem:
        axes = {"bottom": ByteAxis("bottom")}
        if name == "total":
            axes["left"] = ByteAxis("left")
        plot = self.addPlot(row=0, col=col, title=CURVES[name][0], axisItems=axes, enableMenu=False)
        plot.hideButtons()
        plot.setMouseEnabled(x=False, y=False)
        return plot

    def _add_curve(self, name: str) -> pg.PlotDataItem:
        pen = pg.mkPen(CURVES[name][1], width=2)
        return _kept(self.plots[name].plot([], [], stepMode="left", pen=pen, name=CURVES[name][0], connect="finite"))

    def _add_vline(self, plot: pg.PlotItem, label: str | None) -> pg.InfiniteLine:
        """A vertical marker; its label (if any) hangs from the top band on the side facing the plot's middle
        (pyqtgraph takes the first anchor when the middle lies right of the line)."""
        if label is None:
            line = pg.InfiniteLine(angle=90, movable=False)
        else:
            line = pg.InfiniteLine(angle=90, movable=False, label=f" {label} ",
                                   labelOpts={"position": LABEL_POSITION, "anchors": [(0, 0), (1, 0)]})
        line.setZValue(10)
        line.setVisible(False)
        plot.addItem(line)
        return line

    def _add_marker(self, key: str, name: str, plot: pg.PlotItem) -> pg.InfiniteLine:
        where, text = MARKER_LABELS[key]
        line = self._add_vline(plot, text if name == where else None)
        line.setPen(pg.mkPen(MARKERS[key], width=1.5, style=Qt.PenStyle.DashLine))
        if getattr(line, "label", None) is not None:
            line.label.setColor(MARKERS[key])
        return line

    def _add_region(self, plot: pg.PlotItem) -> pg.LinearRegionItem:
        region = pg.LinearRegionItem(movable=False, brush=IMPOSSIBLE_BRUSH, pen=pg.mkPen(None))
        region.setZValue(-10)
        region.setVisible(False)
        plot.addItem(region)
        return region

    def apply_palette(self) -> None:
        """Follow the widget palette (light or dark): background, axes, the reference lines."""
        pal = self.palette()
        text = pal.color(QPalette.ColorRole.WindowText)
        self.setBackground(pal.color(QPalette.ColorRole.Base))
        for plot in self.plots.values():
            plot.setTitle(plot.titleLabel.text, color=text)
            for side in ("left", "bottom"):
                plot.getAxis(side).setPen(text)
                plot.getAxis(side).setTextPen(text)
        diagonal = QPen(QColor(text), 1.0, Qt.PenStyle.DotLine)
        diagonal.setCosmetic(True)
        self._diagonal.setPen(diagonal)
        for line in self.budget_lines:
            pen = QPen(QColor(text), 2.0)
            pen.setCosmetic(True)
            line.setPen(pen)
            if getattr(line, "label", None) is not None:
                line.label.setColor(text)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange and getattr(self, "whole", False):
            self.apply_palette()
        super().changeEvent(event)

    # -- data -------------------------------------------------------------------------

    def show_result(self, result: SweepResult | None) -> None:
        """Draw a sweep (None clears the chart, and hides it: an empty byte axis says nothing)."""
        self._result = result
        self.setVisible(result is not None)
        rows = result.rows if result else ()
        xs = np.array([r.budget for r in rows], dtype=float)
        for name, curve in self.curves.items():
            curve.setData(xs, np.array([getattr(r, name) for r in rows], dtype=float))
        ends = [xs[0], xs[-1]] if len(xs) else []
        self._diagonal.setData(ends, ends)
        for key, lines in self.markers.items():
            where = getattr(result, key) if result else None
            for line in lines:
                line.setVisible(where is not None)
                line.setValue(float(where or 0))
        self._shade_impossible(result)
        if result is not None:
            self.plots["total"].setXRange(xs[0], xs[-1], padding=0.02)
        self._fit_heights()

    def _fit_heights(self) -> None:
        """Each plot's y range from 0 to its tallest value plus the label band (a constant ctx gets 0 … 1.3×)."""
        if self._result is None:
            return
        label = max(line.label.boundingRect().height() for line in self._labelled())
        for name, plot in self.plots.items():
            pixels = plot.vb.height()
            room = pixels / (pixels - label - LABEL_GAP) if pixels > label + LABEL_GAP else MAX_HEADROOM
            top = min(max(HEADROOM, room), MAX_HEADROOM) * self._tallest(name, self._result)
            if plot.vb.viewRange()[1] != [0, top]:
                plot.setYRange(0, top, padding=0)

    def _labelled(self) -> list[pg.InfiniteLine]:
        lines = [line for lines in self.markers.values() for line in lines] + self.budget_lines
        return [line for line in lines if getattr(line, "label", None) is not None]

    @staticmethod
    def _tallest(name: str, result: SweepResult) -> float:
        """The largest value the plot draws (at least 1, so a plot of zeros still has an axis from 0)."""
        if name == "n_pinned":
            return float(max(result.n_layer, 1))
        values = [getattr(r, name) for r in result.rows]
        if name == "total":
            values += [r.budget for r in result.rows]  # the line peak = budget
        return float(max([v for v in values if v is not None] + [1]))

    def _shade_impossible(self, result: SweepResult | None) -> None:
        rows = result.rows if result else ()
        end = result.first_feasible if result and result.first_feasible is not None else (rows[-1].budget if rows else 0)
        shaded = bool(rows) and end > rows[0].budget
        for region in self.regions:
            region.setVisible(shaded)
            if shaded:
                region.setRegion((rows[0].budget, end))

    def result(self) -> SweepResult | None:
        return self._result

    @contextmanager
    def uncached(self) -> Iterator[None]:
        """Rule 1: within, the curves are drawn themselves (an export), not copied from their screen pixmaps."""
        curves = [curve.curve for curve in (*self.curves.values(), self._diagonal)]
        for curve in curves:
            curve.setCacheMode(QGraphicsItem.CacheMode.NoCache)
        try:
            yield
        finally:
            for curve in curves:
                curve.setCacheMode(KEPT)

    def set_budget(self, budget: int | None) -> None:
        """Mark the budget now chosen (None hides the mark, e.g. when unlimited)."""
        for line in self.budget_lines:
            line.setVisible(budget is not None)
            line.setValue(float(budget or 0))

    # -- picking and hover ------------------------------------------------------------

    def row_at(self, x: float) -> SweepRow | None:
        """The swept row whose budget is nearest `x` (None before a sweep)."""
        rows = self._result.rows if self._result else ()
        if not rows:
            return None
        i = bisect.bisect_left([r.budget for r in rows], x)
        near = [rows[j] for j in (i - 1, i) if 0 <= j < len(rows)]
        return min(near, key=lambda r: abs(r.budget - x))

    def plot_at(self, scene_pos: QPointF) -> pg.PlotItem | None:
        return next((p for p in self.plots.values() if p.vb.sceneBoundingRect().contains(scene_pos)), None)

    def _clicked(self, event: MouseClickEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        plot = self.plot_at(event.scenePos())
        row = self.row_at(plot.vb.mapSceneToView(event.scenePos()).x()) if plot else None
        if row is not None:
            event.accept()
            self.budgetPicked.emit(row.budget)

    def text_at(self, scene_pos: QPointF) -> str:
        """The hover text for a scene point: the nearest row of the plot under it ('' elsewhere)."""
        plot = self.plot_at(scene_pos)
        row = self.row_at(plot.vb.mapSceneToView(scene_pos).x()) if plot else None
        return row_text(row, self._result.n_layer) if row and self._result else ""

    def _hover(self, scene_pos: QPointF) -> None:
        self.hover_text = self.text_at(scene_pos)
        if self.hover_text:
            QToolTip.showText(QCursor.pos(), self.hover_text, self)
        else:
            QToolTip.hideText()
