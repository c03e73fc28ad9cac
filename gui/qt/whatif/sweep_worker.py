"""Budget sweeps off the GUI thread, in chunks, with progress and cancellation.

Rule 1: the budgets are planned in chunks of CHUNK_BUDGETS by the core's `sweep_budgets`
        (each chunk prices the model once); before each chunk the worker checks its cancel
        flag, and after each it reports progress, so Cancel stops the work within one chunk.
Rule 2: `merge_sweeps` joins the chunks into the result one `sweep_budgets` call over all the
        budgets gives: the rows in order, and each threshold from the first chunk that has one.
        Every budget is planned on its own, so chunking changes no row.
Rule 3: only the latest sweep counts. `cancel()` (and `discard()`, and starting another sweep)
        raises the old sweep's flag and drops whatever it still sends; only `cancel()` emits
        `cancelled()` (at once).
Rule 4: every exception ends the sweep in `failed(str)`, never a sweep that stays busy: a
        `BudgetError` (the planner refused) says its one line, anything else "internal error: …"
        with its traceback in the log (`failure_text`, as for every worker).
Rule 5: given `SweepSpeed` inputs, each chunk's rows get their decode estimates (`with_speeds`)
        on the worker too.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable, Sequence

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from gguf_budget.core import BudgetRequest, ModelSpec, SweepResult, sweep_budgets
from gguf_budget.core.machine.bandwidth import Bandwidths
from gguf_budget.core.speed.sweep import with_speeds

from gguf_budget.gui.qt.workers.background import EXPECTED, failure_text

CHUNK_BUDGETS = 128
SweepBackend = Callable[[ModelSpec, Sequence[int], BudgetRequest], SweepResult]


@dataclass(frozen=True)
class SweepSpeed:
    """What a sweep's decode estimates need: the bandwidths and the machine's available RAM (None: unknown)."""

    bandwidths: Bandwidths
    host_available: int | None


def chunked(budgets: Sequence[int], size: int = CHUNK_BUDGETS) -> list[tuple[int, ...]]:
    return [tuple(budgets[i:i + size]) for i in range(0, len(budgets), size)]


def merge_sweeps(parts: Sequence[SweepResult]) -> SweepResult:
    """The chunks of one sweep, in order, as a single result (Rule 2)."""
    return SweepResult(
        rows=tuple(row for part in parts for row in part.rows),
        first_feasible=next((p.first_feasible for p in parts if p.first_feasible is not None), None),
        all_pinned=next((p.all_pinned for p in parts if p.all_pinned is not None), None),
        n_layer=parts[0].n_layer,
        ctx_cap=parts[0].ctx_cap,
        n_buffers_requested=parts[0].n_buffers_requested,
    )


class _Relay(QObject):
    """Carries a sweep's messages from the worker thread to the GUI thread (queued)."""

    progress = Signal(int, int, int)
    done = Signal(int, bool, object)


class _SweepJob(QRunnable):
    def __init__(self, backend: SweepBackend, model: ModelSpec, budgets: Sequence[int], request: BudgetRequest,
                 speed: SweepSpeed | None, stop: threading.Event, relay: _Relay, ticket: int):
        super().__init__()
        self._backend, self._model, self._budgets, self._request = backend, model, budgets, request
        self._speed, self._stop, self._relay, self._ticket = speed, stop, relay, ticket

    def _chunk(self, budgets: Sequence[int]) -> SweepResult:
        part = self._backend(self._model, budgets, self._request)
        if self._speed is None:
            return part
        return with_speeds(self._model, part, self._request.kv_type, self._speed.bandwidths, self._speed.host_available)

    def run(self) -> None:
        parts: list[SweepResult] = []
        done, total = 0, len(self._budgets)
        for chunk in chunked(self._budgets):
            if self._stop.is_set():
                return
            try:
                parts.append(self._chunk(chunk))
            except Exception as e:  # noqa: BLE001 -- Rule 4: every failure must answer the GUI thread
                self._relay.done.emit(self._ticket, False, failure_text(e, EXPECTED, "sweeping budgets"))
                return
            done += len(chunk)
            self._relay.progress.emit(self._ticket, done, total)
        self._relay.done.emit(self._ticket, True, merge_sweeps(parts))


class SweepWorker(QObject):
    """Runs one sweep at a time on Qt's global thread pool.

    Signals:
        progress(int, int): budgets planned so far, and how many in all.
        succeeded(object): the SweepResult, equal to one `sweep_budgets` call over all budgets.
        failed(str): the planner refused the model or request (one line), or "internal error: …".
        cancelled(): the sweep was cancelled; nothing more comes from it.
    """

    progress = Signal(int, int)
    succeeded = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, backend: SweepBackend = sweep_budgets, parent: QObject | None = None):
        super().__init__(parent)
        self._backend = backend
        self._relay = _Relay()  # parentless: a job may outlive this worker; Qt drops its queued messages
        self._relay.progress.connect(self._progressed)
        self._relay.done.connect(self._answer)
        self._ticket = 0
        self._stop: threading.Event | None = None

    @property
    def busy(self) -> bool:
        return self._stop is not None

    def start(self, model: ModelSpec, budgets: Sequence[int], request: BudgetRequest,
              speed: SweepSpeed | None = None) -> None:
        """Sweep `budgets` (at least one), with decode estimates when `speed` is given; a running sweep is dropped."""
        if not budgets:
            raise ValueError("a sweep needs at least one budget")
        self._drop()
        self._ticket += 1
        self._stop = threading.Event()
        job = _SweepJob(self._backend, model, tuple(budgets), request, speed, self._stop, self._relay, self._ticket)
        QThreadPool.globalInstance().start(job)

    def cancel(self) -> None:
        """Stop the running sweep (no-op when idle); emits `cancelled`."""
        if self._stop is None:
            return
        self._drop()
        self.cancelled.emit()

    def discard(self) -> None:
        """Stop the running sweep without a signal: its answer is out of date, a newer sweep will follow."""
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
