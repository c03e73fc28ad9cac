"""Long impure work (a library scan, a remote header) off the GUI thread, with progress and Cancel.

Rule 1: the work is a plain callable taking `progress(done, total)` and `cancelled()`; it runs on
        Qt's global thread pool and its answers cross to the GUI thread through queued signals.
Rule 2: only the latest call counts: `start` while busy, or `cancel()`, raises the old call's flag
        (the work sees it at its next `cancelled()`) and drops whatever it still sends; `cancel()`
        emits `cancelled()` at once.
Rule 3: every exception ends the call in `failed(str)` — one line for the expected ones, "internal
        error: …" with a logged traceback for the rest — never a call that stays busy.
Rule 4: progress crosses to the GUI thread at most `PROGRESS_STEPS` times a call (its first report, each
        step of 1/PROGRESS_STEPS of the whole, and the last): a first scan of 50,000 files queued 50,000
        progress events for the window's thread.
"""

from __future__ import annotations

import threading
from typing import Callable

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from gguf_budget.gui.qt.workers.background import EXPECTED, failure_text

PROGRESS_STEPS = 200
Work = Callable[[Callable[[int, "int | None"], None], Callable[[], bool]], object]


class _Relay(QObject):
    progress = Signal(int, int, int)
    done = Signal(int, bool, object)


class _Job(QRunnable):
    def __init__(self, work: Work, stop: threading.Event, relay: _Relay, ticket: int, doing: str):
        super().__init__()
        self._work, self._stop, self._relay, self._ticket, self._doing = work, stop, relay, ticket, doing

    def run(self) -> None:
        shown = [-1]

        def progress(done: int, total: int | None) -> None:
            """Rule 4: a step of at least 1/PROGRESS_STEPS of the whole, the first and the last."""
            if total is not None and 0 <= shown[0] < done < total and done - shown[0] < total / PROGRESS_STEPS:
                return
            shown[0] = done
            self._relay.progress.emit(self._ticket, done, -1 if total is None else total)

        try:
            result = self._work(progress, self._stop.is_set)
        except Exception as e:  # noqa: BLE001 -- Rule 3: every failure must answer the GUI thread
            self._relay.done.emit(self._ticket, False, failure_text(e, EXPECTED, self._doing))
            return
        self._relay.done.emit(self._ticket, True, result)


class ProgressCall(QObject):
    """Runs one cancellable call at a time.

    Signals:
        progress(int, int): work done so far and the whole (-1 when unknown).
        succeeded(object): what the work returned.
        failed(str): one line, or "internal error: …".
        cancelled(): the call was cancelled; nothing more comes from it.
    """

    progress = Signal(int, int)
    succeeded = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, doing: str, parent: QObject | None = None):
        super().__init__(parent)
        self._doing = doing
        self._relay = _Relay()  # parentless: a job may outlive this object; Qt drops its queued messages
        self._relay.progress.connect(self._progressed)
        self._relay.done.connect(self._answer)
        self._ticket = 0
        self._stop: threading.Event | None = None

    @property
    def busy(self) -> bool:
        return self._stop is not None

    def start(self, work: Work) -> None:
        self._drop()
        self._ticket += 1
        self._stop = threading.Event()
        QThreadPool.globalInstance().start(_Job(work, self._stop, self._relay, self._ticket, self._doing))

    def cancel(self) -> None:
        if self._stop is None:
            return
        self._drop()
        self.cancelled.emit()

    def discard(self) -> None:
        """Drop the running call without a signal: a newer one will follow."""
        self._drop()

    def _drop(self) -> None:
        if self._stop is not None:
            self._stop.set()
            self._stop = None
            self._ticket += 1

    def _progressed(self, ticket: int, done: int, total: int) -> None:
        if ticket == self._ticket and self._stop is not None:
            self.progress.emit(done, total)

    def _answer(self, ticket: int, ok: bool, payload: object) -> None:
        if ticket != self._ticket or self._stop is None:
            return
        self._stop = None
        if ok:
            self.succeeded.emit(payload)
        else:
            self.failed.emit(str(payload))
