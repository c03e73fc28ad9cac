"""Impure work (loading a model, probing hardware) off the GUI thread, behind two signals.

Rule 1: the backend is a plain callable injected at construction — the real `load_model`
        or `probe_hardware`, or whatever a test passes — and one code path runs both.
Rule 2: the backend runs on Qt's global thread pool; its result comes back to the GUI
        thread as `succeeded(object)`, or `failed(str)` with a one-line message.
Rule 3: only the latest call counts: when a call is started before the previous one has
        answered, the previous answer is dropped, so a slow old load never overwrites a
        newer one.
Rule 4: only the exception types the adapter was given become `failed`; anything else is
        a bug and is raised on the worker thread (pytest-qt and Qt report it).
"""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal


class _Relay(QObject):
    """Carries one call's answer from the worker thread to the GUI thread (queued)."""

    done = Signal(int, bool, object)


class _Job(QRunnable):
    def __init__(self, call: Callable[[], Any], errors: tuple[type[BaseException], ...], relay: _Relay, ticket: int):
        super().__init__()
        self._call, self._errors, self._relay, self._ticket = call, errors, relay, ticket

    def run(self) -> None:
        try:
            result = self._call()
        except self._errors as e:
            self._relay.done.emit(self._ticket, False, str(e).splitlines()[0] if str(e) else type(e).__name__)
            return
        self._relay.done.emit(self._ticket, True, result)


class BackgroundCall(QObject):
    """Runs `backend(*args)` on a worker thread; the latest call's answer is emitted.

    Signals:
        started(): a call was started (e.g. to show a busy indicator).
        succeeded(object): the backend's return value.
        failed(str): a one-line message from one of the expected exception types.
    """

    started = Signal()
    succeeded = Signal(object)
    failed = Signal(str)

    def __init__(
        self,
        backend: Callable[..., Any],
        errors: tuple[type[BaseException], ...] = (),
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        self._backend = backend
        self._errors = errors
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
        job = _Job(lambda: self._backend(*args), self._errors, self._relay, self._ticket)
        QThreadPool.globalInstance().start(job)

    def _answer(self, ticket: int, ok: bool, payload: object) -> None:
        if ticket != self._ticket:
            return
        self._pending = False
        if ok:
            self.succeeded.emit(payload)
        else:
            self.failed.emit(str(payload))
