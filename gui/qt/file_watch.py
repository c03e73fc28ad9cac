"""The window notices when the open model's file is deleted or replaced, and offers File ▸ Reload.

Rule 1: when a model is shown, the identities of its files are taken (`core.gguf.file_identity`);
        a QFileSystemWatcher watches the files and their folders (a file saved by rename is a new
        file in the folder), and the files are checked again whenever the app becomes active —
        a change the watcher cannot see (a network drive) is caught on the next focus.
Rule 2: a change is said in the window's load-error line (`change_text`); the plan on screen
        stays — it is of the file as it was read. Said once per change, not on every event; a
        file back as it was read (moved away and back) takes the line away again.
Rule 3: File ▸ Reload (F5) opens the model's first file again, as File ▸ Open would: the line
        clears when the new read succeeds, and a failed read says why, keeping the plan shown.
        Reload is enabled while a model read from a file is open.
Rule 4: events come in bursts (a copy writes many times): a check runs SETTLE_MS after the last one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QFileSystemWatcher, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QLabel, QMenu

from gguf_budget.core.explorer.session import Session
from gguf_budget.core.gguf.file_identity import FileChange, FileIdentity, change_text, model_change, model_identity

SETTLE_MS = 200


class FileWatchHost(Protocol):
    """The window as the file watch sees it: the model shown, how to open a path, the load-error line."""

    @property
    def session(self) -> Session:
        """What the window draws (the model whose file is watched)."""
        ...

    def open_path(self, path: str) -> None: ...

    @property
    def load_error(self) -> QLabel: ...


@dataclass(frozen=True)
class _Read:
    shards: tuple[str, ...]
    identity: tuple[FileIdentity | None, ...]


class FileWatch(QObject):
    """Rules 1–4 for one window."""

    def __init__(self, host: FileWatchHost, parent: QObject | None = None):
        super().__init__(parent)
        self._host = host
        self._read: _Read | None = None
        self._said: FileChange = FileChange.UNCHANGED
        self.watcher = QFileSystemWatcher(self)
        self.watcher.fileChanged.connect(self._event)
        self.watcher.directoryChanged.connect(self._event)
        self.timer = QTimer(self, singleShot=True, interval=SETTLE_MS)
        self.timer.timeout.connect(self.check_now)
        self.reload_action = QAction("&Reload", self, shortcut=QKeySequence(QKeySequence.StandardKey.Refresh))
        self.reload_action.setObjectName("reloadAction")
        self.reload_action.setToolTip("Read the open model's file again")
        self.reload_action.setEnabled(False)
        self.reload_action.triggered.connect(self.reload)
        host.session.subscribe_models(lambda _model: self._loaded(), now=True)
        app = QGuiApplication.instance()
        if isinstance(app, QGuiApplication):
            app.applicationStateChanged.connect(self._app_state)

    def _loaded(self) -> None:
        model = self._host.session.state.model
        shards = tuple(model.shards or (model.path,)) if model is not None else ()
        readable = tuple(s for s in shards if Path(s).is_file())
        self._read = _Read(readable, model_identity(readable)) if readable else None
        self._said = FileChange.UNCHANGED
        self.reload_action.setEnabled(self._read is not None)
        watched = self.watcher.files() + self.watcher.directories()
        if watched:
            self.watcher.removePaths(watched)
        if self._read is not None:
            self.watcher.addPaths([*readable, *sorted({str(Path(s).parent) for s in readable})])

    def _event(self, _path: str) -> None:
        self.timer.start()

    def _app_state(self, state: Qt.ApplicationState) -> None:
        if state == Qt.ApplicationState.ApplicationActive:
            self.check_now()

    def check_now(self) -> FileChange:
        """Compare the files with what was read (Rule 2); says a new change in the load-error line."""
        self.timer.stop()
        if self._read is None:
            return FileChange.UNCHANGED
        change = model_change(self._read.shards, self._read.identity)
        for shard in self._read.shards:       # a file saved by rename drops out of the watch: watch the new one
            if shard not in self.watcher.files() and Path(shard).is_file():
                self.watcher.addPath(shard)
        line = self._host.load_error
        if change is not FileChange.UNCHANGED and change is not self._said:
            line.setText(change_text(self._read.shards[0], change))
            line.show()
        elif change is FileChange.UNCHANGED and self._said is not FileChange.UNCHANGED \
                and line.text() == change_text(self._read.shards[0], self._said):
            line.hide()
        self._said = change
        return change

    def reload(self) -> None:
        """Rule 3."""
        if self._read is not None:
            self._host.open_path(self._read.shards[0])


def install_file_watch(host: FileWatchHost, file_menu: QMenu, after: QAction) -> FileWatch:
    """The watch on `host`, and File ▸ Reload right after `after` (Open Recent)."""
    watch = FileWatch(host, file_menu)
    actions = file_menu.actions()
    following = actions[actions.index(after) + 1:]
    if following:
        file_menu.insertAction(following[0], watch.reload_action)
    else:
        file_menu.addAction(watch.reload_action)
    return watch
