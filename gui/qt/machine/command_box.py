"""The command that runs the fit, for the program chosen, shown read-only with a Copy button.

The texts are the core's (`views.command_view.program_text`): llama-server, llama-cli, llama-completion, a
llama-cpp-python `Llama(...)` call or Ollama's Modelfile, each with its notes; this widget only shows the one
chosen and copies it. The choice follows Run with's program when that changes, and stays where the person put it
otherwise. A priced quantization with no command shows why, and Copy is disabled.

Rule 1: a command's text for a program is found once (the last KEPT_TEXTS kept, each with its command so that the
        command's id is not reused): a drag back over ctxs met before hands the box the commands it had.

Signals:
    copied(str): the command was put on the clipboard.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from gguf_budget.core.fit.command import RunCommand
from gguf_budget.core.fit.runtime_types import DEFAULT_RUNTIME, Runtime
from gguf_budget.core.views.command_view import PROGRAMS, REALISES, ProgramText, program_text
from gguf_budget.gui.qt.named import named
from gguf_budget.gui.qt.text_view import read_only_view, replace_text

KEPT_TEXTS = 64


class CommandBox(QWidget):
    """Run this fit: the command for the program chosen, with Copy."""

    copied = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.title = named(QLabel("Run it", self), "runCommandTitle")
        self.title.setWordWrap(True)  # "Run it — what it realises" on one line widened the side column past its view
        self.program = named(QComboBox(self), "commandProgramCombo")
        self.program.addItems(list(PROGRAMS))
        self.program.setToolTip("The program to show the command for (it follows the program under Run with)")
        self.program.currentIndexChanged.connect(lambda _: self._draw())
        self.text = named(read_only_view(QPlainTextEdit(self)), "runCommand")
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setMaximumHeight(96)
        self.copy = named(QPushButton("Copy", self), "copyCommand")
        self.copy.setToolTip("Copy the command for the program chosen here (shell-quoted) to the clipboard")
        self.copy.clicked.connect(self._copy)
        self.copy.setEnabled(False)
        self._line = ""
        self._command: RunCommand | None = None
        self._runtime: Runtime | None = None
        self._texts = dict[tuple[int, str], tuple[RunCommand, ProgramText]]()
        top = QHBoxLayout()
        top.addWidget(self.program, 1)
        top.addWidget(self.copy)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addLayout(top)
        layout.addWidget(self.text)

    def show_command(self, command: RunCommand | None, runtime: Runtime = DEFAULT_RUNTIME) -> None:
        """The command for the program chosen (`views.command_view` Rules 3–5); Copy copies it."""
        self._command = command
        if runtime is not self._runtime:
            self._runtime = runtime
            self.program.setCurrentText(runtime.value)  # draws, when the choice moved
        self._draw()

    def _draw(self) -> None:
        command = self._command
        shown = None if command is None else self._text(command, self.program.currentText())
        self._line = "" if shown is None else shown.text
        self.title.setText(f"Run it — {REALISES[command.realises]}" if command is not None else "Run it")
        notes = "" if shown is None else "".join(f"\n# {note}" for note in shown.notes)
        replace_text(self.text, (self._line + notes).strip("\n"))
        self.copy.setEnabled(bool(self._line))

    def _text(self, command: RunCommand, program: str) -> ProgramText:
        """Rule 1: the core's text for the command and program, found once."""
        kept = self._texts.get((id(command), program))
        if kept is None or kept[0] is not command:
            if len(self._texts) >= KEPT_TEXTS:
                self._texts.clear()
            kept = self._texts[(id(command), program)] = (command, program_text(command, program))
        return kept[1]

    def command_line(self) -> str:
        return self._line

    def _copy(self) -> None:
        QGuiApplication.clipboard().setText(self._line)
        self.copied.emit(self._line)
