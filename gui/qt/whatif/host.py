"""What the what-if add-on may use of the window it extends: a typed protocol, not the window class.

Rule 1: the add-on never imports the window. It is given a host (the composition root,
        `gui.qt.app`, passes the `MainWindow`) and uses only what this protocol names, so the
        window can change its widgets and menus without breaking the add-on, and the import
        graph has no cycle between them.
Rule 2: the protocol has three kinds of members: a signal (`planChanged`), getters and setters
        of the plan on screen (`current_model`, `current_plan`, `current_speed`, `speed_inputs`, `request`, `apply_request`,
        `open_path`, `ledger_chart`, `show_status`), and named hooks where the add-on's docks
        and menus go (`add_docks`, `add_menu`, `file_menu` with its `export_anchor`), so
        nothing depends on a menu's position.
"""

from __future__ import annotations

from typing import Protocol, Sequence

import pyqtgraph as pg
from PySide6.QtCore import SignalInstance
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QMenu, QWidget

from gguf_budget.core import BudgetRequest, MemoryPlan, ModelSpec
from gguf_budget.core.machine.bandwidth import Bandwidths
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.speed.estimate import SpeedEstimate


class FileMenuHook(Protocol):
    """The host's File menu, and the entry the add-on's own File entries go above (the Quit section)."""

    @property
    def menu(self) -> QMenu: ...

    @property
    def export_anchor(self) -> QAction: ...


class WhatIfHost(Protocol):
    """The window as the what-if add-on sees it.

    Signals:
        planChanged(): a replan finished and is on screen (`current_plan()`, None when refused).
    """

    @property
    def planChanged(self) -> SignalInstance: ...

    @property
    def file_menu(self) -> FileMenuHook: ...

    def window(self) -> QWidget:
        """The top-level window: parent of the add-on's menus and dialogs."""
        ...

    def current_model(self) -> ModelSpec | None: ...

    def current_plan(self) -> MemoryPlan | None: ...

    def current_speed(self) -> SpeedEstimate | None:
        """The decode estimate of the plan on screen."""
        ...

    def speed_inputs(self) -> tuple[Bandwidths, int | None]:
        """What a sweep's decode estimates use: the bandwidths and the judged machine's available RAM."""
        ...

    def request(self) -> BudgetRequest: ...

    def apply_request(self, budget: Budget | None = None, ctx: int | None = None) -> None: ...

    def open_path(self, path: str) -> None: ...

    def ledger_chart(self) -> pg.GraphicsLayoutWidget: ...

    def show_status(self, message: str) -> None: ...

    def add_docks(self, docks: Sequence[QDockWidget], height: int) -> None:
        """Dock these along the bottom, tabbed together, the first in front, `height` pixels tall."""
        ...

    def add_menu(self, menu: QMenu) -> None:
        """Put `menu` in the menu bar, after File."""
        ...
