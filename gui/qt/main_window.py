"""The explorer window: open a GGUF, drag budget and ctx, watch the plan follow live.

Rule 1: every user change marks the plan dirty and restarts a 0 ms single-shot timer, so a
        storm of slider signals in one event-loop turn costs one `plan_memory` call, not N.
Rule 2: loading and probing run on worker threads (`BackgroundCall`); the window shows a
        busy indicator meanwhile. A failed load shows its one-line reason and leaves the
        previous model, settings and plan on screen.
Rule 3: `modelLoaded` is emitted after the new model's plan is on screen, so whoever waits
        for it can read the widgets straight away.
Rule 4: the hardware snapshot and the fit estimate are kept by `MachineLink`, which the
        window tells about every new plan (model, ctx, KV type).
Rule 5: the window computes no bytes: plans come from `plan_memory`, thresholds from
        `budget_thresholds`, fit numbers from `estimate_fit`, texts from the core's views.
Rule 6: a loaded model is committed to the window only after everything showing it computes
        has succeeded (`_preview` runs it first, touching no widget): a model that cannot be
        shown is a failed load, and the previous model, plan and title stay.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Callable, Sequence

import pyqtgraph as pg
from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow, QMenu, QProgressBar, QVBoxLayout, QWidget

from gguf_budget.core import BudgetError, ModelSpec, load_model
from gguf_budget.core.fit.types import FitEstimate, Reserves
from gguf_budget.core.machine.bandwidth import Bandwidths
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.machine.probe import probe_hardware
from gguf_budget.core.plan.types import BudgetRequest, MemoryPlan
from gguf_budget.core.ranges import BUDGET, CONTEXT
from gguf_budget.core.views.model_summary import summary_rows
from gguf_budget.core.views.plan_report import plan_text
from gguf_budget.core.views.plan_view import BannerState, pinned_text, plan_banner
from gguf_budget.core.views.evidence_view import MeasuredView
from gguf_budget.core.plan.search import budget_thresholds, plan_memory
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.speed.estimate import SpeedEstimate, plan_speed
from gguf_budget.core.speed.token_bytes import TokenPrices

from gguf_budget.gui.qt.about_dialog import show_about
from gguf_budget.gui.qt.workers.background import BackgroundCall
from gguf_budget.gui.qt.plan.banner import Banner
from gguf_budget.gui.qt.plan.budget_control import MIB
from gguf_budget.gui.qt.plan.context_control import STEP, snap
from gguf_budget.gui.qt.menus.file_menu import FileMenu, gguf_paths
from gguf_budget.gui.qt.layout import build_body
from gguf_budget.gui.qt.machine.machine_link import MachineLink
from gguf_budget.gui.qt.settings import (
    ExplorerSettings, load_settings, restore_geometry, save_geometry, save_settings, user_settings, with_recent,
)
from gguf_budget.gui.qt.theme import error_style

UNKNOWN_CONTEXT = 32768
SLIDER_BELOW, SLIDER_ABOVE = 0.75, 1.25
STATUS_MS = 5000
log = logging.getLogger(__name__)


def slider_span(low: int, high: int) -> tuple[int, int]:
    """The budget slider's range: from below the minimum configuration to above all-pinned."""
    return int(low * SLIDER_BELOW), int(high * SLIDER_ABOVE)


def new_model_budget(low: int, high: int, chosen: int) -> int:
    """A new model keeps the budget when it lies on the slider, else starts between its thresholds
    (at most the core's largest budget: a model that needs more is shown as impossible)."""
    lo, hi = slider_span(low, high)
    return chosen if lo <= chosen <= hi else min((low + high) // 2 // MIB * MIB, BUDGET.high)


class MainWindow(QMainWindow):
    """The desktop explorer.

    Signals:
        modelLoaded(): a model was loaded and its plan is on screen.
        loadFailed(str): a load failed; the message says why (the previous model stays).
        hardwareProbed(): a probe answered and its snapshot (and fit) is on screen.
        planChanged(): a replan finished and is on screen (`current_plan()`, None when refused).
        machineChanged(): the machine judged (`snapshot()`) or a reserve changed.
    """

    modelLoaded = Signal()
    loadFailed = Signal(str)
    hardwareProbed = Signal()
    planChanged = Signal()
    machineChanged = Signal()

    def __init__(
        self,
        settings: QSettings | None = None,
        load_backend: Callable[[str], ModelSpec] = load_model,
        probe_backend: Callable[[], HardwareSnapshot] = probe_hardware,
        parent: QWidget | None = None,
    ):
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.setWindowTitle("GGUF Budget Explorer")
        self.setAcceptDrops(True)
        self.resize(1440, 900)
        self._store = settings if settings is not None else user_settings()
        self._saved = load_settings(self._store)
        self._model: ModelSpec | None = None
        self._plan: MemoryPlan | None = None
        self._prices: TokenPrices | None = None
        self._speed: SpeedEstimate | None = None
        self.bandwidths = Bandwidths()
        self._ctx_request = self._saved.ctx
        self._range_dirty = True
        self.recompute_count = 0
        self._bottom_docks: list[QDockWidget] = []
        self._build()
        self._loader = BackgroundCall(load_backend, parent=self)
        self._loader.succeeded.connect(self._loaded)
        self._loader.failed.connect(self._load_failed)
        self.machine = MachineLink(self.body.hardware, probe_backend, self)
        self.machine.probed.connect(self.hardwareProbed)
        self.machine.changed.connect(self.machineChanged)
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self._recompute)
        self._restore()
        self.body.plan.budget.slider.setFocus()
        self.machine.refresh()

    def _build(self) -> None:
        central = QWidget(self)
        layout = QVBoxLayout(central)
        self.load_error = QLabel(central, objectName="loadError", wordWrap=True)
        self.load_error.setStyleSheet(error_style(bold=True))
        self.load_error.setTextFormat(Qt.TextFormat.PlainText)
        self.load_error.hide()
        self.banner = Banner(central)
        layout.addWidget(self.load_error)
        layout.addWidget(self.banner)
        self.body = build_body(central)
        layout.addWidget(self.body.splitter, 1)
        self.setCentralWidget(central)
        self.busy = QProgressBar(self, objectName="busyIndicator", minimum=0, maximum=0, maximumWidth=160)
        self.busy.setFormat("loading…")
        self.busy.hide()
        self.statusBar().addPermanentWidget(self.busy)
        self.file_menu = FileMenu(self, self.open_path)
        self.help_menu = QMenu("&Help", self)
        self.help_menu.setObjectName("helpMenu")
        self.menuBar().addMenu(self.help_menu)
        about = self.help_menu.addAction("&About GGUF Budget Explorer")
        about.setObjectName("aboutAction")
        about.triggered.connect(lambda: show_about(self))
        panel = self.body.plan
        panel.budget.changed.connect(lambda: self._schedule(range_dirty=False))
        panel.context.changed.connect(self._context_changed)
        self.body.knobs.changed.connect(lambda: self._schedule(range_dirty=True))

    def _restore(self) -> None:
        s = self._saved
        self.body.knobs.set_values(s.n_buffers, s.head_mode, s.kv_type, s.force)
        self.body.plan.budget.set_budget(s.budget_bytes or 0, s.unlimited)
        self.file_menu.set_recent(s.recent)
        restore_geometry(self._store, self)

    # -- public API -------------------------------------------------------------------

    def open_path(self, path: str) -> None:
        """Load a model off the GUI thread; ends in `modelLoaded` or `loadFailed(str)`."""
        self.busy.show()
        self.statusBar().showMessage(f"Loading {safe_text(path, 200)}…")
        self._loader.start(str(path))

    def current_plan(self) -> MemoryPlan | None:
        """The plan on screen (None before a model is planned)."""
        return self._plan

    def apply_request(self, budget_bytes: int | None = None, ctx: int | None = None) -> None:
        """Set the budget (0 = unlimited) and/or an explicit ctx as if typed, and replan now."""
        budget = self.body.plan.budget
        if budget_bytes is not None:
            budget.set_budget(budget_bytes or budget.exact_bytes(), unlimited=budget_bytes == 0)
        if ctx is not None:
            self._ctx_request = ctx
            context = self.body.plan.context
            context.set_request(min(ctx, context.slider.maximum()))
        self._range_dirty = True
        self._recompute()

    def current_model(self) -> ModelSpec | None:
        return self._model

    def current_speed(self) -> SpeedEstimate | None:
        """The decode estimate of the plan on screen (None while there is no plan)."""
        return self._speed

    def speed_inputs(self) -> tuple[Bandwidths, int | None]:
        """The bandwidths, and the judged machine's available RAM (page cache or disk for streamed layers)."""
        snapshot = self.machine.snapshot()
        return self.bandwidths, None if snapshot is None else snapshot.host_available

    def show_model(self, spec: ModelSpec) -> None:
        """Plan a model already in memory (a priced quantization) as if it had just been loaded."""
        self._loaded(spec)

    def reserves(self) -> Reserves:
        """The host and first-GPU reserves the machine panel holds back."""
        return self.body.hardware.reserves()

    def current_fit(self) -> FitEstimate | None:
        """The fit estimate on screen (None until a model and a snapshot are both known)."""
        return self.machine.fit()

    def snapshot(self) -> HardwareSnapshot | None:
        """The machine the fit is judged against: the hypothetical one when ticked, else the probe's."""
        return self.machine.snapshot()

    def refresh_hardware(self) -> None:
        """Probe again off the GUI thread; ends in `hardwareProbed`."""
        self.machine.refresh()

    def plan_pending(self) -> bool:
        """True while a change waits for the coalescing timer."""
        return self._timer.isActive()

    def request(self) -> BudgetRequest:
        """The request the controls describe now."""
        knobs = self.body.knobs.values()
        cap = UNKNOWN_CONTEXT if self._model is not None and self._model.context_length is None else None
        return BudgetRequest(budget_bytes=self.body.plan.budget.budget_bytes(),
                             ctx=self.body.plan.context.requested_ctx(), ctx_cap=cap, **knobs)

    def settings(self) -> ExplorerSettings:
        """The knobs as they are now, as the window will remember them."""
        knobs = self.body.knobs.values()
        budget = self.body.plan.budget
        return ExplorerSettings(budget_bytes=budget.exact_bytes() or None, unlimited=budget.unlimited.isChecked(),
                                ctx=self._ctx_request, recent=self._saved.recent, **knobs)

    # -- hooks for add-ons (gui.qt.whatif.host, gui.qt.evidence.host) -------------------

    def settings_store(self) -> QSettings:
        return self._store

    def show_evidence(self, view: MeasuredView | None) -> None:
        """The Measured column, the measured row and the runtime-evidence claim (None clears them)."""
        self.body.plan.set_measured(None if view is None else view.column)
        self.body.hardware.show_measured(None if view is None else view.summary)
        self.machine.set_evidence(None if view is None else view.claim)

    def ledger_chart(self) -> pg.GraphicsLayoutWidget:
        return self.body.plan.chart

    def show_status(self, message: str) -> None:
        self.statusBar().showMessage(message, STATUS_MS)

    def add_docks(self, docks: Sequence[QDockWidget], height: int) -> None:
        """Dock these along the bottom, tabbed together and with the docks added before; the first
        dock ever added stays in front, `height` pixels tall."""
        for dock in docks:
            self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
            if self._bottom_docks:
                self.tabifyDockWidget(self._bottom_docks[0], dock)
            self._bottom_docks.append(dock)
        if self._bottom_docks:
            self._bottom_docks[0].raise_()
            self.resizeDocks([self._bottom_docks[0]], [height], Qt.Orientation.Vertical)

    def add_menu(self, menu: QMenu) -> None:
        """Put `menu` in the menu bar after File, before Help."""
        self.menuBar().insertMenu(self.help_menu.menuAction(), menu)

    def save_settings(self) -> None:
        self._saved = self.settings()
        save_settings(self._store, self._saved)
        save_geometry(self._store, self)

    # -- loading ----------------------------------------------------------------------

    def _loaded(self, spec: ModelSpec) -> None:
        try:
            self._preview(spec)
        except Exception as e:  # noqa: BLE001 - whatever stops a model being shown is a failed load (Rule 6)
            log.exception("cannot show %s", safe_text(spec.path, 300))
            self._load_failed(f"{spec.path} cannot be shown: {type(e).__name__}: {e}")
            return
        self.busy.hide()
        self.load_error.hide()
        self._model = spec
        self.setWindowTitle(safe_text(spec.name or spec.architecture, 80))  # Qt appends " — GGUF Budget Explorer"
        self._prices = TokenPrices.of(spec)
        self.body.summary.show_model(spec)
        self.body.knobs.set_tied(spec.tied_embeddings)
        self.body.hardware.set_layer_count(spec.n_layer)
        context = self.body.plan.context
        context.set_maximum(spec.context_length or UNKNOWN_CONTEXT)
        context.set_request(None if self._ctx_request is None else min(self._ctx_request, context.slider.maximum()))
        self._saved = replace(self._saved, recent=with_recent(self._saved.recent, spec.path))
        self.file_menu.set_recent(self._saved.recent)
        self._range_dirty = True
        self._recompute(new_model=True)
        self.statusBar().showMessage(f"Loaded {safe_text(spec.path, 200)}", STATUS_MS)
        self.save_settings()
        self.modelLoaded.emit()

    def _preview(self, spec: ModelSpec) -> None:
        """Compute what showing `spec` will compute, touching no widget; raises what would fail (Rule 6)."""
        summary_rows(spec)
        prices = TokenPrices.of(spec)
        top = max(STEP, min(spec.context_length or UNKNOWN_CONTEXT, CONTEXT.high))
        ctx = None if self._ctx_request is None else snap(min(self._ctx_request, top), top)
        request = replace(self.request(), ctx=ctx, ctx_cap=UNKNOWN_CONTEXT if spec.context_length is None else None)
        try:
            budget = new_model_budget(*budget_thresholds(spec, request), self.body.plan.budget.exact_bytes())
            plan = plan_memory(spec, request if request.unlimited else replace(request, budget_bytes=budget))
        except BudgetError:
            return  # shown as "CANNOT PLAN" with the reason: a state the window draws
        plan_banner(plan)
        pinned_text(spec, plan)
        plan_text(plan)
        plan_speed(prices, plan, *self.speed_inputs())

    def _load_failed(self, message: str) -> None:
        self.busy.hide()
        self.load_error.setText(f"Could not open the model: {safe_text(message, 300)}")
        self.load_error.show()
        self.statusBar().showMessage("Load failed; the previous model is still shown", STATUS_MS)
        self.loadFailed.emit(message)

    # -- planning ---------------------------------------------------------------------

    def _context_changed(self) -> None:
        self._ctx_request = self.body.plan.context.requested_ctx()
        self._schedule(range_dirty=True)

    def _schedule(self, range_dirty: bool) -> None:
        self._range_dirty |= range_dirty
        self._timer.start()

    def _recompute(self, new_model: bool = False) -> None:
        self._timer.stop()
        if self._model is None:
            return
        self.recompute_count += 1
        try:
            if self._range_dirty:
                self._update_budget_range(new_model)
            plan = plan_memory(self._model, self.request())
        except BudgetError as e:
            self._plan = self._speed = None
            self.banner.show_state(BannerState.ERROR, f"CANNOT PLAN — {e}")
            self.body.plan.clear_plan(str(e))
            self.machine.follow(self._model, None, self.request().kv_type)
            self.planChanged.emit()
            return
        self._plan = plan
        assert self._prices is not None
        self._speed = plan_speed(self._prices, plan, *self.speed_inputs())
        view = plan_banner(plan)
        self.banner.show_state(view.state, view.text)
        self.body.plan.show_plan(self._model, plan)
        self.machine.follow(self._model, plan.ctx, plan.kv_type)
        self.planChanged.emit()

    def _update_budget_range(self, new_model: bool) -> None:
        """Slider from below the minimum configuration to above the all-pinned budget."""
        self._range_dirty = False
        assert self._model is not None
        low, high = budget_thresholds(self._model, self.request())
        budget = self.body.plan.budget
        budget.set_range(*slider_span(low, high))
        chosen = budget.exact_bytes()
        if new_model and new_model_budget(low, high, chosen) != chosen:
            budget.set_budget(new_model_budget(low, high, chosen), budget.unlimited.isChecked())

    # -- window events ----------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if gguf_paths(event.mimeData()):
            event.acceptProposedAction()

    def dragMoveEvent(self, event) -> None:
        if gguf_paths(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = gguf_paths(event.mimeData())
        if paths:
            event.acceptProposedAction()
            self.open_path(paths[0])

    def closeEvent(self, event) -> None:
        self.save_settings()
        super().closeEvent(event)
