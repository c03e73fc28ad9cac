"""The command that runs the fit, shown read-only with a Copy button.

The text is the core's `command_text` (the shell-quoted llama-server line, then Ollama's
Modelfile and what Ollama cannot express); this widget only shows it and copies it.

Signals:
    copied(str): the command was put on the clipboard.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from gguf_budget.core.fit.command import RunCommand
from gguf_budget.core.fit.runtime_types import DEFAULT_RUNTIME, Runtime
from gguf_budget.core.views.command_view import REALISES, command_text, program_command
from gguf_budget.core.views.remote_command import runnable
from gguf_budget.gui.qt.named import named
from gguf_budget.gui.qt.text_view import read_only_view, replace_text


class CommandBox(QWidget):
    """Run this fit: the llama-server command and its Ollama equivalents, with Copy."""

    copied = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.title = named(QLabel("Run it", self), "runCommandTitle")
        self.title.setWordWrap(True)  # "Run it — what it realises" on one line widened the side column past its view
        self.text = named(read_only_view(QPlainTextEdit(self)), "runCommand")
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setMaximumHeight(96)
        self.copy = named(QPushButton("Copy", self), "copyCommand")
        self.copy.setToolTip("Copy the command for the program chosen under Run with (shell-quoted) to the clipboard")
        self.copy.clicked.connect(self._copy)
        self.copy.setEnabled(False)
        self._line = ""
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.copy)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.text)

    def show_command(self, command: RunCommand | None, runtime: Runtime = DEFAULT_RUNTIME) -> None:
        """The chosen program's command (`views.command_view` Rule 3); Copy copies it."""
        command = runnable(command)
        self._line = program_command(command, runtime).text if command is not None else ""
        self.title.setText(f"Run it — {REALISES[command.realises]}" if command is not None else "Run it")
        replace_text(self.text, command_text(command, runtime) if command is not None else "")
        self.copy.setEnabled(command is not None)

    def command_line(self) -> str:
        return self._line

    def _copy(self) -> None:
        QGuiApplication.clipboard().setText(self._line)
        self.copied.emit(self._line)
