"""The Library dock: every GGUF model on this machine, judged for it; double-click opens one.

Rule 1: the scan runs off the GUI thread (`ProgressCall`) with a progress bar and Cancel; a
        cancelled scan shows what it read, marked incomplete. The first showing of the dock scans.
Rule 2: the stores, the added folders and the judgement are the core's (`core.library`), judged
        with the window's budget and machine at the time of the scan — the CLI's `library` rows.
Rule 3: "Add folder…" remembers the folder in the library settings the CLI shares, then rescans.
Rule 4: double-click (or Enter) on a readable row asks the host to open that model.
Rule 5: the scan judges nothing (`core.library.scan` Rule 10): the table judges a row when it is first
        shown, with the settings of its scan (`table.py` Rule 5); a sort by a verdict or a filter has the
        rest judged off the GUI thread. What was judged is kept for the window's life: a rescan on the same
        settings judges none of it again.

Signals:
    openRequested(str): the path of the model to open.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import Callable, TypeVar

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout, QHeaderView, QLabel, QLineEdit, QProgressBar, QPushButton, QTableView, QVBoxLayout,
    QWidget,
)

from gguf_budget.core.library import config
from gguf_budget.core.library.assess import Assessment, LibrarySettings, assess, assessment_key
from gguf_budget.core.library.index import FileKey
from gguf_budget.core.library.scan import LibraryEntry, Scan, judged, scan
from gguf_budget.core.library.stores import store_roots
from gguf_budget.core.regular_file import os_words
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.units import counted
from gguf_budget.gui.qt.file_dialogs import Purpose, existing_folder
from gguf_budget.gui.qt.library.table import Judge, LibraryTable, TableRows, table_rows
from gguf_budget.gui.qt.workers.background import BackgroundCall
from gguf_budget.gui.qt.workers.progress_call import ProgressCall, Work

Settings = Callable[[], "LibrarySettings | None"]
SIZED_ROWS = 0
"""Columns fit the widest of the rows shown, not of all 50,000: each measured row is Python calls, and a row
measured is a row judged (Rule 5)."""
W = TypeVar("W", bound=QWidget)


def _named(widget: W, name: str) -> W:
    widget.setObjectName(name)
    return widget


def scan_work(settings: LibrarySettings, home: Path, config_file: Path | None) -> Work:
    """The scan as a `ProgressCall` work: the stores of `home`, the added folders, judged by `settings`;
    the table's rows are laid out here too, off the GUI thread (`table.py` Rule 4)."""

    def work(progress: Callable[[int, int | None], None],
             cancelled: Callable[[], bool]) -> tuple[Scan[Assessment], TableRows]:
        roots = store_roots(home, os.environ, config.read_folders(config_file))
        result = scan(roots, partial(assess, settings=settings), progress=progress, cancelled=cancelled,
                      assess_key=assessment_key(settings), judge=False)
        return result, table_rows(result.entries)

    return work


def judge_with(settings: LibrarySettings, known: dict[tuple[str, FileKey], Assessment]) -> Judge:
    """Rule 5: one row's verdict on the settings of its scan, kept in `known` for the next scan on them."""
    return partial(judged, assess=partial(assess, settings=settings), known=known)


def judge_all(judge: Judge, entries: tuple[LibraryEntry[Assessment], ...]) -> tuple[Judge, TableRows]:
    """Rule 5: every row judged, laid out again (off the GUI thread); with the judge, to drop a stale answer."""
    return judge, table_rows([judge(e) if e.unjudged() else e for e in entries])


class LibraryView(QWidget):
    openRequested = Signal(str)

    def __init__(self, settings: Settings, home: Path | None = None, config_file: Path | None = None,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self._settings, self._home, self._config_file = settings, home or Path.home(), config_file
        self.table = LibraryTable()
        self._judge: Judge | None = None
        self._judged: dict[str, dict[tuple[str, FileKey], Assessment]] = {}
        """Rule 5: the verdicts judged here, by the settings' key, then path and file key: a rescan judges none again."""
        self._judge_rest = BackgroundCall(judge_all, parent=self)
        self._judge_rest.succeeded.connect(self._all_judged)
        self._judge_rest.failed.connect(lambda _: self.table.take_back())
        self.table.verdictsWanted.connect(self._judge_the_rest)
        self.view = _named(QTableView(), "libraryTable")
        self.view.setModel(self.table)
        self.view.setSortingEnabled(True)
        self.view.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.view.horizontalHeader().setResizeContentsPrecision(SIZED_ROWS)  # table.py Rule 4
        self.view.horizontalHeader().setStretchLastSection(True)
        self.view.doubleClicked.connect(self._open)
        self.view.activated.connect(self._open)
        self.filter = _named(QLineEdit(), "libraryFilter")
        self.filter.setPlaceholderText("Filter models…")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self.table.set_filter)
        self.scan_button = _named(QPushButton("Scan"), "libraryScan")
        self.scan_button.clicked.connect(self.rescan)
        self.add_button = _named(QPushButton("Add folder…"), "libraryAddFolder")
        self.add_button.clicked.connect(self._choose_folder)
        self.cancel_button = _named(QPushButton("Cancel"), "libraryCancel")
        self.cancel_button.setEnabled(False)
        self.progress = _named(QProgressBar(), "libraryProgress")
        self.progress.setVisible(False)
        self.progress.setMaximumWidth(200)
        self.status = _named(QLabel(), "libraryStatus")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.worker = ProgressCall("scanning the model library", self)
        self.worker.progress.connect(self._progressed)
        self.worker.succeeded.connect(self._scanned)
        self.worker.failed.connect(self._failed)
        self.worker.cancelled.connect(lambda: self._idle("Scan cancelled"))
        self.cancel_button.clicked.connect(self.worker.cancel)
        bar = QHBoxLayout()
        for widget in (self.filter, self.scan_button, self.add_button, self.progress, self.cancel_button):
            bar.addWidget(widget)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.view)
        layout.addWidget(self.status)
        self.scanned_once = False

    def rescan(self) -> None:
        settings = self._settings()
        if settings is None:
            self.status.setText("The machine is still being probed; scan again in a moment.")
            return
        self.scanned_once = True
        self.scan_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.progress.setRange(0, 0)
        self.progress.setVisible(True)
        self.status.setText("Scanning…")
        self._judge = judge_with(settings, self._judged.setdefault(assessment_key(settings), {}))
        self.worker.start(scan_work(settings, self._home, self._config_file))

    def _all_judged(self, answer: tuple[Judge, TableRows]) -> None:
        judge, rows = answer
        if judge is self._judge and not self.worker.busy:  # not a scan since
            self.table.set_rows(rows, judge)

    def _judge_the_rest(self) -> None:
        """Rule 5."""
        if self._judge is not None and not self._judge_rest.busy:
            self._judge_rest.start(self._judge, self.table.hand_over())

    def add_folder(self, folder: Path) -> None:
        """Remember `folder` and scan; a folder list that cannot be written (its folder is a file, or read-only)
        is one line in the status, not an internal error."""
        try:
            config.add_folder(folder, self._config_file)
        except OSError as e:
            self.status.setText(f"Cannot add {safe_text(folder, 200)}: {os_words(e)}")
            return
        self.rescan()

    def _choose_folder(self) -> None:
        chosen = existing_folder(self, "Add a folder to the library", Purpose.LIBRARY)
        if chosen:
            self.add_folder(Path(chosen))

    def _progressed(self, done: int, total: int) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)

    def _scanned(self, answer: tuple[Scan[Assessment], TableRows]) -> None:
        result, rows = answer
        self.table.set_rows(rows, self._judge)
        unreadable = sum(1 for e in result.entries if e.error)
        folders = len(result.roots)
        self._idle(f"{counted(len(result.entries), 'model')} in {counted(folders, 'folder')}"
                   + (f", {unreadable} unreadable" if unreadable else "")
                   + ("" if result.complete else " (scan cancelled: incomplete)"))

    def _failed(self, message: str) -> None:
        self._idle(f"Scan failed: {message}")

    def _idle(self, message: str) -> None:
        self.scan_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.progress.setVisible(False)
        self.status.setText(message)

    def _open(self, index: QModelIndex) -> None:
        entry = self.table.entry(index.row())
        if entry.error is None:
            self.openRequested.emit(entry.path)
        else:
            self.status.setText(f"Cannot open {safe_text(entry.name)}: {safe_text(entry.error)}")
