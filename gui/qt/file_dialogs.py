"""File dialogs that open where you last were: one remembered folder per purpose, kept with the window's settings.

Rule 1: a dialog starts in the folder last chosen for its purpose (models, logs, exports, library
        folders) while that still is a folder; else in `fallback` (say, the open model's folder)
        when given and a folder; else in the home folder — never the process's current directory.
Rule 2: a chosen file remembers its folder for that purpose; a chosen folder remembers itself.
Rule 3: the folders live in the settings store of the window the dialog belongs to (found up the
        parent chain, so a floating dock finds it too; injected for tests and `--screenshot`); a
        stored value that is not a short string naming an existing folder is ignored. With no
        store (a widget outside a window) nothing is remembered.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QObject, QSettings
from PySide6.QtWidgets import QFileDialog, QWidget

from gguf_budget.core.vocab import TextEnum

MAX_FOLDER_CHARS = 4096
_GROUP = "dialogs"


class Purpose(TextEnum):
    """What a dialog picks; each purpose remembers its own folder."""

    MODEL = "model"
    LOG = "log"
    EXPORT = "export"
    LIBRARY = "library"


def _store(widget: QWidget | None) -> QSettings | None:
    """Rule 3: the settings store of the first ancestor that has one."""
    node: QObject | None = widget
    while node is not None:
        store = getattr(node, "settings_store", None)
        if callable(store):
            found = store()
            if isinstance(found, QSettings):
                return found
        node = node.parent()
    return None


def _folder(value: object) -> str | None:
    if isinstance(value, str) and 0 < len(value) <= MAX_FOLDER_CHARS and "\0" not in value and os.path.isdir(value):
        return value
    return None


def start_folder(parent: QWidget | None, purpose: Purpose, fallback: str | None = None) -> str:
    """Rule 1."""
    store = _store(parent)
    remembered = _folder(store.value(f"{_GROUP}/{purpose.value}")) if store is not None else None
    return remembered or _folder(fallback) or str(Path.home())


def remember(parent: QWidget | None, purpose: Purpose, chosen: str, *, is_folder: bool = False) -> None:
    """Rule 2."""
    store = _store(parent)
    folder = chosen if is_folder else str(Path(chosen).parent)
    if store is not None and _folder(folder):
        store.setValue(f"{_GROUP}/{purpose.value}", folder)


def open_file(parent: QWidget | None, title: str, purpose: Purpose, name_filter: str = "",
              fallback: str | None = None) -> str:
    """An existing file chosen by the person ('' when cancelled), starting where `purpose` last was."""
    path, _ = QFileDialog.getOpenFileName(parent, title, start_folder(parent, purpose, fallback), name_filter)
    if path:
        remember(parent, purpose, path)
    return path


def save_file(parent: QWidget | None, title: str, purpose: Purpose, name: str, name_filter: str = "") -> str:
    """A path to write ('' when cancelled): `name` suggested in the folder `purpose` last used."""
    path, _ = QFileDialog.getSaveFileName(parent, title, str(Path(start_folder(parent, purpose)) / name), name_filter)
    if path:
        remember(parent, purpose, path)
    return path


def existing_folder(parent: QWidget | None, title: str, purpose: Purpose) -> str:
    """A folder chosen by the person ('' when cancelled), starting where `purpose` last was."""
    folder = QFileDialog.getExistingDirectory(parent, title, start_folder(parent, purpose))
    if folder:
        remember(parent, purpose, folder, is_folder=True)
    return folder
