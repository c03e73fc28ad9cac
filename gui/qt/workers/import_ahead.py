"""Modules the window will want soon, imported off the GUI thread.

Rule 1: `ImportAhead(names)` imports its modules once, on a daemon thread of its own; `when_ready(then)` runs `then`
        on the GUI thread once they are imported, at once when they already were. An import holds the GIL only in
        turns, so the GUI thread stays free to paint, answer a click or quit meanwhile: run there, importing
        pyqtgraph and numpy took ~0.6 s (2.5 s on a loaded 2-core machine), the add-ons ~0.1 s, and a close in
        those seconds waited for them. Not Qt's thread pool: its two threads may both be measuring the machine
        at a first launch, and the add-ons would wait for them.
Rule 2: an import that failed on the thread still answers: `then` runs, imports on the GUI thread and meets the
        error there, as a plain import would have.
Rule 3: nothing waits for the import at quit: the process ends with the thread (`workers.quitting`).
"""

from __future__ import annotations

import importlib
import sys
import threading
from typing import Callable, Sequence

from PySide6.QtCore import QObject, Signal

IMPORT_THREAD = "import-ahead"


class _Relay(QObject):
    """Carries "imported" from the importing thread to the GUI thread (queued)."""

    done = Signal()


class ImportAhead(QObject):
    """Rule 1: `names` imported on a thread of their own; callers wait for them with `when_ready`."""

    def __init__(self, names: Sequence[str], parent: QObject | None = None):
        super().__init__(parent)
        self._names = tuple(names)
        self._waiting: list[Callable[[], None]] = []
        self._started = False
        self._answered = False
        self._relay = _Relay()  # parentless: the thread may outlive this object; Qt drops its queued answer
        self._relay.done.connect(self._answer)

    def ready(self) -> bool:
        """Whether every module is imported (by this import or before it: then none is started)."""
        return self._answered or (not self._started and all(name in sys.modules for name in self._names))

    def start(self) -> None:
        """Begin the import now, if it is needed and not begun."""
        if not self._started and not self.ready():
            self._started = True
            threading.Thread(target=self._import, name=IMPORT_THREAD, daemon=True).start()

    def when_ready(self, then: Callable[[], None]) -> None:
        """Run `then` on the GUI thread once the modules are imported: now, or when the import answers."""
        if self.ready():
            then()
            return
        self._waiting.append(then)
        self.start()

    def _import(self) -> None:
        try:
            for name in self._names:
                importlib.import_module(name)
        except Exception:  # noqa: BLE001 -- Rule 2: `then` meets it again on the GUI thread
            pass
        self._relay.done.emit()

    def _answer(self) -> None:
        self._answered = True
        waiting, self._waiting = self._waiting, []
        for then in waiting:
            then()
