"""Laid out for 1280 × 720 in every state (issue 25, item 2): the real window, offscreen, across a matrix of
models (the demo, 8B, 70B, Mixtral, gpt-oss-20b, SmolLM2 with a real llama.cpp log, a model by URL), machines
(probed by the real probe, hypothetical RTX 4090), docks (none, sweep, compare, quants, library), evidence and
ctx (512 and 200,000) — each state at 1280 × 720, some at 1920 × 1080 too.

What "nothing clipped" means here: no side column's contents are wider than its view (it scrolls vertically
only); and for every visible QLabel and QLineEdit (a spin box's and a combo's
included): its text fits the room it has by its own font metrics — wrapped labels by the wrapped height,
one-line labels by the widest line, line edits by their text (or placeholder) inside the edit's text area —
or it is an elided label, whose tooltip holds the whole text. And in every chart, no two line labels overlap,
each lies inside the chart, every column label is drawn whole, and the ledger's legend sits beside the chart
(a Qt list that scrolls) without squeezing the bars below a third of the width the two share.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import pyqtgraph as pg
import pytest
from gguf_factory import MIXTRAL_8X7B as MIXTRAL
from gguf_factory import write_gguf
from gui_support import assumed_bandwidths, open_model, settle
from http_models import Served
from PySide6 import QtGui
from PySide6.QtCore import QRect, QRectF, Qt
from PySide6.QtGui import QImage, QPainter, QTextDocument
from PySide6.QtWidgets import QApplication, QDockWidget, QLabel, QLineEdit, QStyle, QStyleOptionFrame, QWidget
from recorded_models import LOGS, SMOLLM2

from gguf_budget.core.library.config import add_folder
from gguf_budget.core.machine.probe import probe_hardware
from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.core.plan.budget import Budget
from gguf_budget.gui.qt.elided_label import ElidedLabel
from gguf_budget.gui.qt.layout import SideColumn
from gguf_budget.gui.qt.plan.ledger_chart import LedgerChart
from gguf_budget.resources import demo_model_path

MIB = 1 << 20
GIB = 1 << 30
SMOLLM2_LOG = LOGS / "smollm2-135m-instruct-q4_1_ctx2048_f16.log"
LAPTOP, DESKTOP = (1280, 720), (1920, 1080)


@dataclass(frozen=True)
class State:
    model: str
    machine: str = "probed"
    dock: str | None = None
    evidence: bool = False
    ctx: int | None = None
    budget: str = "between"  # between the thresholds (the window's own start), or "near-minimum"
    size: tuple[int, int] = LAPTOP

    def __str__(self) -> str:
        parts = [self.model, self.machine, self.dock or "no-dock", "evidence" if self.evidence else "",
                 f"ctx{self.ctx}" if self.ctx else "", self.budget if self.budget != "between" else "",
                 "x".join(map(str, self.size))]
        return "-".join(p for p in parts if p)


STATES = [
    State("demo"),
    State("demo", "rtx4090", "sweep", ctx=200_000),
    State("8b", dock="sweep", ctx=512),
    State("8b", "rtx4090", "compare", ctx=200_000),
    State("70b", dock="quants"),
    State("70b", "rtx4090", ctx=512, budget="near-minimum"),
    State("mixtral", "rtx4090"),
    State("mixtral", dock="library", ctx=200_000),
    State("gpt-oss-20b", budget="near-minimum"),
    State("gpt-oss-20b", "rtx4090", "quants", ctx=512),
    State("smollm2", evidence=True),
    State("smollm2", "rtx4090", "sweep", evidence=True, ctx=200_000),
    State("url"),
    State("url", "rtx4090", "compare", ctx=512),
    State("70b", "rtx4090", "sweep", ctx=200_000, size=DESKTOP),
    State("mixtral", dock="quants", evidence=False, size=DESKTOP),
    State("smollm2", "rtx4090", evidence=True, size=DESKTOP),
]


# -- what "fits" means --------------------------------------------------------------------------------


def _rich(label: QLabel) -> bool:
    fmt = label.textFormat()
    return fmt == Qt.TextFormat.RichText or (fmt == Qt.TextFormat.AutoText and QtGui.Qt.mightBeRichText(label.text()))


def label_problem(label: QLabel) -> str | None:
    """Why this label's text does not fit its room (None when it fits, or is elided with its tooltip)."""
    # what the label shows: an elided label paints the start of a text too long for it (QLabel holds none of it)
    text = label.shown_text() if isinstance(label, ElidedLabel) else QLabel.text(label)
    if text != label.text() and (not text.endswith("…") or label.text() not in label.toolTip()):
        return "shows part of its text without an ellipsis and the whole in its tooltip"
    room = label.contentsRect().adjusted(label.margin(), label.margin(), -label.margin(), -label.margin())
    if label.indent() > 0:
        room.setLeft(room.left() + label.indent())
    if isinstance(label, ElidedLabel):
        return None if not label.is_elided() or label.text() in label.toolTip() else "elided without its text in a tooltip"
    if _rich(label):
        doc = QTextDocument()
        doc.setDefaultFont(label.font())
        doc.setDocumentMargin(0)
        doc.setHtml(text)
        if label.wordWrap():
            doc.setTextWidth(room.width())
        width, height = doc.idealWidth(), doc.size().height()
    elif label.wordWrap():
        need = label.fontMetrics().boundingRect(QRect(0, 0, max(room.width(), 1), 100_000),
                                                int(Qt.TextFlag.TextWordWrap), text)
        width, height = need.width(), need.height()
    else:
        metrics = label.fontMetrics()
        lines = text.split("\n")
        width, height = max(metrics.horizontalAdvance(line) for line in lines), len(lines) * metrics.height()
    if width > room.width() + 1 or height > room.height() + 1:
        return f"needs {width:.0f}×{height:.0f}, has {room.width()}×{room.height()}"
    return None


def edit_problem(edit: QLineEdit) -> str | None:
    text = edit.text() or edit.placeholderText()
    if not text:
        return None
    option = QStyleOptionFrame()
    edit.initStyleOption(option)
    area = edit.style().subElementRect(QStyle.SubElement.SE_LineEditContents, option, edit)
    margins = edit.textMargins()
    room = area.width() - margins.left() - margins.right() - 4  # QLineEdit's own 2 px each side
    need = edit.fontMetrics().horizontalAdvance(text)
    return None if need <= room else f"{text!r} needs {need} px, has {room}"


def shown(widget: QWidget) -> bool:
    return widget.isVisible() and widget.width() > 0 and widget.height() > 0


def clipped_texts(window: QWidget) -> list[str]:
    """Every visible QLabel and QLineEdit in the window (docks included) whose text does not fit."""
    found = []
    for label in window.findChildren(QLabel):
        if shown(label) and label.text() and label.pixmap().isNull():
            problem = label_problem(label)
            if problem:
                found.append(f"label {label.objectName() or label.text()[:40]!r}: {label.text()[:60]!r} {problem}")
    for edit in window.findChildren(QLineEdit):
        if shown(edit):
            problem = edit_problem(edit)
            if problem:
                owner = edit.objectName() or (edit.parentWidget().objectName() if edit.parentWidget() else "")
                found.append(f"edit {owner!r}: {problem}")
    return found


def sideways_problems(window: QWidget) -> list[str]:
    """A side column scrolls vertically only: contents wider than its view would be cut at the right."""
    return [f"side column {column.widget().objectName() or type(column.widget()).__name__!r}: contents "
            f"{column.widget().width()} px wide in a {column.viewport().width()} px view"
            for column in window.findChildren(SideColumn)
            if shown(column) and column.widget().width() > column.viewport().width()]


def chart_problems(window: QWidget) -> list[str]:
    """Overlapping or escaping line labels, column labels cut, a legend squeezing the bars."""
    found = []
    for ledger in window.findChildren(LedgerChart):
        if shown(ledger):
            found += ledger_problems(ledger)
    for chart in window.findChildren(pg.GraphicsLayoutWidget):
        if not shown(chart):
            continue
        name = chart.objectName() or type(chart).__name__
        inside = QRectF(chart.viewport().rect())
        labels = [item for item in chart.scene().items()
                  if isinstance(item, pg.InfLineLabel) and item.isVisible() and item.parentItem().isVisible()
                  and item.toPlainText().strip()]
        rects = {item.toPlainText().strip(): chart.mapFromScene(item.sceneBoundingRect()).boundingRect()
                 for item in labels}
        for (a, ra), (b, rb) in combinations(rects.items(), 2):
            if QRectF(ra).intersects(QRectF(rb)):
                found.append(f"{name}: {a!r} overlaps {b!r}")
        for text, rect in rects.items():
            if not inside.contains(QRectF(rect)):
                found.append(f"{name}: {text!r} leaves the chart ({rect} outside {inside})")
        for plot in (item for item in chart.scene().items() if isinstance(item, pg.PlotItem)):
            axis = plot.getAxis("bottom")
            image = QImage(chart.size(), QImage.Format.Format_ARGB32)
            painter = QPainter(image)
            _, _, texts = axis.generateDrawSpecs(painter)
            painter.end()
            box = axis.boundingRect()
            found += [f"{name}: column label {t!r} cut" for r, _, t in texts if not box.contains(r)]
            found += [f"{name}: column labels {a!r} and {b!r} overlap" for (ra, _, a), (rb, _, b) in combinations(texts, 2)
                      if ra.intersects(rb)]
    return found


def ledger_problems(chart: LedgerChart) -> list[str]:
    """The ledger chart's line labels apart and inside it, its column labels whole and apart, its legend beside it."""
    name = chart.objectName()
    inside = QRectF(chart.rect())
    found = [f"{name}: {a!r} overlaps {b!r}" for (ra, a), (rb, b) in combinations(chart.mark_labels(), 2)
             if ra.intersects(rb)]
    found += [f"{name}: {text!r} leaves the chart ({rect} outside {inside})"
              for rect, text in chart.mark_labels() if not inside.contains(rect)]
    columns = chart.column_labels()
    found += [f"{name}: column label {text!r} cut" for rect, text in columns if not inside.contains(rect)]
    found += [f"{name}: column labels {a!r} and {b!r} overlap" for (ra, a), (rb, b) in combinations(columns, 2)
              if ra.intersects(rb)]
    return found + legend_problems(chart, chart.legend, name)


def legend_problems(chart, legend, name: str) -> list[str]:
    """The legend shows, beside the chart (not over it), every entry reachable (whole, or by its scroll bar),
    and leaves the bars at least a third of the width the chart and legend share."""
    if not shown(legend):
        return [f"{name}: no legend"]
    found = []
    window = chart.window()
    chart_rect = QRect(chart.mapTo(window, chart.rect().topLeft()), chart.size())
    legend_rect = QRect(legend.mapTo(window, legend.rect().topLeft()), legend.size())
    if chart_rect.intersects(legend_rect):
        found.append(f"{name}: the legend covers the chart")
    if legend.widget().height() > legend.viewport().height() and not legend.verticalScrollBar().isVisible():
        found.append(f"{name}: the legend's last entries are cut and cannot be scrolled to")
    plot_rect = chart.plot_rect()
    if plot_rect.width() < (chart.width() + legend.width()) / 3:
        found.append(f"{name}: the bars are squeezed to {plot_rect.width()} of {chart.width() + legend.width()} px")
    return found


# -- bringing a state on screen -----------------------------------------------------------------------


def rtx_4090(explorer) -> None:
    explorer.window.findChild(QWidget, "machineEditor").set_preset("RTX 4090")


def model_path(name: str, tmp_path: Path, httpserver) -> str:
    if name == "demo":
        return str(demo_model_path())
    if name in ("8b", "70b", "gpt-oss-20b"):
        entry = {"8b": "llama-3.1-8b-instruct", "70b": "llama-3.1-70b-instruct", "gpt-oss-20b": "gpt-oss-20b"}[name]
        return str(catalogue_path(find_entry(entry)))
    if name == "mixtral":
        return str(write_gguf(tmp_path / "mixtral-8x7b-instruct-v0.1.Q4_K_M.gguf", MIXTRAL, "header_only")[0])
    if name == "smollm2":
        return str(write_gguf(tmp_path / "smollm2.gguf", SMOLLM2, "header_only")[0])
    assert name == "url"
    served = Served(catalogue_path(find_entry("llama-3.1-8b-instruct")))
    httpserver.expect_request("/models/llama-3.1-8b-instruct-q4_k_m.gguf").respond_with_handler(served.handler)
    return httpserver.url_for("/models/llama-3.1-8b-instruct-q4_k_m.gguf")


def bring_up(qtbot, explorer, state: State, tmp_path: Path, httpserver) -> None:
    window = explorer.window
    window.resize(*state.size)
    qtbot.waitUntil(lambda: window.session.state.machine is not None, timeout=20000)
    if state.machine == "rtx4090":
        rtx_4090(explorer)
    path = model_path(state.model, tmp_path, httpserver)
    if state.model == "url":
        with qtbot.waitSignal(window.modelLoaded, timeout=30000):
            explorer.library.url.open(path)
    else:
        open_model(qtbot, window, path)
    if state.evidence:
        link = explorer.evidence
        qtbot.waitUntil(lambda: not link.busy(), timeout=10000)
        with qtbot.waitSignal(link.evidenceChanged, timeout=10000):
            link.import_path(str(SMOLLM2_LOG))
    if state.budget == "near-minimum":
        low = window.session.view.thresholds[0]
        window.apply_request(budget=Budget.of(low + 8 * MIB))
    if state.ctx is not None:
        window.apply_request(ctx=state.ctx)
    settle(qtbot, window)
    dock(qtbot, explorer, state.dock, tmp_path)
    qtbot.waitUntil(lambda: not window.run_it.ladder_pending(), timeout=30000)
    qtbot.wait(50)  # the last texts' relayout, and the side columns' heights after it (deferred by one turn)
    QApplication.processEvents()
    window.grab()  # pyqtgraph places an anchored text when it paints it: measure what is drawn
    assert (window.width(), window.height()) == state.size


def dock(qtbot, explorer, which: str | None, tmp_path: Path) -> None:
    for each in explorer.window.findChildren(QDockWidget):
        each.hide()
    if which is None:
        return
    if which == "sweep":
        explorer.whatif.sweep_dock.show()
        explorer.whatif.sweep_dock.raise_()
        sweep = explorer.whatif.sweep
        qtbot.waitUntil(lambda: sweep.result() is not None and not sweep.worker.busy, timeout=30000)
    elif which == "compare":
        explorer.whatif.compare_dock.show()
        explorer.whatif.compare_dock.raise_()
        compare = explorer.whatif.compare
        with qtbot.waitSignal(compare.secondLoaded, timeout=20000):
            compare.open_second(str(catalogue_path(find_entry("qwen3-8b"))))
    elif which == "quants":
        explorer.quants.dock.show()
        explorer.quants.dock.raise_()
        follower = explorer.quants.follower
        qtbot.waitUntil(lambda: follower.ladder() is not None and not follower.busy(), timeout=60000)
    else:
        assert which == "library"
        folder = tmp_path / "library-folder"
        folder.mkdir()
        write_gguf(folder / "mixtral.gguf", MIXTRAL, "header_only")
        add_folder(folder, tmp_path / "library.json")
        with qtbot.waitSignal(explorer.library.view.worker.succeeded, timeout=30000):
            explorer.library.library_action.trigger()


@pytest.fixture
def explorer_for(make_explorer):
    def make(state: State):
        probe = probe_hardware if state.machine == "probed" else None
        kw = {"probe_backend": probe} if probe is not None else {}
        return make_explorer(bandwidth_backend=assumed_bandwidths, **kw)

    return make


@pytest.mark.parametrize("state", STATES, ids=lambda s: str(s))
def test_nothing_is_clipped_and_no_chart_label_overlaps(qtbot, explorer_for, state, tmp_path, httpserver):
    explorer = explorer_for(state)
    bring_up(qtbot, explorer, state, tmp_path, httpserver)
    window = explorer.window
    assert window.session.state.model is not None
    problems = clipped_texts(window) + sideways_problems(window) + chart_problems(window)
    assert problems == [], "\n".join(problems)
