"""Impure work (loading a model, probing hardware) off the GUI thread, behind two signals.

Rule 1: the backend is a plain callable injected at construction — the real `load_model`
        or `probe_hardware`, or whatever a test passes — and one code path runs both.
Rule 2: the backend runs on Qt's global thread pool; its result comes back to the GUI
        thread as `succeeded(object)`, or `failed(str)` with a one-line message.
Rule 3: only the latest call counts: when a call is started before the previous one has
        answered, the previous answer is dropped, so a slow old load never overwrites a
        newer one.
Rule 4: every exception ends the call in `failed(str)`, so a busy indicator never waits
        forever. The expected ones (`EXPECTED`: the core's `BudgetError`, the disk's `OSError`,
        or the types the adapter was given) say their one line; anything else is a bug: it
        says "internal error: …" and its traceback goes to the log (`failure_text`).
Rule 5: an answer with nobody left to hear it is dropped: a job still running while the process ends (a test run's
        interpreter teardown deletes every Qt object, the job's relay among them) finds its relay gone and says
        nothing, where it printed "Signal source has been deleted" from inside Qt's thread pool.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from gguf_budget.core.errors import BudgetError, one_line

log = logging.getLogger(__name__)

EXPECTED: tuple[type[Exception], ...] = (BudgetError, OSError)


def failure_text(error: Exception, expected: tuple[type[Exception], ...], doing: str) -> str:
    """Rule 4: the line to show for `error`, met while `doing`; an unexpected one is logged with its traceback."""
    if isinstance(error, expected):
        log.info("%s failed: %s", doing, one_line(error))
        return one_line(error)
    log.error("internal error while %s", doing, exc_info=error)
    detail = f": {one_line(error)}" if str(error).strip() else ""
    return f"internal error: {type(error).__name__}{detail}"


class _Relay(QObject):
    """Carries one call's answer from the worker thread to the GUI thread (queued)."""

    done = Signal(int, bool, object)


class _Job(QRunnable):
    def __init__(self, call: Callable[[], Any], expected: tuple[type[Exception], ...], doing: str,
                 relay: _Relay, ticket: int):
        super().__init__()
        self._call, self._expected, self._doing = call, expected, doing
        self._relay, self._ticket = relay, ticket

    def run(self) -> None:
        try:
            result = self._call()
        except Exception as e:  # noqa: BLE001 -- Rule 4: every failure must answer the GUI thread
            self._answer(False, failure_text(e, self._expected, self._doing))
            return
        self._answer(True, result)

    def _answer(self, ok: bool, payload: object) -> None:
        try:
            self._relay.done.emit(self._ticket, ok, payload)
        except RuntimeError:  # Rule 5: the relay is deleted; nobody is left to answer
            log.debug("a finished job's caller was gone: %s", self._doing)


class BackgroundCall(QObject):
    """Runs `backend(*args)` on a worker thread; the latest call's answer is emitted.

    Signals:
        started(): a call was started (e.g. to show a busy indicator).
        succeeded(object): the backend's return value.
        failed(str): a one-line message: the expected error's own, or "internal error: …".
    """

    started = Signal()
    succeeded = Signal(object)
    failed = Signal(str)

    def __init__(
        self,
        backend: Callable[..., Any],
        expected: tuple[type[Exception], ...] = EXPECTED,
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        self._backend = backend
        self._expected = expected
        self._relay = _Relay()  # parentless: a job may outlive this adapter; Qt drops its queued answer
        self._relay.done.connect(self._answer)
        self._ticket = 0
        self._pending = False

    @property
    def busy(self) -> bool:
        """True from `start` until the latest call has answered."""
        return self._pending

    def start(self, *args: Any) -> None:
        self._ticket += 1
        self._pending = True
        self.started.emit()
        doing = f"calling {getattr(self._backend, '__qualname__', repr(self._backend))}{args!r}"
        job = _Job(lambda: self._backend(*args), self._expected, doing, self._relay, self._ticket)
        QThreadPool.globalInstance().start(job)

    def _answer(self, ticket: int, ok: bool, payload: object) -> None:
        if ticket != self._ticket:
            return
        self._pending = False
        if ok:
            self.succeeded.emit(payload)
        else:
            self.failed.emit(str(payload))
