"""A measurement off the GUI thread: progress while it runs, Cancel, and one answer at the end.

Rule 1: the work is a plain callable `work(progress, cancel)` — the real one runs llama.cpp and
        stores the evidence (`core.measure.session`); it runs on Qt's global thread pool.
Rule 2: progress reports cross to the GUI thread as `progressed(object)`; the answer comes
        back as `succeeded(object)` or `failed(str)` (one line), exactly once per start.
Rule 3: `cancel()` sets the event the work watches; the work stops its child process and
        answers `failed("… cancelled")`, so the window never waits on a dead run.
Rule 4: every exception ends the run in `failed(str)` (`background.failure_text`): the
        expected ones (`BudgetError`, `OSError`) say their one line; anything else is a bug,
        says "internal error: …" and leaves its traceback in the log.
Rule 5: at quit every running measurement under the window is cancelled and its engine killed at once
        (`quitting` Rules 1, 2 and 4: registered when this module is imported).
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from gguf_budget.core.measure.runner import kill_runs_now
from gguf_budget.gui.qt.workers.background import EXPECTED, failure_text
from gguf_budget.gui.qt.workers.quitting import stop_at_quit

Work = Callable[[Callable[[Any], None], threading.Event], Any]


class _Relay(QObject):
    """Carries reports from the worker thread to the GUI thread (queued)."""

    progress = Signal(object)
    done = Signal(bool, object)


class _Job(QRunnable):
    def __init__(self, work: Work, cancel: threading.Event, relay: _Relay):
        super().__init__()
        self._work, self._cancel, self._relay = work, cancel, relay

    def run(self) -> None:
        try:
            result = self._work(self._relay.progress.emit, self._cancel)
        except Exception as e:  # noqa: BLE001 -- Rule 4: every failure must answer the GUI thread
            self._relay.done.emit(False, failure_text(e, EXPECTED, "measuring with llama.cpp"))
            return
        self._relay.done.emit(True, result)


class MeasureJob(QObject):
    """Runs one measurement at a time.

    Signals:
        progressed(object): a progress report from the work (`core.measure.progress.Progress`).
        succeeded(object): the work's result.
        failed(str): why it did not complete (cancelled, timed out, engine failed …).
    """

    progressed = Signal(object)
    succeeded = Signal(object)
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._cancel = threading.Event()
        self._relay: _Relay | None = None

    @property
    def running(self) -> bool:
        return self._relay is not None

    def start(self, work: Work) -> None:
        if self.running:
            raise RuntimeError("a measurement is already running")
        self._cancel = threading.Event()
        relay = _Relay()  # parentless: the job may outlive this object; Qt drops its queued reports
        relay.progress.connect(self.progressed)
        relay.done.connect(self._answer)
        self._relay = relay
        QThreadPool.globalInstance().start(_Job(work, self._cancel, relay))

    def cancel(self) -> None:
        self._cancel.set()

    def _answer(self, ok: bool, payload: object) -> None:
        self._relay = None
        if ok:
            self.succeeded.emit(payload)
        else:
            self.failed.emit(str(payload))


def _stop_measurements(root: QObject) -> int:
    """Rule 5: cancel the measurements under `root`, kill every llama.cpp run now; how many were killed."""
    for job in root.findChildren(MeasureJob):
        if job.running:
            job.cancel()
    return kill_runs_now()


stop_at_quit(_stop_measurements)
