"""What-if analysis in the explorer window: the sweep and compare docks, File ▸ Catalogue and ▸ Export.

Rule 1: the composition root (`gui.qt.addons`) calls `install_whatif(host)` on a built window.
        The add-on reads and changes only the explorer session the window draws
        (`host.session`, `core.explorer.session`), and uses the window only for its named hooks
        for docks and menus (`WhatIfHost`). It never imports the window, never reads its
        widgets or getters, and never finds a menu by position.
Rule 2: after every plan the sweep follows the session: a changed budget only moves the mark;
        a new model or request (ctx, knobs) stops the sweep running and sweeps again once the
        controls have been still for SWEEP_SETTLE_MS — and only while the sweep dock shows
        (a hidden one catches up when it is shown). A sweep shares the GIL with the GUI, so a
        drag must not start one per tick. The compare view replans while it shows — at once,
        then at most every COMPARE_INTERVAL_MS during a drag (its table repaint would push a
        tick past one frame) — and when it is shown.
Rule 3: a budget picked on the sweep chart becomes the session's budget, as if typed, so the
        slider, the ledger and the banner follow it.
Rule 4: the two docks share the bottom dock area as tabs; View ▸ shows or hides them.
Rule 5: File ▸ Export ▸ Sweep as CSV writes the sweep of the model and request on screen: the
        one on the chart when it is theirs, else one computed now (`dock_inputs.sweep_of`) —
        never an older model's sweep under the current name. The sweep chart's own exports are
        offered only while the chart is the current one, and say why otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMenu, QWidget

from gguf_budget.core import ModelSpec, SweepResult, load_model
from gguf_budget.core.errors import BudgetError
from gguf_budget.core.explorer.dock_inputs import SweepInputs, sweep_of
from gguf_budget.core.explorer.session import SetBudget
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.safe_text import safe_text

from gguf_budget.gui.qt.menus.catalogue_menu import CatalogueMenu
from gguf_budget.gui.qt.whatif.compare_view import CompareView
from gguf_budget.gui.qt.menus.export_menu import ExportMenu, ExportSources
from gguf_budget.gui.qt.whatif.host import WhatIfHost
from gguf_budget.gui.qt.whatif.sweep_view import SweepView
from gguf_budget.gui.qt.whatif.sweep_worker import SweepSpeed
from gguf_budget.gui.qt.throttle import Throttle

DOCK_HEIGHT = 330
SWEEP_SETTLE_MS = 300
COMPARE_INTERVAL_MS = 100


@dataclass(frozen=True)
class WhatIf:
    """The what-if parts installed on one window."""

    sweep: SweepView
    compare: CompareView
    sweep_dock: QDockWidget
    compare_dock: QDockWidget
    catalogue_menu: CatalogueMenu
    export_menu: ExportMenu
    view_menu: QMenu
    follower: _Follower


def _dock(title: str, name: str, child: QWidget) -> QDockWidget:
    dock = QDockWidget(title)
    dock.setObjectName(name)
    dock.setWidget(child)
    dock.setAllowedAreas(Qt.DockWidgetArea.BottomDockWidgetArea | Qt.DockWidgetArea.TopDockWidgetArea)
    return dock


def _add_file_entries(host: WhatIfHost, catalogue: QMenu, export: QMenu) -> None:
    """File ▸ Catalogue, a separator, ▸ Export: above the host's Quit section."""
    menu, anchor = host.file_menu.menu, host.file_menu.export_anchor
    menu.insertMenu(anchor, catalogue)
    menu.insertSeparator(anchor)
    menu.insertMenu(anchor, export)


def shows(dock: QDockWidget) -> bool:
    """On screen: shown, and its tab the one selected (a tabified dock behind another stays `isVisible`)."""
    return dock.isVisible() and not dock.visibleRegion().isEmpty()


STALE_CHART = "The sweep chart shows another model or request; show Budget sweep to bring it up to date"


class _Follower(QObject):
    """Rule 2: keeps the sweep and compare views in step with the session's plans, while they show."""

    def __init__(self, host: WhatIfHost, sweep: SweepView, compare: CompareView,
                 sweep_dock: QDockWidget, compare_dock: QDockWidget):
        super().__init__(sweep_dock)
        self._session, self._sweep, self._compare = host.session, sweep, compare
        self._sweep_dock, self._compare_dock = sweep_dock, compare_dock
        self._swept: SweepInputs | None = None
        self._charted: SweepInputs | None = None
        self.timer = QTimer(self, singleShot=True, interval=SWEEP_SETTLE_MS)
        self.timer.timeout.connect(self._settled)
        self.compare_throttle = Throttle(COMPARE_INTERVAL_MS, self._compare_now, self)
        sweep_dock.visibilityChanged.connect(self._sweep_visibility)
        compare_dock.visibilityChanged.connect(self._compare_visibility)
        sweep.sweepFinished.connect(self._finished)

    def _inputs(self) -> SweepInputs | None:
        docks = self._session.view.docks  # None inside: no model, or knobs the planner refuses
        return None if docks is None else docks.sweep

    def follow(self) -> None:
        """After every plan: move the budget mark; a new model or request sweeps once it settles."""
        inputs = self._inputs()
        if inputs is None:
            return
        if inputs.same(self._swept):
            self._sweep.set_budget(self._session.state.budget.limit)
        elif shows(self._sweep_dock):
            self._sweep.invalidate("The controls changed; the sweep follows when they settle…")
            self.timer.start()
        if shows(self._compare_dock):
            self.compare_throttle.request()

    def _settled(self) -> None:
        if shows(self._sweep_dock):
            self.sweep_now()

    def sweep_now(self) -> None:
        """Sweep the session's model and request now."""
        inputs = self._inputs()
        if inputs is None:
            return
        request = self._session.state.request()
        self._sweep.set_speed(SweepSpeed(inputs.bandwidths, inputs.host_available))
        if self._swept is None or self._swept.model is not inputs.model:
            self._sweep.set_model(inputs.model, request)
        else:
            self._sweep.set_request(request)
        self._swept = inputs
        self._sweep.set_budget(request.budget.limit)

    def _finished(self) -> None:
        self._charted = self._swept

    def chart_is_current(self) -> bool:
        """Rule 5: the chart is of the model, request and speed inputs on screen."""
        inputs = self._inputs()
        return inputs is not None and inputs.same(self._charted) and self._sweep.result() is not None

    def export_sweep(self) -> SweepResult | None:
        """Rule 5: the sweep on screen's model and request (None: no model, or one that cannot be swept)."""
        if self.chart_is_current():
            return self._sweep.result()
        inputs = self._inputs()
        if inputs is None:
            return None
        try:
            return sweep_of(inputs, mark=self._session.state.budget)
        except BudgetError:
            return None

    def _sweep_visibility(self, shown: bool) -> None:
        """A sweep dock that comes into view catches up at once."""
        inputs = self._inputs()
        if shown and inputs is not None and not inputs.same(self._swept):
            self.timer.stop()
            self.sweep_now()

    def _compare_visibility(self, shown: bool) -> None:
        if shown:
            self._compare_now()

    def _compare_now(self) -> None:
        state = self._session.state
        if state.model is not None:
            try:
                request = state.request()
            except BudgetError:
                return
            self._compare.set_first(state.model, request, self._session.view.plan)


def install_whatif(host: WhatIfHost, compare_backend: Callable[[str], ModelSpec] = load_model) -> WhatIf:
    """Add the sweep and compare docks and the Catalogue, Export and View menus to the host window."""
    window = host.window()
    sweep, compare = SweepView(parent=window), CompareView(compare_backend, window)
    sweep_dock = _dock("Budget sweep", "sweepDock", sweep)
    compare_dock = _dock("Compare models", "compareDock", compare)
    host.add_docks((sweep_dock, compare_dock), DOCK_HEIGHT)
    follower = _Follower(host, sweep, compare, sweep_dock, compare_dock)
    host.session.subscribe(lambda _view: follower.follow())
    sweep.budgetPicked.connect(lambda budget: host.session.apply(SetBudget(Budget.of(budget))))
    catalogue = CatalogueMenu(host.open_path, window)
    session = host.session
    export = ExportMenu(ExportSources(lambda: session.view.plan, lambda: session.state.model, host.ledger_chart,
                                      follower.export_sweep, lambda: sweep.chart, lambda: session.view.plan_speed,
                                      lambda: None if follower.chart_is_current() else STALE_CHART), window)
    export.exported.connect(lambda path: host.show_status(f"Exported {safe_text(path, 200)}"))
    _add_file_entries(host, catalogue, export)
    view = host.view_menu
    view.addAction(sweep_dock.toggleViewAction())
    view.addAction(compare_dock.toggleViewAction())
    return WhatIf(sweep, compare, sweep_dock, compare_dock, catalogue, export, view, follower)
