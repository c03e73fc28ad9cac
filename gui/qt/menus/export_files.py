"""Exports written to a path: the plan as Markdown or JSON, a chart as PNG or SVG, the sweep as CSV.

Rule 1: the contents come from the core — `plan_markdown`, `plan_payload` serialised exactly as
        `gguf-budget plan --json` prints it, `sweep_csv` — or from drawing a whole chart
        (every plot, axis and legend of its layout; the ledger chart's legend, a Qt list beside it, is drawn
        to its right whole); nothing is recomputed here.
Rule 3: the ledger chart draws itself on any painter (`LedgerChart.paint`): a PNG is that drawing on an image, an
        SVG on Qt's `QSvgGenerator`, its legend drawn to its right. The sweep chart is pyqtgraph's: PNG is its
        `ImageExporter`; SVG is its scene rendered by `QSvgGenerator` at the chart's own DPI (pyqtgraph 0.14.0's
        `SVGExporter` raises ValueError on the closed clip paths "… Z" current Qt writes for every ViewBox,
        pyqtgraph issue #3495). pyqtgraph is imported when a sweep chart is exported, not with this module: the
        window starts without it. Either draws the curves themselves, not the pixmaps the screen keeps of them.
Rule 4: a ledger PNG is drawn at `EXPORT_SCALE` × its pixels (sharp when zoomed) under its title
        (`views.export.chart_title`: the model, budget, ctx and peak it is of).
Rule 2: a file is written whole or not at all: the bytes go to a new file beside the target,
        which then replaces the target. A failure (read-only folder, full disk, a chart not
        laid out yet) raises ExportError with one line and leaves any existing file as it was.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QBuffer, QIODevice, QRectF, QSize, Qt
from PySide6.QtGui import QFont, QImage, QPainter, QPalette
from PySide6.QtSvg import QSvgGenerator

from gguf_budget.core import MemoryPlan, ModelSpec, SweepResult
from gguf_budget.core.errors import ExportError
from gguf_budget.core.speed.estimate import SpeedEstimate
from gguf_budget.core.views.speed_view import plan_payload
from gguf_budget.core.views.export import EXPORT_SCALE, plan_markdown, sweep_csv
from gguf_budget.gui.qt.plan.ledger_chart import LedgerChart

if TYPE_CHECKING:
    from gguf_budget.gui.qt.whatif.sweep_chart import SweepChart



def write_file(path: str | Path, data: bytes) -> None:
    """Rule 2: all of `data` at `path`, or ExportError and nothing changed."""
    target = Path(path)
    part = target.with_name(f".{target.name}.{os.getpid()}.part")
    try:
        f = part.open("xb")
    except OSError as e:
        raise ExportError(f"cannot write {target}: {e.strerror or e}") from None
    try:
        with f:
            f.write(data)
        os.replace(part, target)
    except OSError as e:
        with contextlib.suppress(OSError):
            part.unlink()
        raise ExportError(f"cannot write {target}: {e.strerror or e}") from None


def plan_json(plan: MemoryPlan, speed: SpeedEstimate | None) -> str:
    """The exact text `gguf-budget plan --json` prints for the same plan and bandwidths."""
    return json.dumps(plan_payload(plan, speed), indent=2) + "\n"


def chart_png(chart: LedgerChart | SweepChart, title: str = "") -> bytes:
    """Rules 3–4: the chart (and the ledger's legend, under `title`) as PNG bytes."""
    image = _ledger_image(chart, title) if isinstance(chart, LedgerChart) else _sweep_image(chart)
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):  # type: ignore[call-overload]  # the stubs say bytes; the binding takes str
        raise ExportError("cannot encode the chart as PNG")
    return bytes(buffer.data().data())


def _ledger_image(chart: LedgerChart, title: str) -> QImage:
    """Rule 4."""
    if chart.width() <= 0 or chart.height() <= 0:
        raise ExportError("cannot render the chart: it has no size yet")
    legend_width, legend_height = chart.legend.whole_size()
    band = 2 * chart.fontMetrics().height() if title else 0
    width, height = chart.width() + legend_width, max(chart.height(), legend_height) + band
    image = QImage(width * EXPORT_SCALE, height * EXPORT_SCALE, QImage.Format.Format_ARGB32)
    image.setDevicePixelRatio(EXPORT_SCALE)
    image.fill(chart.palette().color(QPalette.ColorRole.Base))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    if title:
        font = QFont(chart.font())
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(chart.palette().color(QPalette.ColorRole.Text))
        painter.drawText(QRectF(8, 0, width - 16, band), int(Qt.AlignmentFlag.AlignVCenter), title)
        painter.translate(0, band)
    chart.paint(painter, chart.width(), chart.height())
    chart.legend.paint_beside(painter, chart.width())
    painter.end()
    return image


def _sweep_image(chart: SweepChart) -> QImage:
    import pyqtgraph.exporters  # Rule 3: only a sweep chart's export needs it

    try:
        with chart.uncached():
            image: QImage = pyqtgraph.exporters.ImageExporter(chart.ci).export(toBytes=True)
    except Exception as e:  # noqa: BLE001 — pyqtgraph raises a bare Exception for a chart of size 0
        raise ExportError(f"cannot render the chart: {e}") from None
    return image


def chart_svg(chart: LedgerChart | SweepChart) -> bytes:
    """Rule 3: the chart (and the ledger's legend) as an SVG document."""
    if isinstance(chart, LedgerChart):
        width, height = chart.width(), chart.height()
        legend_width, legend_height = chart.legend.whole_size()

        def draw(painter: QPainter) -> None:
            chart.paint(painter, width, height)
            chart.legend.paint_beside(painter, width)

        return _svg(chart.logicalDpiX(), width + legend_width, max(height, legend_height), draw)
    source = chart.ci.sceneBoundingRect()

    def draw_scene(painter: QPainter) -> None:
        with chart.uncached():
            chart.scene().render(painter, QRectF(0, 0, source.width(), source.height()), source)

    return _svg(chart.logicalDpiX(), source.width(), source.height(), draw_scene)


def _svg(dpi: int, width: float, height: float, draw: Callable[[QPainter], None]) -> bytes:
    if width <= 0 or height <= 0:
        raise ExportError("cannot render the chart: it has no size yet")
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    svg = QSvgGenerator()
    svg.setOutputDevice(buffer)
    svg.setResolution(dpi)
    svg.setSize(QSize(round(width), round(height)))
    svg.setViewBox(QRectF(0, 0, width, height))
    svg.setTitle("GGUF Budget Explorer chart")
    painter = QPainter(svg)
    draw(painter)
    painter.end()
    return bytes(buffer.data().data())


def export_plan_markdown(path: str | Path, plan: MemoryPlan, model: ModelSpec) -> None:
    write_file(path, plan_markdown(plan, model).encode("utf-8"))


def export_plan_json(path: str | Path, plan: MemoryPlan, speed: SpeedEstimate | None) -> None:
    write_file(path, plan_json(plan, speed).encode("utf-8"))


def export_chart_png(path: str | Path, chart: LedgerChart | SweepChart, title: str = "") -> None:
    write_file(path, chart_png(chart, title))


def export_chart_svg(path: str | Path, chart: LedgerChart | SweepChart) -> None:
    write_file(path, chart_svg(chart))


def export_sweep_csv(path: str | Path, result: SweepResult) -> None:
    write_file(path, sweep_csv(result).encode("utf-8"))
