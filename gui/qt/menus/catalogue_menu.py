"""File ▸ Catalogue: open a bundled skeleton of a well-known model, no download needed.

Rule 1: one action per `CATALOGUE` entry, in catalogue order: its title, quantization and
        kind, marked "skeleton" so nobody mistakes it for weights; the tooltip gives the full
        label and the published file it stands for.
Rule 2: choosing an entry calls `open_path` with the shipped file (`catalogue_path`), so it
        loads like any other model: off the GUI thread, with the usual success and failure.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtWidgets import QMenu, QWidget

from gguf_budget.core.model.catalogue import CATALOGUE, catalogue_path
from gguf_budget.core.views.catalogue_view import entry_label, entry_tooltip


class CatalogueMenu(QMenu):
    """The Catalogue submenu; each action's data is its entry's name."""

    def __init__(self, open_path: Callable[[str], None], parent: QWidget | None = None):
        super().__init__("&Catalogue", parent)
        self.setObjectName("catalogueMenu")
        self.setToolTipsVisible(True)
        for entry in CATALOGUE:
            action = self.addAction(entry_label(entry))
            action.setData(entry.name)
            action.setToolTip(entry_tooltip(entry))
            action.triggered.connect(lambda _=False, e=entry: open_path(str(catalogue_path(e))))
