"""Quitting without waiting on work: every worker is told to stop, and none is waited on.

Rule 1: at quit every cancellable call under the window is dropped (`ProgressCall`: the library
        scan, a remote header, the budget sweep; each sees its flag at its next check) and a running
        measurement is cancelled.
Rule 2: nothing is joined: no thread of the pool is waited for (a header read, a probe, a bandwidth
        measurement all end with the process; what they write is written whole or not at all,
        `core.safe_write`), and a measurement's llama.cpp is sent SIGKILL at once
        (`core.measure.runner.kill_runs_now`), not asked to stop and waited for: its log is not kept,
        the app is ending. Quitting took 0.2 s at the first plan (the pool's wait) and up to 11 s with a
        measurement running (its engine's stop, terminate then kill after the runner's grace).
Rule 3: the process then ends at once (`end_process`): the log, stdout and stderr are flushed and
        `os._exit` ends it, skipping the interpreter's own teardown — about a second of garbage
        collection and Qt destructors on a 2-core machine (`benchmarks/bench_launch.py`), and the
        moment a worker thread still in Python code could crash the exit or hang it (the global
        thread pool's destructor waits for every thread). The settings are written when the window
        closes (`closeEvent`), before this.
Rule 4: what only a module imported later can start registers how to stop it when that module is imported
        (`stop_at_quit`): the measurements (`measure_job`), so this module, imported before the first plan,
        imports no measuring code, and a run that never imported it has nothing of the kind to look for.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Callable, NoReturn

from PySide6.QtCore import QObject, QThreadPool

from gguf_budget.gui.qt.workers.at_end import run_at_end
from gguf_budget.gui.qt.workers.progress_call import ProgressCall

log = logging.getLogger(__name__)
_STOPPERS: list[Callable[[QObject], int]] = []


def stop_at_quit(stop: Callable[[QObject], int]) -> None:
    """Rule 4: at quit, `stop(root)` cancels the work of its kind under `root` and says how many engines it killed."""
    _STOPPERS.append(stop)


def stop_workers(root: QObject) -> None:
    """Rules 1–2: drop every call under `root`, cancel its measurements and kill their engines; wait for none."""
    for call in root.findChildren(ProgressCall):
        call.discard()
    killed = sum(stop(root) for stop in _STOPPERS)
    running = QThreadPool.globalInstance().activeThreadCount()
    if killed or running:
        log.info("quitting: %d measurement(s) killed, %d worker(s) left running, none waited for", killed, running)


def end_process(code: int) -> NoReturn:
    """Rule 3: remove what this run leaves (`at_end`), flush what the process wrote and end it now."""
    run_at_end()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(code)
