"""What the Quants add-on may use of the window it extends: a typed protocol, not the window class.

Rule 1: as for the what-if add-on (`whatif.host`): the composition root passes the window as a
        `QuantsHost`; the add-on uses only what is named here and never imports the window.
Rule 2: a signal (a model on screen), the explorer session the window draws (`session`: what
        the ladder is judged against; its published views say when to judge again), one setter
        (`show_model`: plan a priced quantization) and the view hook (`add_views`: a full-size view, its own window).
"""

from __future__ import annotations

from typing import Protocol, Sequence

from PySide6.QtWidgets import QDockWidget, QWidget

from gguf_budget.core import ModelSpec
from gguf_budget.core.explorer.session import Session


class QuantsHost(Protocol):
    """The window as the Quants add-on sees it (a new model, like every change, comes from its session)."""

    def window(self) -> QWidget:
        """The top-level window: parent of the add-on's widgets."""
        ...

    @property
    def session(self) -> Session:
        """What the window draws: the model, machine, request and bandwidths the ladder is judged with."""
        ...

    def show_model(self, spec: ModelSpec) -> None: ...

    def add_views(self, docks: Sequence[QDockWidget]) -> None:
        """Show these as full-size views, each its own window."""
        ...
