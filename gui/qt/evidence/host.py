"""What the runtime-evidence add-on may use of the window it extends: a typed protocol, not the window class.

Rule 1: as for the what-if add-on (`gui.qt.whatif.host`), the add-on never imports the window;
        the composition root (`gui.qt.addons.install_addons`) passes the `MainWindow` as the host.
Rule 2: members: the explorer session the window draws (`session`: the model, plan and full load on
        screen; its `subscribe_models` says when a model opened), where the add-on keeps its preference
        (`settings_store`), where its File entries go (`file_menu`), and one drawing hook,
        `show_evidence`, for the Measured column, the measured row and the runtime-evidence claim.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QWidget

from gguf_budget.core.explorer.session import Session
from gguf_budget.core.views.evidence_view import MeasuredView
from gguf_budget.core.explorer.messages import MessageKind

from gguf_budget.gui.qt.whatif.host import FileMenuHook


class EvidenceHost(Protocol):
    """The window as the evidence add-on sees it (a new model, like every change, comes from its session)."""

    @property
    def file_menu(self) -> FileMenuHook: ...

    def window(self) -> QWidget:
        """The top-level window: parent of the add-on's dialogs, closed when the app ends."""
        ...

    @property
    def session(self) -> Session:
        """What the window draws: the model, plan and full load a measurement runs with."""
        ...

    def show_status(self, message: str, kind: MessageKind = ...) -> None: ...

    def settings_store(self) -> QSettings:
        """The window's settings, where the add-on keeps the llama.cpp location."""
        ...

    def show_evidence(self, view: MeasuredView | None) -> None:
        """Draw what was measured (None: nothing for this model)."""
        ...
