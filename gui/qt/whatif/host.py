"""What the what-if add-on may use of the window it extends: a typed protocol, not the window class.

Rule 1: the add-on never imports the window. It is given a host (the composition root,
        `gui.qt.addons`, passes the `MainWindow`) and uses only what this protocol names, so the
        window can change its widgets and menus without breaking the add-on, and the import
        graph has no cycle between them.
Rule 2: the protocol has two kinds of members: the explorer session the window draws
        (`session`: the add-on follows its published views, reads the model, request, plan and
        bandwidths there and writes a picked budget into it), and named hooks (`open_path`,
        `ledger_chart`, `show_status`, `add_docks`, `view_menu`, `file_menu` with its
        `export_anchor`), so nothing depends on a menu's position or the window's getters.
"""

from __future__ import annotations

from typing import Protocol, Sequence

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QMenu, QWidget

from gguf_budget.core.explorer.session import Session

from gguf_budget.gui.qt.plan.ledger_chart import LedgerChart


class FileMenuHook(Protocol):
    """The host's File menu, and the entry the add-on's own File entries go above (the Quit section)."""

    @property
    def menu(self) -> QMenu: ...

    @property
    def export_anchor(self) -> QAction: ...


class WhatIfHost(Protocol):
    """The window as the what-if add-on sees it."""

    @property
    def file_menu(self) -> FileMenuHook: ...

    def window(self) -> QWidget:
        """The top-level window: parent of the add-on's menus and dialogs."""
        ...

    @property
    def session(self) -> Session:
        """What the window draws; the add-on reads it and writes into it, as the window does."""
        ...

    @property
    def view_menu(self) -> QMenu:
        """The View menu, where the add-on's dock switches go."""
        ...

    def open_path(self, path: str) -> None: ...

    def ledger_chart(self) -> LedgerChart: ...

    def show_status(self, message: str) -> None: ...

    def add_docks(self, docks: Sequence[QDockWidget], height: int) -> None:
        """Dock these along the bottom, tabbed together, the first in front, `height` pixels tall."""
        ...

