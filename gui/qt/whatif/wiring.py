"""What-if analysis in the explorer window: the sweep and compare docks, File ▸ Catalogue and ▸ Export.

Rule 1: the composition root (`gui.qt.app`) calls `install_whatif(host)` on a built window.
        The add-on talks to it only through `WhatIfHost` (`whatif.host`): its signal, its
        getters and setters, and its named hooks for docks and menus. It never imports the
        window and never finds a menu by position.
Rule 2: after every plan the sweep follows the window: a changed budget only moves the mark;
        a new model or request (ctx, knobs) stops the sweep running and sweeps again once the
        controls have been still for SWEEP_SETTLE_MS — and only while the sweep dock shows
        (a hidden one catches up when it is shown). A sweep shares the GIL with the GUI, so a
        drag must not start one per tick. The compare view replans while it shows — at once,
        then at most every COMPARE_INTERVAL_MS during a drag (its table repaint would push a
        tick past one frame) — and when it is shown.
Rule 3: a budget picked on the sweep chart becomes the window's budget (`apply_request`), as
        if typed, so the slider, the ledger and the banner follow it.
Rule 4: the two docks share the bottom dock area as tabs; View ▸ shows or hides them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMenu, QWidget

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import BudgetRequest, ModelSpec, load_model
from gguf_budget.core.safe_text import safe_text

from gguf_budget.gui.qt.menus.catalogue_menu import CatalogueMenu
from gguf_budget.gui.qt.whatif.compare_view import CompareView
from gguf_budget.gui.qt.menus.export_menu import ExportMenu, ExportSources
from gguf_budget.gui.qt.whatif.host import WhatIfHost
from gguf_budget.gui.qt.whatif.sweep_view import SweepView, sweep_key
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


class _Follower(QObject):
    """Rule 2: keeps the sweep and compare views in step with the window's plans, while they show."""

    def __init__(self, host: WhatIfHost, sweep: SweepView, compare: CompareView,
                 sweep_dock: QDockWidget, compare_dock: QDockWidget):
        super().__init__(sweep_dock)
        self._host, self._sweep, self._compare = host, sweep, compare
        self._sweep_dock, self._compare_dock = sweep_dock, compare_dock
        self._swept: tuple[ModelSpec, BudgetRequest, SweepSpeed] | None = None
        self.timer = QTimer(self, singleShot=True, interval=SWEEP_SETTLE_MS)
        self.timer.timeout.connect(self._settled)
        self.compare_throttle = Throttle(COMPARE_INTERVAL_MS, self._compare_now, self)
        sweep_dock.visibilityChanged.connect(self._sweep_visibility)
        compare_dock.visibilityChanged.connect(self._compare_visibility)

    def _is_swept(self, model: ModelSpec, request: BudgetRequest) -> bool:
        """The sweep on the chart is of this model (the very object), request and speed inputs."""
        return (self._swept is not None and self._swept[0] is model and self._swept[1] == sweep_key(request)
                and self._swept[2] == SweepSpeed(*self._host.speed_inputs()))

    def follow(self) -> None:
        """After every plan: move the budget mark; a new model or request sweeps once it settles."""
        model = self._host.current_model()
        if model is None:
            return
        request = self._host.request()
        if self._is_swept(model, request):
            self._sweep.set_budget(request.budget.limit)
        elif shows(self._sweep_dock):
            self._sweep.invalidate("The controls changed; the sweep follows when they settle…")
            self.timer.start()
        if shows(self._compare_dock):
            self.compare_throttle.request()

    def _settled(self) -> None:
        if shows(self._sweep_dock):
            self.sweep_now()

    def sweep_now(self) -> None:
        """Sweep the window's model and request now."""
        model = self._host.current_model()
        if model is None:
            return
        request = self._host.request()
        speed = SweepSpeed(*self._host.speed_inputs())
        self._sweep.set_speed(speed)
        if self._swept is None or self._swept[0] is not model:
            self._sweep.set_model(model, request)
        else:
            self._sweep.set_request(request)
        self._swept = (model, sweep_key(request), speed)
        self._sweep.set_budget(request.budget.limit)

    def _sweep_visibility(self, shown: bool) -> None:
        """A sweep dock that comes into view catches up at once."""
        model = self._host.current_model()
        if shown and model is not None and not self._is_swept(model, self._host.request()):
            self.timer.stop()
            self.sweep_now()

    def _compare_visibility(self, shown: bool) -> None:
        if shown:
            self._compare_now()

    def _compare_now(self) -> None:
        model = self._host.current_model()
        if model is not None:
            self._compare.set_first(model, self._host.request(), self._host.current_plan())


def install_whatif(host: WhatIfHost, compare_backend: Callable[[str], ModelSpec] = load_model) -> WhatIf:
    """Add the sweep and compare docks and the Catalogue, Export and View menus to the host window."""
    window = host.window()
    sweep, compare = SweepView(parent=window), CompareView(compare_backend, window)
    sweep_dock = _dock("Budget sweep", "sweepDock", sweep)
    compare_dock = _dock("Compare models", "compareDock", compare)
    host.add_docks((sweep_dock, compare_dock), DOCK_HEIGHT)
    follower = _Follower(host, sweep, compare, sweep_dock, compare_dock)
    host.planChanged.connect(follower.follow)
    sweep.budgetPicked.connect(lambda budget: host.apply_request(budget=Budget.of(budget)))
    catalogue = CatalogueMenu(host.open_path, window)
    export = ExportMenu(ExportSources(host.current_plan, host.current_model, host.ledger_chart,
                                      sweep.result, lambda: sweep.chart, host.current_speed), window)
    export.exported.connect(lambda path: host.show_status(f"Exported {safe_text(path, 200)}"))
    _add_file_entries(host, catalogue, export)
    view = QMenu("&View", window)
    host.add_menu(view)
    view.addAction(sweep_dock.toggleViewAction())
    view.addAction(compare_dock.toggleViewAction())
    return WhatIf(sweep, compare, sweep_dock, compare_dock, catalogue, export, view, follower)
