"""The window's message area: the last thing it said, until the next, and a short history (issue 36, item 5).

It draws the core's `MessageLog` (`core.explorer.messages`): the newest message as one elided line (its tooltip
holds it whole), problems in the error colour, and a History button whose menu lists the last messages with
their times. It lives in the status bar as a permanent widget, so nothing hides it after a few seconds.

Signals:
    said(str): a message was added (tests and add-ons may follow it).
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QMenu, QToolButton, QWidget

from gguf_budget.core.explorer.messages import MessageKind, MessageLog
from gguf_budget.gui.qt.elided_label import ElidedLabel
from gguf_budget.gui.qt.named import named
from gguf_budget.gui.qt.theme import error_style


class MessageArea(QWidget):
    """The latest message and the history button."""

    said = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("messageArea")
        self.log = MessageLog()
        self.line = named(ElidedLabel(self, min_chars=20), "messageLine")
        self.history = named(QToolButton(self), "messageHistory")
        self.history.setText("History")
        self.history.setToolTip("The last messages, newest first")
        self.history.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.menu = named(QMenu(self.history), "messageHistoryMenu")
        self.history.setMenu(self.menu)
        self.history.setEnabled(False)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.history)
        row.addWidget(self.line, 1)

    def say(self, text: str, kind: MessageKind = MessageKind.INFO) -> None:
        """Show `text` until the next message, and list it in the history."""
        self.log = self.log.said(text, kind)
        latest = self.log.latest
        assert latest is not None
        self.line.setStyleSheet(error_style() if kind is MessageKind.PROBLEM else "")
        self.line.setText(latest.text)
        self.menu.clear()
        for message in self.log.messages:
            self.menu.addAction(message.stamped())
        self.history.setEnabled(True)
        self.said.emit(latest.text)

    def current(self) -> str:
        """The message on screen ("" before the first)."""
        return self.line.text()
