"""File ▸ Export: the plan report (Markdown, JSON), the charts (PNG, SVG) and the sweep (CSV).

Rule 1: each action asks for a path (`file_dialogs.save_file`: where exports last went) and hands it to `export(kind, path)`, which
        tests call directly; the writing itself is `export_files`.
Rule 2: an action is enabled only while what it exports exists (checked as the menu opens):
        a plan for the reports and the ledger chart, a sweep of the model on screen for the
        sweep's CSV (the source computes one when the chart is of another model or request),
        and a sweep chart that is the current one for its images — otherwise the action is
        disabled and its tooltip says why.
Rule 3: a failed write says why in a (non-blocking) message box and emits `exportFailed`;
        nothing on screen changes and any existing file is left as it was.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QMenu, QMessageBox, QWidget

from gguf_budget.core.errors import ExportError
from gguf_budget.core import MemoryPlan, ModelSpec, SweepResult
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.speed.estimate import SpeedEstimate
from gguf_budget.core.vocab import TextEnum
from gguf_budget.core.views.export import chart_title

from gguf_budget.gui.qt.file_dialogs import Purpose, save_file
from gguf_budget.gui.qt.menus import export_files as files
from gguf_budget.gui.qt.plan.ledger_chart import LedgerChart

if TYPE_CHECKING:
    from gguf_budget.gui.qt.whatif.sweep_chart import SweepChart

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ExportSources:
    """Where the exported things are read from, at the moment of export."""

    plan: Callable[[], MemoryPlan | None]
    model: Callable[[], ModelSpec | None]
    ledger_chart: Callable[[], LedgerChart]
    sweep: Callable[[], SweepResult | None]
    sweep_chart: Callable[[], SweepChart]
    speed: Callable[[], SpeedEstimate | None]
    sweep_chart_stale: Callable[[], str | None]
    """Why the sweep chart is not the current one (None: it is)."""


class Export(TextEnum):
    """What File ▸ Export writes (the word is the action's objectName suffix and `export`'s argument)."""

    MARKDOWN = "markdown"
    JSON = "json"
    LEDGER_PNG = "ledger-png"
    LEDGER_SVG = "ledger-svg"
    SWEEP_CSV = "sweep-csv"
    SWEEP_PNG = "sweep-png"
    SWEEP_SVG = "sweep-svg"


class Needs(TextEnum):
    """Rule 2: what must be on screen for an export to have something to write."""

    PLAN = "plan"
    SWEEP = "sweep"


@dataclass(frozen=True)
class ExportKind:
    label: str
    suffix: str
    filter: str
    needs: Needs


EXPORTS: dict[Export, ExportKind] = {
    Export.MARKDOWN: ExportKind("Plan report as &Markdown…", "-plan.md", "Markdown (*.md)", Needs.PLAN),
    Export.JSON: ExportKind("Plan report as &JSON…", "-plan.json", "JSON (*.json)", Needs.PLAN),
    Export.LEDGER_PNG: ExportKind("Ledger chart as &PNG…", "-ledger.png", "PNG image (*.png)", Needs.PLAN),
    Export.LEDGER_SVG: ExportKind("Ledger chart as &SVG…", "-ledger.svg", "SVG image (*.svg)", Needs.PLAN),
    Export.SWEEP_CSV: ExportKind("Sweep as &CSV…", "-sweep.csv", "CSV (*.csv)", Needs.SWEEP),
    Export.SWEEP_PNG: ExportKind("Sweep chart as P&NG…", "-sweep.png", "PNG image (*.png)", Needs.SWEEP),
    Export.SWEEP_SVG: ExportKind("Sweep chart as S&VG…", "-sweep.svg", "SVG image (*.svg)", Needs.SWEEP),
}


class ExportMenu(QMenu):
    """The Export submenu.

    Signals:
        exported(str): a file was written (its path).
        exportFailed(str): a write failed; the one-line reason.
    """

    exported = Signal(str)
    exportFailed = Signal(str)

    def __init__(self, sources: ExportSources, parent: QWidget | None = None):
        super().__init__("&Export", parent)
        self.setObjectName("exportMenu")
        self._sources = sources
        self.message: QMessageBox | None = None
        self.actions_by_kind = {kind: self.addAction(spec.label) for kind, spec in EXPORTS.items()}
        for kind, action in self.actions_by_kind.items():
            action.setObjectName(f"export-{kind}")
            action.triggered.connect(lambda _=False, k=kind: self.choose(k))
        self.aboutToShow.connect(self.update_enabled)
        self.update_enabled()

    def available(self, kind: Export) -> bool:
        return self.unavailable(kind) is None

    def unavailable(self, kind: Export) -> str | None:
        """Rule 2: why `kind` cannot be exported now (None: it can)."""
        if EXPORTS[kind].needs is Needs.PLAN:
            ok = self._sources.plan() is not None and self._sources.model() is not None
            return None if ok else "There is no plan on screen"
        if kind is Export.SWEEP_CSV:  # computed when written, if the chart is not the current one
            return None if self._sources.model() is not None else "There is no model on screen"
        return self._sources.sweep_chart_stale()

    def update_enabled(self) -> None:
        for kind, action in self.actions_by_kind.items():
            why = self.unavailable(kind)
            action.setEnabled(why is None)
            action.setToolTip(why or "")

    def suggested_path(self, kind: Export) -> str:
        model = self._sources.model()
        stem = Path(model.path).stem if model is not None else "gguf-budget"
        return stem + EXPORTS[kind].suffix

    def choose(self, kind: Export) -> None:
        spec = EXPORTS[kind]
        title = spec.label.replace("&", "").rstrip("…")
        path = save_file(self.parentWidget(), f"Export {title}", Purpose.EXPORT, self.suggested_path(kind), spec.filter)
        if path:
            self.export(kind, path)

    def export(self, kind: Export | str, path: str) -> bool:
        """Write one export to `path`; False (and a message) when it could not be written."""
        kind = Export(kind)
        try:
            self._write(kind, path)
        except ExportError as e:
            log.info("export %s to %s failed: %s", kind, path, e)
            self._fail(str(e))
            return False
        log.info("exported %s to %s", kind, path)
        self.exported.emit(str(path))
        return True

    def _write(self, kind: Export, path: str) -> None:
        s = self._sources
        why = self.unavailable(kind)
        if why is not None:
            raise ExportError(f"nothing to export: {why[0].lower()}{why[1:]}")
        plan, model = s.plan(), s.model()
        sweep = s.sweep() if EXPORTS[kind].needs is Needs.SWEEP else None
        if kind is Export.MARKDOWN and plan is not None and model is not None:
            files.export_plan_markdown(path, plan, model)
        elif kind is Export.JSON and plan is not None:
            files.export_plan_json(path, plan, s.speed())
        elif kind is Export.SWEEP_CSV:
            if sweep is None:
                raise ExportError("the model on screen cannot be swept with these settings")
            files.export_sweep_csv(path, sweep)
        else:
            chart = s.ledger_chart() if kind in (Export.LEDGER_PNG, Export.LEDGER_SVG) else s.sweep_chart()
            if kind is Export.LEDGER_PNG:
                title = "" if plan is None or model is None else chart_title(plan, model)
                files.export_chart_png(path, chart, title)
            else:
                write = files.export_chart_png if kind is Export.SWEEP_PNG else files.export_chart_svg
                write(path, chart)

    def _fail(self, message: str) -> None:
        self.message = QMessageBox(QMessageBox.Icon.Warning, "Export failed", safe_text(message, 300),
                                   QMessageBox.StandardButton.Ok, self.parentWidget())
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setObjectName("exportError")
        self.message.open()
        self.exportFailed.emit(message)
