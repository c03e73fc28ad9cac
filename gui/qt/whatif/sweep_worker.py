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
        with its traceback in the log (`ProgressCall`, as for every long call).
Rule 5: given `SweepSpeed` inputs, each chunk's rows get their decode estimates (`with_speeds`)
        on the worker too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from PySide6.QtCore import QObject, Signal

from gguf_budget.core import BudgetRequest, ModelSpec, SweepResult, sweep_budgets
from gguf_budget.core.machine.bandwidth import Bandwidths
from gguf_budget.core.speed.sweep import with_speeds

from gguf_budget.gui.qt.workers.progress_call import ProgressCall, Work

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


def sweep_work(backend: SweepBackend, model: ModelSpec, budgets: Sequence[int], request: BudgetRequest,
               speed: SweepSpeed | None) -> Work:
    """The sweep as a `ProgressCall` work: chunk by chunk, checking Cancel before each (Rule 1)."""

    def chunk_result(chunk: Sequence[int]) -> SweepResult:
        part = backend(model, chunk, request)
        if speed is None:
            return part
        return with_speeds(model, part, request.kv_type, speed.bandwidths, speed.host_available)

    def work(progress: Callable[[int, int | None], None], cancelled: Callable[[], bool]) -> SweepResult | None:
        parts: list[SweepResult] = []
        done = 0
        for chunk in chunked(budgets):
            if cancelled():
                return None
            parts.append(chunk_result(chunk))
            done += len(chunk)
            progress(done, len(budgets))
        return merge_sweeps(parts)

    return work


class SweepWorker(QObject):
    """Runs one sweep at a time on Qt's global thread pool (a `ProgressCall`: Rules 3 and 4).

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
        self._call = ProgressCall("sweeping budgets", self)
        for theirs, ours in ((self._call.progress, self.progress), (self._call.succeeded, self.succeeded),
                             (self._call.failed, self.failed), (self._call.cancelled, self.cancelled)):
            theirs.connect(ours)

    @property
    def busy(self) -> bool:
        return self._call.busy

    def start(self, model: ModelSpec, budgets: Sequence[int], request: BudgetRequest,
              speed: SweepSpeed | None = None) -> None:
        """Sweep `budgets` (at least one), with decode estimates when `speed` is given; a running sweep is dropped."""
        if not budgets:
            raise ValueError("a sweep needs at least one budget")
        self._call.start(sweep_work(self._backend, model, tuple(budgets), request, speed))

    def cancel(self) -> None:
        """Stop the running sweep (no-op when idle); emits `cancelled`."""
        self._call.cancel()

    def discard(self) -> None:
        """Stop the running sweep without a signal: its answer is out of date, a newer sweep will follow."""
        self._call.discard()
