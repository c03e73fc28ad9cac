"""What-if analysis in the explorer window: the sweep and compare docks, File ▸ Catalogue and ▸ Export.

Rule 1: `install_whatif(window)` adds everything to a built MainWindow and talks to it only
        through its public API: `planChanged` (after every plan, or refusal), `current_model`,
        `current_plan`, `request`, `apply_request` and `open_path`.
Rule 2: after every plan the sweep follows the window: a new model is swept from scratch, a
        changed request (ctx, knobs) sweeps again, a changed budget only moves the mark. The
        compare view replans its second model against the new first plan.
Rule 3: a budget picked on the sweep chart becomes the window's budget (`apply_request`), as
        if typed, so the slider, the ledger and the banner follow it.
Rule 4: the two docks share the bottom dock area as tabs; View ▸ shows or hides them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QMenu, QWidget

from gguf_budget.core import ModelSpec, load_model
from gguf_budget.core.safe_text import safe_text

from .catalogue_menu import CatalogueMenu
from .compare_view import CompareView
from .export_menu import ExportMenu, ExportSources
from .sweep_view import SweepView

if TYPE_CHECKING:
    from .main_window import MainWindow

DOCK_HEIGHT = 330


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


def _dock(window: MainWindow, title: str, name: str, child: QWidget) -> QDockWidget:
    dock = QDockWidget(title, window, objectName=name)
    dock.setWidget(child)
    dock.setAllowedAreas(Qt.DockWidgetArea.BottomDockWidgetArea | Qt.DockWidgetArea.TopDockWidgetArea)
    window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
    return dock


def _file_menu(window: MainWindow) -> QMenu:
    """The window's File menu (the first menu of its menu bar)."""
    return window.menuBar().actions()[0].menu()


class _Follower:
    """Rule 2: keeps the sweep and compare views in step with the window's plans."""

    def __init__(self, window: MainWindow, sweep: SweepView, compare: CompareView):
        self._window, self._sweep, self._compare = window, sweep, compare
        self._model: ModelSpec | None = None

    def follow(self) -> None:
        window = self._window
        model = window.current_model()
        if model is None:
            return
        request, plan = window.request(), window.current_plan()
        if model is not self._model:
            self._model = model
            self._sweep.set_model(model, request)
        else:
            self._sweep.set_request(request)
        self._sweep.set_budget(None if request.unlimited else request.budget_bytes)
        self._compare.set_first(model, request, plan)


def install_whatif(window: MainWindow, compare_backend: Callable[[str], ModelSpec] = load_model) -> WhatIf:
    """Add the sweep and compare docks and the Catalogue, Export and View menus to `window`."""
    sweep, compare = SweepView(parent=window), CompareView(compare_backend, window)
    sweep_dock = _dock(window, "Budget sweep", "sweepDock", sweep)
    compare_dock = _dock(window, "Compare models", "compareDock", compare)
    window.tabifyDockWidget(sweep_dock, compare_dock)
    sweep_dock.raise_()
    window.resizeDocks([sweep_dock], [DOCK_HEIGHT], Qt.Orientation.Vertical)
    follower = _Follower(window, sweep, compare)
    window.planChanged.connect(follower.follow)
    sweep.budgetPicked.connect(lambda budget: window.apply_request(budget_bytes=budget))
    catalogue = CatalogueMenu(window.open_path, window)
    export = ExportMenu(ExportSources(window.current_plan, window.current_model, lambda: window.body.plan.chart,
                                      sweep.result, lambda: sweep.chart), window)
    export.exported.connect(lambda path: window.statusBar().showMessage(f"Exported {safe_text(path, 200)}", 5000))
    file_menu = _file_menu(window)
    quit_separator = file_menu.actions()[-2]
    file_menu.insertMenu(quit_separator, catalogue)
    file_menu.insertSeparator(quit_separator)
    file_menu.insertMenu(quit_separator, export)
    view = QMenu("&View", window)
    bar = window.menuBar()
    if len(bar.actions()) > 1:
        bar.insertMenu(bar.actions()[1], view)  # right after File
    else:
        bar.addMenu(view)
    view.addAction(sweep_dock.toggleViewAction())
    view.addAction(compare_dock.toggleViewAction())
    return WhatIf(sweep, compare, sweep_dock, compare_dock, catalogue, export, view, follower)
