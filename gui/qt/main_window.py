"""The explorer window: open a GGUF, drag budget and ctx, watch the plan follow live.

Rule 1: the window holds one `Session` (`core.explorer.session`), shared with every dock: each
        control writes the person's input into it as a change, and the screen is redrawn from
        the view it publishes — the plan, the thresholds and slider spans, the full load, both
        decode estimates, the headline. The window computes no bytes and holds no policy (the
        budget a model opens at, what is remembered per model, the head mode a tied model
        allows, ranges, defaults and caps are the core's).
Rule 2: every control change asks for one run at the next turn of the event loop (`throttle.NextTurn`,
        ahead of the queued repaint: a tick paints once), so a storm of slider signals in one
        event-loop turn costs one change, not N; `derive` reuses the previous view's full
        load and thresholds when their inputs did not move (a budget tick re-plans only), and the
        window draws again only what the view changed (the side panel's full load, the context
        tiers, the Run it line's full-load command are not made again on a budget tick). The
        controls are set from each published view without signals, so drawing changes nothing.
Rule 3: loading, the hardware probe and the bandwidth probe run on worker threads
        (`BackgroundCall`); the loading thread also makes the view the model opens into (its
        thresholds, spans and full load: the session's `preview`), so opening a model — the
        heavy change — computes on the GUI thread only what moved meanwhile. A failed load
        shows its one-line reason and leaves the previous
        model, settings and plan on screen. A machine or bandwidth answer re-derives at once.
Rule 4: `modelLoaded` is emitted after the new model's plan is on screen, so whoever waits
        for it can read the widgets straight away; the add-ons hear of a new model from the session
        itself (`session.subscribe_models`), as they hear of everything else.
Rule 5: a loaded model is committed only after `derive` and every text it shows have run for
        it (the session's Rule 1, touching no widget): a model that cannot be shown is a failed
        load, and the previous model, plan and title stay.
Rule 6: a model opens at this machine's usable RAM, or at the budget, ctx and cap the person
        set for it before (`session` Rules 2–3; its key, the header fingerprint, is read on the
        loading thread); View ▸ Reset to this machine forgets them.
Rule 7: the window opens at a size that fits the screen's available area
        (`explorer.window_size.opening_size`), or at the size the person left (saved geometry);
        bottom docks open at most `window_size.DOCK_SHARE` of its height.
Rule 8: before any model is open the plan area is an empty state offering File ▸ Open…, the
        Catalogue and the Library, the machine panel draws the host RAM bar of the machine alone,
        and a failed load never claims a previous model is still shown when there was none.
Rule 9: whatever the window says — loading, loaded, a refusal, an offline error, measuring — goes to the
        message area (`message_area`) and stays until the next message, with a short history; no status
        tip that vanishes after a few seconds.
Rule 10: a window opened at the screen's size is on screen frame included once shown
        (`window_size.on_screen`); Quants and Library are full-size views, each its own window
        (`add_views`, `window_size.view_geometry`), never a strip at the bottom of this one.
Rule 11: the machine is probed again on View ▸ Reset to this machine and every REPROBE_IDLE_S seconds while
        no model loads, so the usable memory a model opens at is today's, not the start's.
Rule 12: an opened model's bandwidth figures are read (`measure_bandwidths`, on a worker) from a zero-interval timer,
        so in an event-loop turn after its plan is painted: the read runs Python (~20 ms at every launch of the
        demo, whose disk has nothing to measure) and held the interpreter lock while the first plan painted;
        their module (the kept record, the calibration) is imported by the worker that reads them. The
        estimates use the figures when they answer (Rule 3), as before.
"""

from __future__ import annotations

import logging
from pathlib import Path
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Sequence

from PySide6.QtCore import QRect, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDragMoveEvent, QDropEvent, QShowEvent
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow, QMenu, QProgressBar, QVBoxLayout, QWidget

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import ModelSpec, load_model
from gguf_budget.core.explorer.ctx_tiers import CtxTier, tier_cells
from gguf_budget.core.explorer.derive import ExplorerView
from gguf_budget.core.explorer.full_load import FullLoad
from gguf_budget.core.explorer.messages import MessageKind
from gguf_budget.core.explorer.model_key import model_key, spec_key
from gguf_budget.core.explorer.persist import ExplorerSettings, llama_options, server_words, state_from, typed_words
from gguf_budget.core.explorer.session import (
    AskLlama, Controls, OpenModel, ResetToMachine, Session, SetBandwidths, SetBudget, SetCtx, SetCtxCap, SetEngine,
    SetKnobs, SetMeasured, SetPrefer, SetRuntime, SetServer, SetTypedBandwidths,
)
from gguf_budget.core.llama_words.reader import LlamaCommand
from gguf_budget.core.explorer.state import ExplorerState, TypedBandwidths
from gguf_budget.core.explorer.window_size import Rect, dock_height, on_screen, opening_size, view_geometry
from gguf_budget.core.machine.bandwidth import Bandwidths, for_machine
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.machine.probe import REPROBE_IDLE_S, probe_hardware
from gguf_budget.core.remote.refs import names_remote
from gguf_budget.core.remote.source import reopen_name
from gguf_budget.core.errors import BudgetError
from gguf_budget.core.safe_text import safe_text

from gguf_budget.gui.qt.message_area import MessageArea
from gguf_budget.gui.qt.workers.background import BackgroundCall
from gguf_budget.gui.qt.plan.goal_control import GoalLink
from gguf_budget.gui.qt.plan.headline_view import HeadlineView
from gguf_budget.gui.qt.plan.tier_strip import TierStrip
from gguf_budget.gui.qt.plan.ledger_chart import LedgerChart
from gguf_budget.gui.qt.plan.run_it_line import RunItLine
from gguf_budget.gui.qt.menus.ask_command import AskCommand
from gguf_budget.gui.qt.menus.file_menu import FileMenu, gguf_paths
from gguf_budget.gui.qt.layout import build_body
from gguf_budget.gui.qt.machine.machine_link import MachineLink
from gguf_budget.gui.qt.server.server_files import ServerFiles
from gguf_budget.gui.qt.settings import (
    load_memory, load_settings, restore_geometry, save_geometry, save_settings, user_settings, with_recent,
)
from gguf_budget.gui.qt.theme import error_style
from gguf_budget.gui.qt.named import named
from gguf_budget.gui.qt.throttle import NextTurn

if TYPE_CHECKING:
    from gguf_budget.core.views.evidence_view import MeasuredView

BandwidthBackend = Callable[[str], tuple[Bandwidths, tuple[str, ...]]]
log = logging.getLogger(__name__)


def measure_again(path: str | None) -> tuple[Bandwidths, tuple[str, ...]]:
    """The bandwidth editor's Measure again: this machine measured anew and kept, as `hw --measure` does."""
    from gguf_budget.core.speed.machine_speed import speed_figures  # Rule 12: on the worker that reads them

    return speed_figures(path, again=True)


def measure_bandwidths(path: str) -> tuple[Bandwidths, tuple[str, ...]]:
    """This machine's figures, as every command reads them: kept from the first measurement (RAM, compute, this
    model's disk), measured now only where none is kept (under a second, never raising), and calibrated."""
    from gguf_budget.core.speed.machine_speed import speed_figures  # Rule 12: on the worker that reads them

    return speed_figures(path)


Loaded = tuple[ModelSpec, str, ExplorerView | None]


def _prepared(session: Session, spec: ModelSpec) -> Loaded:
    """On the loading thread: the model, the key its remembered choices live under (it reads the header) and the
    view it opens into (the session's Rule 5; None when it cannot be made — the GUI thread then says why)."""
    key = model_key(spec)
    try:
        return spec, key, session.preview(OpenModel(spec, key))
    except Exception:  # noqa: BLE001 - applied again on the GUI thread, where a failure is a failed load (Rule 5)
        return spec, key, None


def _rect(r: QRect) -> Rect:
    return r.x(), r.y(), r.width(), r.height()


def _keep_on_screen(window: QWidget) -> None:
    """Rule 10: a shown window's frame inside its screen's available area."""
    wanted = on_screen(_rect(window.frameGeometry()), _rect(window.geometry()), _rect(window.screen().availableGeometry()))
    if wanted != _rect(window.geometry()):
        window.setGeometry(*wanted)


class MainWindow(QMainWindow):
    """The desktop explorer.

    Signals:
        modelLoaded(): a model was loaded and its plan is on screen.
        loadFailed(str): a load failed; the message says why (the previous model stays).
        hardwareProbed(): a probe answered and its snapshot (and fit) is on screen.
        planChanged(): a re-derive finished and is on screen (`session.view.plan`, None when refused).
        machineChanged(): the machine judged (`session.state.machine`) or a reserve changed.
        bandwidthsMeasured(): the bandwidth probe answered and the estimates use its figures.
    """

    modelLoaded = Signal()
    loadFailed = Signal(str)
    hardwareProbed = Signal()
    planChanged = Signal()
    machineChanged = Signal()
    bandwidthsMeasured = Signal()

    def __init__(
        self,
        settings: QSettings | None = None,
        load_backend: Callable[[str], ModelSpec] = load_model,
        probe_backend: Callable[[], HardwareSnapshot] = probe_hardware,
        bandwidth_backend: BandwidthBackend = measure_bandwidths,
        remeasure_backend: Callable[[str | None], tuple[Bandwidths, tuple[str, ...]]] = measure_again,
        parent: QWidget | None = None,
        reprobe_s: int | None = REPROBE_IDLE_S,
    ):
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.setWindowTitle("GGUF Budget Explorer")
        self.setAcceptDrops(True)
        available = self.screen().availableGeometry()
        self.resize(*opening_size((available.width(), available.height())))
        self._opening = self.size()
        self._store = settings if settings is not None else user_settings()
        self._saved = load_settings(self._store)
        self.session = Session(state_from(self._saved), load_memory(self._store))
        """What every screen shows; the docks hold it too (Rule 1)."""
        self.session.subscribe(self._draw)
        self.session.subscribe_models(self._opened)
        self._drawn_model: ModelSpec | None = None
        self._drawn_load: FullLoad | None = None
        self._drawn_span: object = None
        self._drawn_run: tuple[object, ...] = (None, None, None)
        self._drawn_tiers: tuple[CtxTier, ...] = ()
        self.recompute_count = 0
        self._bottom_docks: list[QDockWidget] = []
        self._shown_once = False
        self.remote_opener: Callable[[str], None] | None = None
        """Set by the library add-on: opens a URL, `hf://…` or `owner/repo:QUANT` (Open Recent keeps them)."""
        self._budget_touched = False
        self._build()
        self.server_files = ServerFiles(self, self.session, self.body.hardware.server, self.file_menu, self.show_status)
        self._loader = BackgroundCall(lambda path: _prepared(self.session, load_backend(path)), parent=self)
        self._loader.succeeded.connect(self._loaded)
        self._loader.failed.connect(self._load_failed)
        self._bandwidth_probe = BackgroundCall(bandwidth_backend, parent=self)
        self._bandwidth_probe.succeeded.connect(self._bandwidths_measured)
        self._read_figures = QTimer(self, singleShot=True, interval=0)
        """Rule 12: the opened model's figures are read in a turn after its plan is painted."""
        self._read_figures.timeout.connect(self._start_figures)
        self._remeasure = BackgroundCall(remeasure_backend, parent=self)
        self._remeasure.succeeded.connect(self._bandwidths_measured)
        self._remeasure.succeeded.connect(lambda _: self.messages.say("Measured this machine's bandwidths again"))
        self.machine = MachineLink(self.body.hardware, self.session, probe_backend, self)
        self.machine.changed.connect(self._machine_changed)
        self.machine.probed.connect(self.hardwareProbed)
        self._reprobe = QTimer(self, interval=(reprobe_s or REPROBE_IDLE_S) * 1000)
        """Rule 11 (`reprobe_s` None: never, for a window whose machine must hold still, as in a test)."""
        self._reprobe.timeout.connect(self._reprobe_if_idle)
        if reprobe_s is not None:
            self._reprobe.start()
        self._timer = NextTurn(lambda: self._apply_controls(), self)
        self.goal = GoalLink(self.body.goal, self.session, self.commit_controls, self.messages.say, self)
        self._restore()
        self.body.plan.budget.slider.setFocus()
        self.machine.refresh()

    def _build(self) -> None:
        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.setSpacing(2)  # the headline's two lines sit together; the window still fits 1280 × 720
        layout.setContentsMargins(6, 4, 6, 2)
        self.load_error = named(QLabel(central, wordWrap=True), "loadError")
        self.load_error.setStyleSheet(error_style(bold=True))
        self.load_error.setTextFormat(Qt.TextFormat.PlainText)
        self.load_error.hide()
        self.headline = HeadlineView(central)
        layout.addWidget(self.load_error)
        layout.addWidget(self.headline)
        self.run_it = RunItLine(central)
        layout.addWidget(self.run_it)
        self.tier_strip = TierStrip(central)
        self.tier_strip.ctxChosen.connect(lambda ctx: self.session.apply(SetCtx(ctx)))
        layout.addWidget(self.tier_strip)
        self.body = build_body(central)
        layout.addWidget(self.body.splitter, 1)
        self.setCentralWidget(central)
        self.busy = named(QProgressBar(self, minimum=0, maximum=0), "busyIndicator")
        self.busy.setMaximumWidth(160)
        self.busy.setFormat("loading…")
        self.busy.hide()
        self.messages = MessageArea(self)
        """Rule 9: what the window said last, and before."""
        self.statusBar().addWidget(self.messages, 1)
        self.statusBar().addPermanentWidget(self.busy)
        self.file_menu = FileMenu(self, self.open_path)
        self.help_menu = QMenu("&Help", self)
        self.help_menu.setObjectName("helpMenu")
        self.menuBar().addMenu(self.help_menu)
        about = self.help_menu.addAction("&About GGUF Budget Explorer")
        about.setObjectName("aboutAction")
        about.triggered.connect(self._show_about)
        self.view_menu = QMenu("&View", self)
        """The View menu: Reset to this machine here; the add-ons add their docks' toggles."""
        self.view_menu.setObjectName("viewMenu")
        self.menuBar().insertMenu(self.help_menu.menuAction(), self.view_menu)
        self.reset_action = self.view_menu.addAction("&Reset to this machine")
        self.reset_action.setObjectName("resetToMachineAction")
        self.reset_action.setToolTip("Forget the budget, ctx and cap set for this model and probe the machine "
                                     "again: its budget is this machine's usable RAM as it is now")
        self.reset_action.triggered.connect(self._reset_to_machine)
        self.view_menu.addSeparator()
        panel = self.body.plan
        panel.budget.changed.connect(self._budget_set)
        for control in (panel.context, self.body.knobs, self.body.hardware.server,
                        self.body.hardware.engine):
            control.changed.connect(self._controls_changed)
        self.ask_command = AskCommand(self, self.file_menu, self.ask_llama)
        self._pending_command: LlamaCommand | None = None
        self.body.hardware.bandwidthsChanged.connect(self._bandwidths_typed)
        self.body.hardware.bandwidths.measureAgain.connect(self._measure_again)

    def _show_about(self) -> None:
        """Help ▸ About: its module (the dependency list, platform details) is imported when first asked."""
        from gguf_budget.gui.qt.about_dialog import show_about

        show_about(self)

    def _restore(self) -> None:
        s, state = self._saved, self.session.state
        self.body.knobs.set_values(s.n_buffers, s.head_mode, s.kv_type, s.force, s.slow_below_tok_s)
        self.body.plan.context.set_request(state.ctx, state.ctx_cap, state.prefer)
        self.body.hardware.server.show_state(state)
        self.body.hardware.bandwidths.set_typed(s.ram_bw, s.disk_bw, s.vram_bw)
        typed = state.typed_bandwidths
        self.body.hardware.editor.set_typed_compute((typed.backend, typed.gpu_flops, typed.cpu_flops))
        self._show_bandwidths()
        self.file_menu.set_recent(s.recent)
        restore_geometry(self._store, self)

    # -- public API -------------------------------------------------------------------

    def open_path(self, path: str) -> None:
        """Load a model off the GUI thread; ends in `modelLoaded` or `loadFailed(str)`. A remote
        reference (from Open Recent, or the command line) goes to `remote_opener`."""
        if self.remote_opener is not None and names_remote(str(path)):
            self.remote_opener(str(path))
            return
        self.busy.show()
        self.messages.say(f"Loading {safe_text(path, 200)}…", MessageKind.BUSY)
        self._loader.start(str(path))

    def ask_llama(self, command: LlamaCommand) -> None:
        """A llama.cpp command as the question (`menus.ask_command` Rule 2): its model opened first when it names
        another one; a command llama.cpp would run but this model cannot take is one line in the message area."""
        source = command.model_source
        model = self.session.state.model
        if source is not None and (model is None or Path(source).expanduser() != Path(model.path)):
            self._pending_command = command
            self.open_path(str(Path(source).expanduser()) if not names_remote(source) else source)
            return
        try:
            self.session.apply(AskLlama(command))
        except BudgetError as e:
            self.show_status(f"Could not ask that command: {safe_text(str(e), 300)}", MessageKind.PROBLEM)

    def apply_request(self, budget: Budget | None = None, ctx: int | None = None) -> None:
        """Set the budget and/or an exact ctx as if typed, and replan now."""
        self._apply_controls(budget, ctx)

    def show_model(self, spec: ModelSpec) -> None:
        """Plan a model already in memory (a priced quantization) as if it had just been loaded."""
        self._loaded((spec, spec_key(spec), None))

    def bandwidths_measured(self) -> bool:
        """True once the bandwidth probe has answered for the model on screen."""
        pending = self._bandwidth_probe.busy or self._read_figures.isActive()
        return self.session.state.measured_bandwidths is not None and not pending

    def plan_pending(self) -> bool:
        """True while a change waits for the coalescing timer."""
        return self._timer.isActive()

    def commit_controls(self) -> None:
        """A control change still waiting for the timer goes into the session now (a goal searches what is shown)."""
        if self._timer.isActive():
            self._apply_controls()

    def settings(self) -> ExplorerSettings:
        """The global knobs as they are now, as the window will remember them (budget, ctx and cap are
        remembered per model, by the session); a control change still waiting for the timer goes in first."""
        if self._timer.isActive():
            self._apply_controls()
        s = self.session.state
        return ExplorerSettings(
            prefer=s.prefer.value, n_buffers=s.n_buffers, head_mode=self.session.head_choice.value,
            kv_type=s.kv_type.value, force=s.force, slow_below_tok_s=s.slow_below_tok_s,
            **typed_words(s.typed_bandwidths), recent=self._saved.recent, runtime=s.runtime.value,
            **server_words(s.server), llama_options=llama_options(s),
        )

    # -- hooks for add-ons (gui.qt.whatif.host, gui.qt.evidence.host) -------------------

    def settings_store(self) -> QSettings:
        return self._store

    def show_evidence(self, view: MeasuredView | None) -> None:
        """The Measured column, the measured row and the runtime-evidence claim (None clears them)."""
        self.body.plan.set_measured(None if view is None else view.column)
        self.session.apply(SetMeasured(view))
        model = self.session.state.model
        if view is not None and model is not None:  # a run kept here may calibrate the estimates
            self._bandwidth_probe.start(model.path)

    def refresh_speed_figures(self) -> None:
        """The kept figures or runs changed (View ▸ Reset speed calibration): read them again off the GUI thread."""
        model = self.session.state.model
        if model is not None:
            self._bandwidth_probe.start(model.path)

    def ledger_chart(self) -> LedgerChart:
        return self.body.plan.chart

    def show_status(self, message: str, kind: MessageKind = MessageKind.INFO) -> None:
        """Rule 9: `message` in the message area until the next one, and in its history."""
        self.messages.say(message, kind)

    def add_docks(self, docks: Sequence[QDockWidget], height: int) -> None:
        """Dock these along the bottom, tabbed together and with the docks added before; the first
        dock ever added stays in front, `height` pixels tall at most (Rule 7)."""
        for dock in docks:
            self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
            if self._bottom_docks:
                self.tabifyDockWidget(self._bottom_docks[0], dock)
            self._bottom_docks.append(dock)
        if self._bottom_docks:
            self._bottom_docks[0].raise_()
            self.resizeDocks([self._bottom_docks[0]], [dock_height(height, self.height())], Qt.Orientation.Vertical)

    def add_views(self, docks: Sequence[QDockWidget]) -> None:
        """Rule 10: full-size views, each its own window (a dock that never docks), placed when first shown."""
        for dock in docks:
            dock.hide()  # floated before it is ever shown: nothing to raise
            self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
            dock.setAllowedAreas(Qt.DockWidgetArea.NoDockWidgetArea)
            dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetClosable
                             | QDockWidget.DockWidgetFeature.DockWidgetFloatable)
            dock.setFloating(True)
            dock.setGeometry(*view_geometry(_rect(self.screen().availableGeometry())))
            dock.visibilityChanged.connect(lambda shown, d=dock: shown and QTimer.singleShot(0, d, lambda: _keep_on_screen(d)))

    def save_settings(self) -> None:
        self._saved = self.settings()
        save_settings(self._store, self._saved, self.session.memory)
        save_geometry(self._store, self)

    # -- loading ----------------------------------------------------------------------

    def _loaded(self, loaded: Loaded) -> None:
        spec, key, hint = loaded
        self._timer.stop()
        try:
            self.session.apply(OpenModel(spec, key), hint)
        except Exception as e:  # noqa: BLE001 - whatever stops a model being shown is a failed load (Rule 5)
            if self.session.state.model is spec:  # it is shown: a screen that follows it failed, a bug
                raise
            log.exception("cannot show %s", safe_text(spec.path, 300))
            self._load_failed(f"{spec.path} cannot be shown: {type(e).__name__}: {e}")
            return
        self.modelLoaded.emit()

    def _opened(self, spec: ModelSpec) -> None:
        """The session opened `spec` and the screen shows it (the session's Rule 9: the window hears it before
        the add-ons, so their status lines come after its own)."""
        self.busy.hide()
        self.load_error.hide()
        self._saved = replace(self._saved, recent=with_recent(self._saved.recent, reopen_name(spec.path)))
        self.file_menu.set_recent(self._saved.recent)
        self.messages.say(f"Loaded {safe_text(spec.path, 200)}")
        self.save_settings()
        self._read_figures.start()  # Rule 12
        pending, self._pending_command = self._pending_command, None
        if pending is not None:
            self.ask_llama(replace(pending, settings=replace(pending.settings, model=None, model_url=None, hf_repo=None,
                                                             hf_file=None)))

    def _start_figures(self) -> None:
        """Rule 12: the figures of the model on screen, read now."""
        model = self.session.state.model
        if model is not None:
            self._bandwidth_probe.start(model.path)

    def _load_failed(self, message: str) -> None:
        self._pending_command = None
        self.busy.hide()
        self.load_error.setText(f"Could not open the model: {safe_text(message, 300)}")
        self.load_error.show()
        kept = "the previous model is still shown" if self.session.state.model is not None else "no model is open"
        self.messages.say(f"Load failed; {kept}", MessageKind.PROBLEM)
        self.loadFailed.emit(message)

    # -- input into the state ---------------------------------------------------------

    def _controls_changed(self) -> None:
        """Rule 2: a control moved; its value goes into the session once the event loop is idle."""
        self._timer.start()

    def _budget_set(self) -> None:
        """The person moved the budget control itself: the next change carries it as `SetBudget` (chosen)."""
        self._budget_touched = True
        self._controls_changed()

    def _apply_controls(self, budget: Budget | None = None, ctx: int | None = None) -> None:
        """Rule 1: the ctx and knob controls as they are now (`ctx` over the typed one), into the session as one
        change of typed parts; the budget only where it was set (`budget`, or the budget control moved)."""
        self._timer.stop()
        if budget is None and self._budget_touched:
            budget = self.body.plan.budget.budget()
        self._budget_touched = False
        context, hardware, state = self.body.plan.context, self.body.hardware, self.session.state
        server, engine = hardware.server.values(state.server), hardware.engine.values(state)
        changes = (() if budget is None else (SetBudget(budget),)) + (
            SetCtx(context.requested_ctx() if ctx is None else ctx), SetCtxCap(context.requested_cap()),
            SetPrefer(context.policy()), SetKnobs(**self.body.knobs.values()), SetRuntime(server["runtime"]),
            SetServer(server["server"]), SetEngine(**engine))
        self.session.apply(Controls(changes))

    def _reset_to_machine(self) -> None:
        """Rule 11: forget this model's budget, ctx and cap, and probe the machine again."""
        self.session.apply(ResetToMachine())
        self.machine.refresh()

    def _reprobe_if_idle(self) -> None:
        """Rule 11: while nothing loads, the machine is probed again (free memory moves as other programs run)."""
        if not self._loader.busy and not self.machine.probing():
            self.machine.refresh()

    def _machine_changed(self) -> None:
        """The link wrote the machine into the session (`machine_link` Rule 2); the panel draws it."""
        state = self.session.state
        if state.model is None and state.machine is not None:  # Rule 8: the machine alone
            self.body.hardware.show_machine(state.machine, state.reserves)
        self._show_bandwidths()
        self.machineChanged.emit()

    def _show_bandwidths(self) -> None:
        """The figures the full load reads at: a GPU's or a preset's own bandwidth where it states one."""
        state = self.session.state
        self.body.hardware.bandwidths.show_in_use(for_machine(state.bandwidths, state.machine))

    def _bandwidths_measured(self, answer: tuple[Bandwidths, tuple[str, ...]]) -> None:
        measured, reasons = answer
        for reason in reasons:
            log.info("bandwidth %s", reason)
        self.session.apply(SetBandwidths(measured))
        self._show_bandwidths()
        self.bandwidthsMeasured.emit()

    def _measure_again(self) -> None:
        """The bandwidth editor's Measure again, off the GUI thread; the answer is drawn as the first one is."""
        if not self._remeasure.busy:
            model = self.session.state.model
            self.messages.say("Measuring this machine's bandwidths again…", MessageKind.BUSY)
            self._remeasure.start(None if model is None else model.path)

    def _bandwidths_typed(self) -> None:
        typed = self.body.hardware.bandwidths.typed()
        backend, gpu_flops, cpu_flops = self.body.hardware.editor.typed_compute()
        self.session.apply(SetTypedBandwidths(TypedBandwidths(**typed, backend=backend, gpu_flops=gpu_flops,
                                                              cpu_flops=cpu_flops)))
        self._show_bandwidths()

    # -- drawing ----------------------------------------------------------------------

    def _draw(self, view: ExplorerView) -> None:
        """The session published `view`: the controls follow it (no signals) and the screen draws it."""
        state = view.state
        model = state.model
        if model is None:
            return
        self.recompute_count += 1
        if model is not self._drawn_model:
            self._drawn_model = model
            self.setWindowTitle(safe_text(model.name or model.architecture, 80))  # Qt appends " — GGUF Budget Explorer"
            self.body.summary.show_model(model)
            self.body.knobs.show_head_mode(state.head_mode)  # first: set_tied then changes nothing the user chose
            self.body.knobs.set_tied(model.tied_embeddings)
            self.body.hardware.set_layer_count(model.n_layer)
        self._sync_controls(state)
        self._show(view)

    def _sync_controls(self, state: ExplorerState) -> None:
        """Rule 2: controls that differ from the state are set to it, quietly (a change from a dock, a model
        opened at its remembered budget, Reset to this machine) — unless the person's own change still waits
        for the timer: then the controls are newer than the state (a probe answering in between drew the
        state before the typed ctx reached it, and set the ctx control back)."""
        if self._timer.isActive():
            return
        budget, context, knobs = self.body.plan.budget, self.body.plan.context, self.body.knobs
        if budget.budget() != state.budget:
            limit = state.budget.limit
            budget.set_budget(budget.exact_bytes() if limit is None else limit, state.budget.is_unlimited)
        if (context.requested_ctx(), context.requested_cap(), context.policy()) != (state.ctx, state.ctx_cap,
                                                                                   state.prefer):
            context.set_request(state.ctx, state.ctx_cap, state.prefer)
        if knobs.values()["head_mode"] != state.head_mode:
            knobs.show_head_mode(state.head_mode)
        if knobs.values()["kv_type"] != state.kv_type:  # a llama.cpp command asked (-ctk) sets it
            k = knobs.values()
            knobs.set_values(k["n_buffers"], k["head_mode"], state.kv_type, k["force"], k["slow_below_tok_s"])
        self.body.hardware.server.show_state(state)
        self.body.hardware.engine.show_state(state)
        self.body.hardware.show_gpu_layers(state.gpu_layers)

    def _show(self, view: ExplorerView) -> None:
        """Draw `view`: nothing here computes a number (Rule 1)."""
        model = view.state.model
        assert model is not None
        self.headline.show_headline(view.headline)
        if view.tiers != self._drawn_tiers:  # Rule 2: a budget tick keeps the tiers; their words are not made again
            self._drawn_tiers = view.tiers
            self.tier_strip.show_tiers(tier_cells(view.tiers))
        self.run_it.show_view(view)
        if view.budget_span is not None and view.budget_span != self._drawn_span:
            self._drawn_span = view.budget_span
            self.body.plan.budget.set_span(view.budget_span)
        self.body.plan.show_view(model, view)
        self.body.knobs.show_ring_note(view.ring_note)
        if view.full_load is not None and view.full_load is not self._drawn_load:
            self._drawn_load = view.full_load
            self.body.hardware.show_full_load(view.full_load)
        run = (view.state.measured, model, view.state.bandwidths)
        if any(a is not b for a, b in zip(run, self._drawn_run, strict=True)):
            self._drawn_run = run
            self.body.hardware.show_measured(view.measured_row)
        self.planChanged.emit()

    # -- window events ----------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if gguf_paths(event.mimeData()):
            event.acceptProposedAction()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        if gguf_paths(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = gguf_paths(event.mimeData())
        if paths:
            event.acceptProposedAction()
            self.open_path(paths[0])

    def offer_ways_in(self) -> None:
        """Rule 8: the empty state offers the File menu's ways in; the composition root asks once the add-ons have
        installed theirs (after the first plan is painted)."""
        entries = [("emptyOpen", self.file_menu.open_action), ("emptyCatalogue", self.findChild(QMenu, "catalogueMenu")),
                   ("emptyLibrary", self.findChild(QAction, "libraryAction"))]
        self.body.plan.empty.offer([(name, entry) for name, entry in entries if entry is not None])

    def showEvent(self, event: QShowEvent) -> None:
        """Rule 10: a window opened at the screen's size is kept on screen once first shown."""
        if not self._shown_once:
            self._shown_once = True
            if self.size() == self._opening:  # opened at the screen's size, not one the person left or asked
                QTimer.singleShot(0, self, lambda: _keep_on_screen(self))
        super().showEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_settings()
        super().closeEvent(event)
