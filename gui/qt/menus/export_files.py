"""Exports written to a path: the plan as Markdown or JSON, a chart as PNG or SVG, the sweep as CSV.

Rule 1: the contents come from the core — `plan_markdown`, `plan_payload` serialised exactly as
        `gguf-budget plan --json` prints it, `sweep_csv` — or from drawing a whole chart
        (every plot, axis and legend of its layout; the ledger chart's legend, a Qt list beside it, is drawn
        to its right whole); nothing is recomputed here.
Rule 3: PNG is pyqtgraph's `ImageExporter`. SVG is Qt's `QSvgGenerator` rendering the chart's
        scene at the chart's own DPI: pyqtgraph 0.14.0's `SVGExporter` raises ValueError on the
        closed clip paths ("… Z") current Qt writes for every ViewBox (pyqtgraph issue #3495).
Rule 2: a file is written whole or not at all: the bytes go to a new file beside the target,
        which then replaces the target. A failure (read-only folder, full disk, a chart not
        laid out yet) raises ExportError with one line and leaves any existing file as it was.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Iterator

import pyqtgraph as pg
import pyqtgraph.exporters  # noqa: F401  (makes pg.exporters.ImageExporter available)
from PySide6.QtCore import QBuffer, QIODevice, QRectF, QSize
from PySide6.QtGui import QImage, QPainter, QPalette
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene

from gguf_budget.core import MemoryPlan, ModelSpec, SweepResult
from gguf_budget.core.errors import ExportError
from gguf_budget.core.speed.estimate import SpeedEstimate
from gguf_budget.core.views.speed_view import plan_payload
from gguf_budget.core.views.export import plan_markdown, sweep_csv
from gguf_budget.gui.qt.plan.ledger_legend import LedgerLegend


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


def chart_png(chart: pg.GraphicsLayoutWidget, legend: LedgerLegend | None = None) -> bytes:
    try:
        image = pg.exporters.ImageExporter(chart.ci).export(toBytes=True)
    except Exception as e:  # noqa: BLE001 — pyqtgraph raises a bare Exception for a chart of size 0
        raise ExportError(f"cannot render the chart: {e}") from None
    if legend is not None:
        width, height = legend.whole_size()
        whole = QImage(image.width() + width, max(image.height(), height), QImage.Format.Format_ARGB32)
        whole.fill(legend.palette().color(QPalette.ColorRole.Base))
        painter = QPainter(whole)
        painter.drawImage(0, 0, image)
        legend.paint_beside(painter, image.width())
        painter.end()
        image = whole
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise ExportError("cannot encode the chart as PNG")
    return bytes(buffer.data().data())


def chart_svg(chart: pg.GraphicsLayoutWidget, legend: LedgerLegend | None = None) -> bytes:
    source = chart.ci.sceneBoundingRect()
    if source.isEmpty():
        raise ExportError("cannot render the chart: it has no size yet")
    extra_width, extra_height = legend.whole_size() if legend is not None else (0, 0)
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    svg = QSvgGenerator()
    svg.setOutputDevice(buffer)
    svg.setResolution(chart.logicalDpiX())
    width, height = source.width() + extra_width, max(source.height(), extra_height)
    svg.setSize(QSize(round(width), round(height)))
    svg.setViewBox(QRectF(0, 0, width, height))
    svg.setTitle("GGUF Budget Explorer chart")
    painter = QPainter(svg)
    with _uncached(chart.scene()):
        chart.scene().render(painter, QRectF(0, 0, source.width(), source.height()), source)
    if legend is not None:
        legend.paint_beside(painter, round(source.width()))
    painter.end()
    return bytes(buffer.data().data())


@contextlib.contextmanager
def _uncached(scene: QGraphicsScene) -> Iterator[None]:
    """Items cached as pixmaps for speed (the ledger chart's axes) paint as vectors and text into an SVG."""
    cached = [(item, item.cacheMode()) for item in scene.items()
              if item.cacheMode() != QGraphicsItem.CacheMode.NoCache]
    for item, _ in cached:
        item.setCacheMode(QGraphicsItem.CacheMode.NoCache)
    try:
        yield
    finally:
        for item, mode in cached:
            item.setCacheMode(mode)


def export_plan_markdown(path: str | Path, plan: MemoryPlan, model: ModelSpec) -> None:
    write_file(path, plan_markdown(plan, model).encode("utf-8"))


def export_plan_json(path: str | Path, plan: MemoryPlan, speed: SpeedEstimate | None) -> None:
    write_file(path, plan_json(plan, speed).encode("utf-8"))


def export_chart_png(path: str | Path, chart: pg.GraphicsLayoutWidget, legend: LedgerLegend | None = None) -> None:
    write_file(path, chart_png(chart, legend))


def export_chart_svg(path: str | Path, chart: pg.GraphicsLayoutWidget, legend: LedgerLegend | None = None) -> None:
    write_file(path, chart_svg(chart, legend))


def export_sweep_csv(path: str | Path, result: SweepResult) -> None:
    write_file(path, sweep_csv(result).encode("utf-8"))
