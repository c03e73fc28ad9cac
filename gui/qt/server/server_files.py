"""File ▸ Add vision projector… / Add draft model…, and their Remove: files beside the model, read off the GUI thread.

Rule 1: a chosen file is read and checked by the core's builder (`fit.server.inputs`:
        `open_projector`, `open_draft`) on a worker thread (`BackgroundCall`); the answer goes into
        the session as `SetServer(…)` with only that file changed.
Rule 2: a file that is not one (a text model as projector, a projector of another width, a draft
        whose vocabulary llama.cpp would refuse, not a GGUF at all) is one line in the panel and the
        status bar, and changes nothing: the previous projector, draft and full load stay.
Rule 3: an answer for a model that is no longer on screen is dropped (it was checked against the
        other one); opening another model removes both files (`session` Rule 6), and the panel
        says so.
Rule 4: adding needs a model (the check is against it): the entries are enabled only while one
        is open; Remove only while there is something to remove.
Rule 5: the panel's message line says why a file was refused or removed until the next add or remove.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

from gguf_budget.core.explorer.derive import ExplorerView
from gguf_budget.core.explorer.session import Session, SetServer
from gguf_budget.core.fit.server.inputs import open_draft, open_projector
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.safe_text import safe_text
from gguf_budget.gui.qt.file_dialogs import Purpose, open_file
from gguf_budget.gui.qt.menus.file_menu import GGUF_FILTER, FileMenu
from gguf_budget.gui.qt.named import named
from gguf_budget.gui.qt.server.server_knobs import ServerKnobs
from gguf_budget.gui.qt.workers.background import BackgroundCall

KINDS = {"projector": "vision projector", "draft": "draft model"}
ADD_TEXT = {"projector": "Add vision &projector…", "draft": "Add &draft model…"}


def _checked(reader: Callable[[str, ModelSpec], Any]) -> Callable[[str, ModelSpec], tuple[ModelSpec, Any]]:
    """On the worker: the file read and checked, with the model it was checked against (Rule 3)."""
    return lambda path, model: (model, reader(path, model))


class ServerFiles(QObject):
    """Rules 1–4 for one window: its File menu entries, the panel's buttons and the session."""

    def __init__(self, window: QWidget, session: Session, knobs: ServerKnobs, file_menu: FileMenu,
                 status: Callable[[str], None]):
        super().__init__(window)
        self._window, self._session, self._knobs, self._status = window, session, knobs, status
        self._readers = {"projector": BackgroundCall(_checked(open_projector), parent=self),
                         "draft": BackgroundCall(_checked(open_draft), parent=self)}
        self.add_actions: dict[str, QAction] = {}
        self.remove_actions: dict[str, QAction] = {}
        for kind, what in KINDS.items():
            title = "".join(word.capitalize() for word in what.split())
            add = named(QAction(ADD_TEXT[kind], window), f"add{title}Action")
            add.triggered.connect(lambda _=False, k=kind: self.choose(k))
            remove = named(QAction(f"Remove {what}", window), f"remove{title}Action")
            remove.triggered.connect(lambda _=False, k=kind: self.remove(k))
            file_menu.menu.insertActions(file_menu.export_anchor, [add, remove])
            self.add_actions[kind], self.remove_actions[kind] = add, remove
            reader = self._readers[kind]
            reader.succeeded.connect(lambda answer, k=kind: self._read(k, answer))
            reader.failed.connect(lambda message, k=kind: self._refused(k, message))
        file_menu.menu.insertSeparator(file_menu.export_anchor)
        knobs.addProjector.connect(lambda: self.choose("projector"))
        knobs.removeProjector.connect(lambda: self.remove("projector"))
        knobs.addDraft.connect(lambda: self.choose("draft"))
        knobs.removeDraft.connect(lambda: self.remove("draft"))
        self._shown: tuple[ModelSpec | None, Any, Any] = (None, None, None)
        session.subscribe(self._follow)
        self._follow(session.view)

    def busy(self) -> bool:
        """True while a chosen file is being read."""
        return any(reader.busy for reader in self._readers.values())

    def choose(self, kind: str) -> None:
        """Ask for a file (the dialog starts where models were last opened) and read it (Rule 1)."""
        model = self._session.state.model
        if model is None:
            return
        path = open_file(self._window, f"Add a {KINDS[kind]} beside the model", Purpose.MODEL, GGUF_FILTER,
                         fallback=str(Path(model.path).parent))
        if path:
            self.add(kind, path)

    def add(self, kind: str, path: str) -> None:
        """Read `path` as the `kind` file for the model on screen, off the GUI thread (Rules 1–2)."""
        model = self._session.state.model
        if model is not None:
            self._status(f"Reading the {KINDS[kind]} {safe_text(path, 200)}…")
            self._readers[kind].start(path, model)

    def remove(self, kind: str) -> None:
        self._knobs.show_message(None)
        self._set(kind, None)

    def _read(self, kind: str, answer: tuple[ModelSpec, Any]) -> None:
        model, value = answer
        if model is not self._session.state.model:  # Rule 3
            return
        self._knobs.show_message(None)
        self._set(kind, value)
        self._status(f"Added the {KINDS[kind]} to the full load")

    def _set(self, kind: str, value: Any) -> None:
        server = self._session.state.server
        server = replace(server, projector=value) if kind == "projector" else replace(server, draft=value)
        self._session.apply(SetServer(server))

    def _refused(self, kind: str, message: str) -> None:
        line = f"Not added: {safe_text(message, 300)} (the {KINDS[kind]} is unchanged)"
        self._knobs.show_message(line)
        self._status(line)

    def _follow(self, view: ExplorerView) -> None:
        """Rules 3–5: the entries follow the session; a model change that removed a file is said."""
        state = view.state
        s = state.server
        model, projector, draft = self._shown
        if state.model is not model and model is not None and (projector is not None or draft is not None):
            gone = " and ".join(KINDS[k] for k, v in (("projector", projector), ("draft", draft)) if v is not None)
            self._knobs.show_message(f"Removed the {gone}: it was checked against {safe_text(model.path, 200)}, "
                                     "not this model")
        self._shown = (state.model, s.projector, s.draft)
        for kind, value in (("projector", s.projector), ("draft", s.draft)):
            self.add_actions[kind].setEnabled(state.model is not None)
            self.remove_actions[kind].setEnabled(value is not None)
        self._knobs.set_can_add(state.model is not None)
