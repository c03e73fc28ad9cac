"""File ▸ Open / Open Recent / Quit, and which dropped or chosen paths are GGUF files."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from PySide6.QtCore import QMimeData
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

from gguf_budget.core.views.file_label import file_label
from gguf_budget.gui.qt.file_dialogs import Purpose, open_file
from gguf_budget.gui.qt.plain_text import plain_tooltip
from gguf_budget.gui.qt.named import named

GGUF_FILTER = "GGUF models (*.gguf);;All files (*)"


def gguf_paths(mime: QMimeData) -> list[str]:
    """Local .gguf files among dropped URLs (any shard of a split model will do)."""
    if not mime.hasUrls():
        return []
    paths = (url.toLocalFile() for url in mime.urls() if url.isLocalFile())
    return [p for p in paths if p.lower().endswith(".gguf")]


class FileMenu:
    """The File menu of a main window; `open_path` is called with the chosen file.

    `export_anchor` is the separator above Quit: add-ons insert their File entries before it.
    """

    def __init__(self, window: QMainWindow, open_path: Callable[[str], None]):
        self._window = window
        self._open_path = open_path
        self.menu = menu = window.menuBar().addMenu("&File")
        self.open_action = QAction("&Open…", window, shortcut=QKeySequence(QKeySequence.StandardKey.Open))
        self.open_action.triggered.connect(self.choose)
        menu.addAction(self.open_action)
        self.recent_menu = named(QMenu("Open &Recent", window), "recentMenu")
        menu.addMenu(self.recent_menu)
        self.export_anchor = menu.addSeparator()
        self.quit_action = QAction("&Quit", window, shortcut=QKeySequence("Ctrl+Q"))
        self.quit_action.triggered.connect(window.close)
        menu.addAction(self.quit_action)

    def choose(self) -> None:
        path = open_file(self._window, "Open a GGUF model", Purpose.MODEL, GGUF_FILTER)
        if path:
            self._open_path(path)

    def set_recent(self, paths: Iterable[str]) -> None:
        self.recent_menu.clear()
        for path in paths:
            action = self.recent_menu.addAction(file_label(path, str(Path.home())))
            action.setToolTip(plain_tooltip(path))
            action.setData(path)
            action.triggered.connect(lambda _=False, p=path: self._open_path(p))
        self.recent_menu.setEnabled(not self.recent_menu.isEmpty())
