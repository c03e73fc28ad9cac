"""What a person sees of an internal error: one dialog that points at the log, and nothing reset.

Rule 1: an exception nobody caught (a bug in a Qt slot or override, or on a worker thread) reaches
        `ErrorReport.hook`, the window's `sys.excepthook`: its traceback goes to the log (CRITICAL),
        then a non-modal dialog says "Internal error — details in the log", the error's one line and
        the log file's path, with "Copy details" (the traceback, to the clipboard). An expected
        failure (`core.errors.BudgetError`, an `OSError`) is caught where it happens and never gets here.
Rule 2: one dialog per window: further errors update it (the latest one line and traceback, and how
        many there were), so a bug that fires on every repaint gives one dialog that counts, not a pile.
Rule 3: the report touches no state: the model, the plan and the settings stay as they were before
        the slot that failed; only that slot's unfinished work is lost.
Rule 4: the hook may run on any thread; the dialog is shown on the GUI thread (a queued signal).
        Ctrl-C and `SystemExit` are not internal errors: they go to Python's own hook.
Rule 5: the report never fails loudly itself: an error while showing the dialog is logged only (an
        exception there would come back to the hook and loop).
"""

from __future__ import annotations

import logging
import sys
import traceback
from pathlib import Path
from types import TracebackType

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPushButton, QVBoxLayout, QWidget

from gguf_budget.core.errors import one_line
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.version import __version__

from gguf_budget.gui.qt.named import named

HEADING = "Internal error — details in the log"
log = logging.getLogger(__name__)


def summary_line(kind: type[BaseException], error: BaseException) -> str:
    """The error's type and its message's first line ("KeyError: 'ctx'"); the type alone when it says nothing."""
    line = one_line(error)
    return kind.__name__ if line == kind.__name__ else f"{kind.__name__}: {line}"


def log_line(log_path: Path) -> str:
    """Where the details are, or why there are none on disk (the log folder could not be written)."""
    if log_path.is_file():
        return f"Log: {log_path}"
    return f"No log file at {log_path} (its folder could not be written); Copy details has the traceback."


class InternalErrorDialog(QDialog):
    """Rules 1-2: the one dialog (objectName `internalErrorDialog`); Close dismisses it until the next error."""

    def __init__(self, log_path: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("internalErrorDialog")
        self.setWindowTitle("Internal error")
        self.setModal(False)
        self._log_path = log_path
        self._details = ""
        self.count = 0
        self.heading = named(QLabel(HEADING, self), "internalErrorHeading")
        self.heading.setStyleSheet("font-weight: bold")
        self.message = named(QLabel(self, wordWrap=True), "internalErrorMessage")
        self.tally = named(QLabel(self), "internalErrorCount")
        self.where = named(QLabel(self, wordWrap=True), "internalErrorLog")
        for label in (self.message, self.tally, self.where):
            label.setTextFormat(Qt.TextFormat.PlainText)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.copy = named(QPushButton("Copy details", self), "copyErrorDetails")
        buttons.addButton(self.copy, QDialogButtonBox.ButtonRole.ActionRole)
        self.copy.clicked.connect(self.copy_details)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        for widget in (self.heading, self.message, self.tally, self.where, buttons):
            layout.addWidget(widget)

    def add(self, summary: str, details: str) -> None:
        """Rule 2: one more error; the dialog shows the latest and the count, and comes up (not modal)."""
        self.count += 1
        self._details = details
        self.message.setText(safe_text(summary, 300))
        self.tally.setText(f"{self.count:,} internal errors so far; the latest is shown.")
        self.tally.setVisible(self.count > 1)
        self.where.setText(log_line(self._log_path))
        self.show()
        self.raise_()

    def details(self) -> str:
        """What Copy details puts on the clipboard: the version and the latest traceback."""
        return f"GGUF Budget Explorer {__version__}\n{self._details}"

    def copy_details(self) -> None:
        QGuiApplication.clipboard().setText(self.details())


class ErrorReport(QObject):
    """The window's internal-error report: `hook` is what the launcher installs as `sys.excepthook`."""

    _arrived = Signal(str, str)

    def __init__(self, window: QWidget, log_path: Path) -> None:
        super().__init__(window)
        self.dialog = InternalErrorDialog(log_path, window)
        self._arrived.connect(self._show)

    def hook(self, kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
        """Rules 1 and 4: log the traceback, then bring up the dialog on the GUI thread."""
        if not issubclass(kind, Exception):
            sys.__excepthook__(kind, error, trace)
            return
        log.critical("internal error", exc_info=(kind, error, trace))
        details = "".join(traceback.format_exception(kind, error, trace))
        try:
            self._arrived.emit(summary_line(kind, error), details)
        except RuntimeError:  # the window is gone (the app is closing): the log has it
            log.info("no window left to show the internal error")

    def _show(self, summary: str, details: str) -> None:
        try:
            self.dialog.add(summary, details)
        except Exception:  # noqa: BLE001 - Rule 5: a failure here must not come back to the hook
            log.exception("the internal-error dialog could not be shown")
