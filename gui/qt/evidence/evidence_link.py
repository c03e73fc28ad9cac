"""Runtime evidence in the window: File ▸ Import llama.cpp log…, ▸ Measure with llama.cpp…, ▸ llama.cpp location…

Rule 0: the add-on sees the window only through `EvidenceHost` (host.py) and never imports it.
Rule 1: evidence belongs to the model on screen: when a model loads, its stored evidence is
        looked up off the GUI thread (by header fingerprint) and the newest is shown; a
        model without any shows none. An answer for a model no longer on screen is dropped.
Rule 2: shown evidence fills three places, drawn by the host from one `MeasuredView`: the
        Measured column of the ledger chart, the "Measured (llama.cpp)" row of the machine
        panel, and the runtime-evidence claim.
Rule 3: measuring runs off the GUI thread (`MeasureJob`) with the full-load settings on screen
        (`settings_from_fit`), a progress dialog with Cancel, and the runner's timeout. The
        action is enabled only with a llama.cpp found and a model with weights open; its
        tooltip says which llama.cpp, or how to get one, or why not.
Rule 4: a failed import or measurement changes nothing on screen: the reason goes to the
        status bar, a non-blocking message box and `importFailed` / `measureFailed`.
Rule 5: the llama.cpp location the user chooses is kept in the host's settings
        (`measure/llama_path`) and wins over $GGUF_BUDGET_LLAMA_BIN and PATH.
Rule 6: closing the window cancels a running measurement, so no llama.cpp outlives it.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMessageBox

from gguf_budget.core.errors import EngineError
from gguf_budget.core.fit.types import FitEstimate
from gguf_budget.core.measure.command import MeasureSettings, default_measure_ctx, settings_from_fit
from gguf_budget.core.measure.engine import Engine, Lookups, find_engine
from gguf_budget.core.measure.runner import DEFAULT_TIMEOUT_S
from gguf_budget.core.measure.session import RuntimeEvidence, import_log, measure_model, newest_evidence
from gguf_budget.core.measure.store import EvidenceStore
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.views.evidence_view import measured_view
from gguf_budget.core.explorer.messages import MessageKind

from gguf_budget.gui.qt.evidence.host import EvidenceHost
from gguf_budget.gui.qt.file_dialogs import Purpose, open_file
from gguf_budget.gui.qt.evidence.measure_dialog import MeasureDialog
from gguf_budget.gui.qt.workers.background import BackgroundCall
from gguf_budget.gui.qt.workers.measure_job import MeasureJob
from gguf_budget.gui.qt.named import named

LLAMA_PATH_KEY = "measure/llama_path"
LOG_FILTER = "llama.cpp logs (*.log *.txt);;All files (*)"


class EvidenceLink(QObject):
    """Looks up, imports, measures and shows the runtime evidence of the window's model.

    Signals:
        evidenceChanged(): the evidence on screen changed (`evidence()`; None when there is none).
        importFailed(str): an import was refused; the one-line reason.
        measureFailed(str): a measurement did not complete; the one-line reason.
    """

    evidenceChanged = Signal()
    importFailed = Signal(str)
    measureFailed = Signal(str)

    def __init__(self, host: EvidenceHost, store: EvidenceStore | None = None, lookups: Lookups | None = None):
        window = host.window()
        super().__init__(window)
        self._host, self._window, self._settings = host, window, host.settings_store()
        self.store = store or EvidenceStore()
        self._lookups = lookups or Lookups()
        self.timeout_s = DEFAULT_TIMEOUT_S
        self._evidence: RuntimeEvidence | None = None
        self._model: ModelSpec | None = None
        self.message: QMessageBox | None = None
        self.dialog = MeasureDialog(window)
        self._lookup = BackgroundCall(self._newest, parent=self)
        self._lookup.succeeded.connect(self._found)
        self._importer = BackgroundCall(self._import, parent=self)
        self._importer.succeeded.connect(self._imported)
        self._importer.failed.connect(self._import_failed)
        self.job = MeasureJob(parent=self)
        self.job.progressed.connect(self.dialog.show_progress)
        self.job.succeeded.connect(self._measured)
        self.job.failed.connect(self._measure_failed)
        self.dialog.cancelRequested.connect(self.job.cancel)
        self.import_action = named(QAction("Import llama.cpp &log…", window), "importLogAction")
        self.import_action.triggered.connect(self.choose_log)
        self.measure_action = named(QAction("&Measure with llama.cpp…", window), "measureAction")
        self.measure_action.triggered.connect(self.measure)
        self.location_action = named(QAction("llama.cpp l&ocation…", window), "llamaLocationAction")
        self.location_action.triggered.connect(self.choose_location)
        host.session.subscribe_models(lambda _model: self.follow_model(), now=True)
        window.installEventFilter(self)
        self.update_actions()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Rule 6."""
        if event.type() == QEvent.Type.Close and self.job.running:
            self.job.cancel()
        return False

    # -- public API -------------------------------------------------------------------

    def evidence(self) -> RuntimeEvidence | None:
        return self._evidence

    def busy(self) -> bool:
        """True while a lookup, an import or a measurement has not answered yet."""
        return self._lookup.busy or self._importer.busy or self.job.running

    def engine(self) -> Engine | None:
        """The llama.cpp a measurement would run now (Rule 5), or None."""
        return self._find_engine()[0]

    def _find_engine(self) -> tuple[Engine | None, str]:
        """The engine, or None and why (a sentence for the tooltip)."""
        try:
            return find_engine(self.llama_location() or None, self._lookups), ""
        except EngineError as e:
            return None, str(e)[:1].upper() + str(e)[1:]

    def llama_location(self) -> str:
        return str(self._settings.value(LLAMA_PATH_KEY, "") or "")

    def set_llama_location(self, path: str) -> None:
        """Rule 5 ('' forgets it)."""
        if path:
            self._settings.setValue(LLAMA_PATH_KEY, path)
        else:
            self._settings.remove(LLAMA_PATH_KEY)
        self._settings.sync()
        self.update_actions()

    def follow_model(self) -> None:
        """Rule 1: the window loaded a model; find its stored evidence."""
        self._model = self._host.session.state.model
        self._show(None)
        self.update_actions()
        if self._model is not None:
            self._lookup.start(self._model)

    def import_path(self, path: str) -> None:
        """Import a llama.cpp log for the model on screen (off the GUI thread)."""
        if self._model is not None:
            self._importer.start(self._model, path)

    def measure(self) -> None:
        """Rule 3: run llama.cpp on the model on screen with the full-load settings."""
        engine, model = self.engine(), self._model
        if engine is None or model is None or model.header_only or self.job.running:
            return
        settings = self.settings_now(model)
        store, timeout = self.store, self.timeout_s
        self.dialog.begin(f"{engine.label}\n{safe_text(model.path, 200)}\n{settings.describe()}")
        self.job.start(lambda progress, cancel: measure_model(
            model.path, settings, engine, store, timeout_s=timeout, cancel=cancel, progress=progress))
        self.update_actions()

    def settings_now(self, model: ModelSpec) -> MeasureSettings:
        """The full-load settings on screen: the fit estimate's, else the plan's ctx on CPU."""
        view = self._host.session.view
        fit: FitEstimate | None = view.fit
        if fit is not None:
            return settings_from_fit(fit)
        plan = view.plan
        ctx = plan.ctx if plan is not None else default_measure_ctx(model.context_length)
        return MeasureSettings(ctx, 0, view.state.kv_type)

    def update_actions(self) -> None:
        """Rule 3: enabled states and tooltips."""
        model, (engine, missing) = self._model, self._find_engine()
        self.import_action.setEnabled(model is not None)
        if engine is None:
            why = missing
        elif model is None:
            why = "Open a model first"
        elif model.header_only:
            why = "This file has no weights (header only): llama.cpp needs the complete model"
        elif self.job.running:
            why = "A measurement is running"
        else:
            why = ""
        self.measure_action.setEnabled(not why)
        self.measure_action.setToolTip(why or f"Run {engine.label if engine else ''} on this model for a few tokens "
                                              "with the full-load settings on screen")

    # -- menu -------------------------------------------------------------------------

    def choose_log(self) -> None:
        path = open_file(self._window, "Import a llama.cpp log", Purpose.LOG, LOG_FILTER)
        if path:
            self.import_path(path)

    def choose_location(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self._window, "Choose llama-cli, llama-completion or llama-server",
                                              self.llama_location())
        if path:
            self.set_llama_location(path)

    def install_menu(self) -> None:
        """The three actions in their own section of File, above Quit."""
        hook = self._host.file_menu
        hook.menu.insertSeparator(hook.export_anchor)
        for action in (self.import_action, self.measure_action, self.location_action):
            hook.menu.insertAction(hook.export_anchor, action)
        hook.menu.aboutToShow.connect(self.update_actions)

    # -- answers ----------------------------------------------------------------------

    def _newest(self, model: ModelSpec) -> tuple[ModelSpec, RuntimeEvidence | None]:
        return model, newest_evidence(model.path, self.store)

    def _found(self, answer: tuple[ModelSpec, RuntimeEvidence | None]) -> None:
        model, evidence = answer
        if model is self._model:
            self._show(evidence)

    def _import(self, model: ModelSpec, path: str) -> tuple[ModelSpec, RuntimeEvidence]:
        return model, import_log(model, path, self.store)

    def _imported(self, answer: tuple[ModelSpec, RuntimeEvidence]) -> None:
        model, evidence = answer
        if model is self._model:
            self._show(evidence)
        self._host.show_status(f"Imported {safe_text(evidence.record.source, 200)}")

    def _import_failed(self, message: str) -> None:
        self._tell(f"Could not import the log: {message}")
        self.importFailed.emit(message)

    def _measured(self, evidence: RuntimeEvidence) -> None:
        self.dialog.finish()
        if self._model is not None and evidence.record.model_path == self._model.path:
            self._show(evidence)
        self.update_actions()
        self._host.show_status("Measured with llama.cpp; the evidence is kept with the model")

    def _measure_failed(self, message: str) -> None:
        self.dialog.finish()
        self.update_actions()
        self._tell(f"The measurement did not complete: {message}")
        self.measureFailed.emit(message)

    def _tell(self, text: str) -> None:
        self._host.show_status(safe_text(text, 300), MessageKind.PROBLEM)
        self.message = QMessageBox(QMessageBox.Icon.Warning, "Runtime evidence", safe_text(text, 600),
                                   QMessageBox.StandardButton.Ok, self._window)
        self.message.setObjectName("evidenceMessage")
        self.message.open()

    def _show(self, evidence: RuntimeEvidence | None) -> None:
        """Rule 2 (nothing is redrawn or signalled when the evidence stays the same)."""
        if evidence == self._evidence:
            return
        self._evidence = evidence
        self._host.show_evidence(None if evidence is None else measured_view(evidence))
        self.evidenceChanged.emit()


def install_evidence(host: EvidenceHost, store: EvidenceStore | None = None,
                     lookups: Lookups | None = None) -> EvidenceLink:
    """Add the runtime-evidence actions to the host's File menu and keep its evidence on screen."""
    link = EvidenceLink(host, store, lookups)
    link.install_menu()
    return link
