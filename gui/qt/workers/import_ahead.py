"""Modules the window will want soon, imported off the GUI thread.

Rule 1: `ImportAhead(names)` imports its modules once, on Qt's thread pool (`BackgroundCall`); `when_ready(then)`
        runs `then` on the GUI thread once they are imported, at once when they already were. An import holds
        the GIL only in turns, so the GUI thread stays free to paint, answer a click or quit meanwhile: run
        there, importing pyqtgraph and numpy took ~0.6 s (2.5 s on a loaded 2-core machine), the add-ons ~0.1 s,
        and a close in those seconds waited for them.
Rule 2: an import that failed on the pool still answers: `then` runs, imports on the GUI thread and meets the
        error there, as a plain import would have.
Rule 3: nothing waits for the import at quit: the process ends with the pool's threads (`workers.quitting`).
"""

from __future__ import annotations

import importlib
import sys
from typing import Callable, Sequence

from PySide6.QtCore import QObject

from gguf_budget.gui.qt.workers.background import BackgroundCall


def import_all(names: Sequence[str]) -> None:
    """Import each of `names` on the calling thread."""
    for name in names:
        importlib.import_module(name)


class ImportAhead(QObject):
    """Rule 1: `names` imported on a worker thread; callers wait for them with `when_ready`."""

    def __init__(self, names: Sequence[str], parent: QObject | None = None):
        super().__init__(parent)
        self._names = tuple(names)
        self._waiting: list[Callable[[], None]] = []
        self._call: BackgroundCall | None = None
        self._answered = False

    def ready(self) -> bool:
        """Whether every module is imported (by this import or before it: then none is started)."""
        return self._answered or (self._call is None and all(name in sys.modules for name in self._names))

    def start(self) -> None:
        """Begin the import now, if it is needed and not begun."""
        if self._call is None and not self.ready():
            self._call = BackgroundCall(import_all, parent=self)
            self._call.succeeded.connect(lambda _none: self._answer())
            self._call.failed.connect(lambda _message: self._answer())  # Rule 2
            self._call.start(self._names)

    def when_ready(self, then: Callable[[], None]) -> None:
        """Run `then` on the GUI thread once the modules are imported: now, or when the import answers."""
        if self.ready():
            then()
            return
        self._waiting.append(then)
        self.start()

    def _answer(self) -> None:
        self._answered = True
        waiting, self._waiting = self._waiting, []
        for then in waiting:
            then()
