"""What the plan area shows before any model is open: where a model comes from, one click away.

Rule 1: it offers the window's own entries — File ▸ Open…, File ▸ Catalogue (a published model's
        header-only skeleton) and File ▸ Library… (the models on this machine) — as buttons that
        trigger the same actions; an entry an add-on did not install is not offered.
Rule 2: it draws no chart: an empty byte axis ("0.2 B … 0.8 B") says nothing.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMenu, QToolButton, QVBoxLayout, QWidget

from gguf_budget.gui.qt.named import named

INVITATION = ("No model is open. Open a GGUF file (File ▸ Open…, Ctrl+O, or drop one on the window), "
              "pick a published model's skeleton from the catalogue, or one already on this machine from "
              "the library. Only the header is read: nothing is downloaded or loaded.")


class EmptyState(QWidget):
    """The invitation and one button per way in (Rule 1)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("emptyState")
        text = named(QLabel(INVITATION, self, wordWrap=True), "emptyStateText")
        text.setTextFormat(Qt.TextFormat.PlainText)
        text.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._buttons = QHBoxLayout()
        self._buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addWidget(text)
        layout.addLayout(self._buttons)
        layout.addStretch(1)

    def offer(self, entries: list[tuple[str, QAction | QMenu]]) -> None:
        """One button per (objectName, action or menu), in order; a menu drops down on click."""
        for name, entry in entries:
            button = named(QToolButton(self), name)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            if isinstance(entry, QMenu):
                button.setText(entry.title().replace("&", ""))
                button.setMenu(entry)
                button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
            else:
                button.setDefaultAction(entry)
            self._buttons.addWidget(button)
        self._buttons.addStretch(1)

    def buttons(self) -> list[QToolButton]:
        return self.findChildren(QToolButton)
