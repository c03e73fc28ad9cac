"""File ▸ Ask about a llama.cpp command…: paste a llama-server, llama-cli or llama-completion command; the answer is
for exactly that command.

Rule 1: the text is read by the core's one reader (`llama_words.reader`): a command llama.cpp would refuse is one
        line in the dialog, which stays open with the text as typed (nothing the person had is lost).
Rule 2: the command's model (`-m`) is opened when it is not the one shown, and the command is asked once it has
        loaded; without `-m` it is asked of the open model. What it did not price is shown under the llama.cpp
        options (`EngineKnobs`), from the session.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QMainWindow, QPlainTextEdit, QVBoxLayout, QWidget

from gguf_budget.core.errors import BudgetError
from gguf_budget.core.llama_words.reader import LlamaCommand, read_llama_args, split_command
from gguf_budget.gui.qt.menus.file_menu import FileMenu
from gguf_budget.gui.qt.named import named
from gguf_budget.gui.qt.theme import error_style

EXAMPLE = "llama-server -m model.gguf -c 32768 -ngl 99 -fa on -ctk q8_0 -ctv q8_0 -np 4"


class AskDialog(QDialog):
    """Rule 1: a command box, and the one line that says why a command cannot be read."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("askDialog")
        self.setWindowTitle("Ask about a llama.cpp command")
        self.text = named(QPlainTextEdit(self), "askCommandText")
        self.text.setPlaceholderText(EXAMPLE)
        self.text.setToolTip("A whole command as you would run it; lines joined with \\ are one command")
        self.error = named(QLabel(self, wordWrap=True), "askCommandError")
        self.error.setTextFormat(Qt.TextFormat.PlainText)
        self.error.setStyleSheet(error_style())
        self.error.hide()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("A llama.cpp command (llama-server, llama-cli or llama-completion):", self))
        layout.addWidget(self.text, 1)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.command: LlamaCommand | None = None
        self.resize(640, 220)

    def accept(self) -> None:
        try:
            self.command = read_llama_args(split_command(self.text.toPlainText().strip()))
        except BudgetError as e:
            self.error.setText(str(e))
            self.error.show()
            return
        super().accept()


class AskCommand:
    """The File menu's entry: a dialog, then `ask(command)` on the window (Rule 2)."""

    def __init__(self, window: QMainWindow, file_menu: FileMenu, ask: Callable[[LlamaCommand], None]):
        self._window = window
        self._ask = ask
        self.action = named(QAction("Ask about a llama.cpp &command…", window), "askCommandAction")
        self.action.setShortcut(QKeySequence("Ctrl+Shift+L"))
        self.action.setToolTip("Paste a llama-server, llama-cli or llama-completion command: the model is opened and "
                               "every setting taken from it")
        self.action.triggered.connect(self.choose)
        file_menu.menu.insertAction(file_menu.export_anchor, self.action)
        self.dialog: AskDialog | None = None

    def choose(self) -> None:
        self.dialog = AskDialog(self._window)
        self.dialog.accepted.connect(self._accepted)
        self.dialog.open()

    def _accepted(self) -> None:
        if self.dialog is not None and self.dialog.command is not None:
            self._ask(self.dialog.command)
