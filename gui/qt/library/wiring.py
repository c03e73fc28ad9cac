"""Library and remote models in the explorer window: the Library dock, File ▸ Library… and File ▸ Open URL….

Rule 1: `install_library(host)` is called by the composition root; it talks to the window only
        through `LibraryHost` (open a path, the session the window draws, docks, the File menu,
        the status bar) and never imports the window.
Rule 2: the library judges models with the session's machine (probed or hypothetical), budget,
        ctx cap and host reserve at the moment of the scan (`dock_inputs.library_settings`, as
        `gguf-budget library` does); File ▸ Library… shows the dock and scans the first time.
Rule 3: Open URL reads the header over HTTP off the GUI thread (`core.remote`), with a progress
        dialog and Cancel; the model then opens from the header cache like any file, and the status
        bar says where it came from and how many bytes crossed the network. A bad address or a
        failed transfer is one line; the model on screen stays.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable, Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QInputDialog, QProgressDialog, QWidget

from gguf_budget.core import ModelSpec
from gguf_budget.core.errors import RemoteError
from gguf_budget.core.explorer.session import Session
from gguf_budget.core.library.assess import LibrarySettings
from gguf_budget.core.remote.limits import DEFAULT_LIMITS, FetchLimits
from gguf_budget.core.remote.refs import RemoteRef, parse_ref
from gguf_budget.core.remote.source import RemoteSource
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.units import human_bytes
from gguf_budget.core.explorer.messages import MessageKind
from gguf_budget.gui.qt.library.dock import LibraryView
from gguf_budget.gui.qt.whatif.host import FileMenuHook
from gguf_budget.gui.qt.workers.progress_call import ProgressCall, Work




class LibraryHost(Protocol):
    """The window as the library add-on sees it (a new model, like every change, comes from its session)."""

    @property
    def file_menu(self) -> FileMenuHook: ...

    def window(self) -> QWidget: ...

    def open_path(self, path: str) -> None: ...

    remote_opener: Callable[[str], None] | None

    @property
    def session(self) -> Session:
        """What the window draws: the machine, budget, cap and reserve the Library judges with."""
        ...

    def show_status(self, message: str, kind: MessageKind = ...) -> None: ...

    def add_views(self, docks: tuple[QDockWidget, ...]) -> None: ...


@dataclass(frozen=True)
class Library:
    """What `install_library` added: the dock and its view, the menu actions, the URL opener."""

    view: LibraryView
    dock: QDockWidget
    library_action: QAction
    url_action: QAction
    url: "UrlOpener"




class UrlOpener:
    """Rule 3: File ▸ Open URL…, off the GUI thread, with progress and Cancel."""

    def __init__(self, host: LibraryHost, ask: Callable[[QWidget], str | None], cache_root: Path | None,
                 limits: FetchLimits):
        self._host, self._ask, self._cache_root, self._limits = host, ask, cache_root, limits
        self.worker = ProgressCall("reading a remote header", host.window())
        self.worker.succeeded.connect(self._opened)
        self.worker.failed.connect(self._failed)
        self.worker.progress.connect(self._progressed)
        self.dialog: QProgressDialog | None = None
        self._source: str | None = None
        host.session.subscribe_models(lambda _model: self._announce())

    def ask_and_open(self) -> None:
        text = self._ask(self._host.window())
        if text:
            self.open(text.strip())

    def open(self, text: str) -> None:
        try:
            ref = parse_ref(text)
            if ref is None:
                raise RemoteError(f"not a URL, hf:// address or owner/repo:QUANT: {text}")
        except RemoteError as e:
            self._host.show_status(f"Cannot open {safe_text(str(e))}", MessageKind.PROBLEM)
            return
        self.dialog = QProgressDialog(f"Reading the header of {safe_text(ref.describe())}…", "Cancel", 0, 0,
                                      self._host.window())
        self.dialog.setObjectName("urlProgress")
        self.dialog.setWindowModality(Qt.WindowModality.WindowModal)
        self.dialog.canceled.connect(self.worker.cancel)
        self.dialog.canceled.connect(lambda: self._host.show_status("Open URL cancelled"))
        self.dialog.show()
        work: Work = partial(_read_remote, ref=ref, cache_root=self._cache_root, limits=self._limits)
        self.worker.start(work)

    def _progressed(self, done: int, total: int) -> None:
        if self.dialog is not None:
            self.dialog.setLabelText(f"Header read so far: {human_bytes(done)}"
                                     + ("" if total < 0 else f" of a {human_bytes(total)} file"))

    def _opened(self, result: tuple[ModelSpec, RemoteSource]) -> None:
        self._close_dialog()
        spec, source = result
        self._source = safe_text(source.summary(), 300)
        self._host.open_path(spec.path)

    def _announce(self) -> None:
        """Once the model from the URL is on screen, say where it came from (after the window's own line)."""
        if self._source is not None:
            self._host.show_status(self._source)
            self._source = None

    def _failed(self, message: str) -> None:
        self._close_dialog()
        self._host.show_status(f"Cannot open the URL: {safe_text(message, 300)}", MessageKind.PROBLEM)

    def _close_dialog(self) -> None:
        if self.dialog is not None:
            self.dialog.reset()
            self.dialog.deleteLater()
            self.dialog = None


def _read_remote(progress: Callable[[int, int | None], None], cancelled: Callable[[], bool], *, ref: RemoteRef,
                 cache_root: Path | None, limits: FetchLimits) -> tuple[ModelSpec, RemoteSource]:
    """Imports the HTTP and Hugging Face clients only now: at start-up they cost about a second."""
    from gguf_budget.core.remote.open import open_remote

    return open_remote(ref, cache_root=cache_root, limits=limits, progress=progress, cancelled=cancelled)


def _ask_url(parent: QWidget) -> str | None:
    text, ok = QInputDialog.getText(parent, "Open URL", "A GGUF file's URL, hf://owner/repo/file.gguf or "
                                    "owner/repo:QUANT (only the header is read):")
    return text if ok else None


def _settings(session: Session) -> LibrarySettings | None:
    """The Library's settings as the session's view publishes them (`dock_inputs` Rule 5)."""
    docks = session.view.docks
    return None if docks is None else docks.library


def install_library(host: LibraryHost, *, home: Path | None = None, config_file: Path | None = None,
                    ask_url: Callable[[QWidget], str | None] = _ask_url, cache_root: Path | None = None,
                    limits: FetchLimits = DEFAULT_LIMITS) -> Library:
    """Rule 1: the Library dock and the File menu's Library… and Open URL… entries."""
    window = host.window()
    session = host.session
    view = LibraryView(lambda: _settings(session), home, config_file, window)
    view.openRequested.connect(host.open_path)
    dock = QDockWidget("Library", window)
    dock.setObjectName("libraryDock")
    dock.setWidget(view)
    host.add_views((dock,))
    opener = UrlOpener(host, ask_url, cache_root, limits)
    host.remote_opener = opener.open  # Open Recent keeps URLs and Hub references (core.remote.source Rule 3)
    library_action = _action("&Library…", "Ctrl+L", "libraryAction", window)
    library_action.triggered.connect(partial(_show_library, view, dock))
    url_action = _action("Open &URL…", "Ctrl+Shift+O", "openUrlAction", window)
    url_action.triggered.connect(opener.ask_and_open)
    menu = host.file_menu
    menu.menu.insertActions(menu.export_anchor, [url_action, library_action])
    return Library(view, dock, library_action, url_action, opener)


def _action(text: str, shortcut: str, name: str, parent: QWidget) -> QAction:
    action = QAction(text, parent)
    action.setShortcut(QKeySequence(shortcut))
    action.setObjectName(name)
    return action


def _show_library(view: LibraryView, dock: QDockWidget) -> None:
    dock.show()
    dock.raise_()
    if not view.scanned_once:
        view.rescan()
