"""Quitting without waiting on work: every worker is told to stop, and none is waited on for long.

Rule 1: at quit every cancellable call under the window is dropped (`ProgressCall`: the library
        scan, a remote header, the budget sweep; each sees its flag at its next check) and a running
        measurement is cancelled.
Rule 2: the thread pool then gets QUIT_WAIT_MS to finish what is quick (a header read, a probe);
        work still running after that (a bandwidth measurement, a long header walk) is not waited
        for. A measurement is the one exception: it is waited for until it has stopped its
        llama.cpp (terminate, then kill after the runner's grace), because that process must not
        outlive the app.
Rule 3: the process then ends at once (`end_process`): the log, stdout and stderr are flushed and
        `os._exit` ends it, skipping the interpreter's own teardown — about a second of garbage
        collection and Qt destructors on a 2-core machine (`benchmarks/bench_launch.py`), and the
        moment a worker thread still in Python code could crash the exit or hang it (the global
        thread pool's destructor waits for every thread). The settings are written when the window
        closes (`closeEvent`), before this.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import NoReturn

from PySide6.QtCore import QObject, QThreadPool

from gguf_budget.core.measure.runner import STOP_GRACE_S
from gguf_budget.gui.qt.workers.at_end import run_at_end
from gguf_budget.gui.qt.workers.measure_job import MeasureJob
from gguf_budget.gui.qt.workers.progress_call import ProgressCall

QUIT_WAIT_MS = 200
MEASURE_STOP_S = 2 * STOP_GRACE_S + 1.0
"""Rule 2: the most a measurement may take to stop its engine (terminate, grace, kill)."""

log = logging.getLogger(__name__)


def stop_workers(root: QObject) -> None:
    """Rules 1–2: drop every call under `root`, stop its measurements, and give the pool QUIT_WAIT_MS."""
    for call in root.findChildren(ProgressCall):
        call.discard()
    jobs = [job for job in root.findChildren(MeasureJob) if job.running]
    for job in jobs:
        job.cancel()
    for job in jobs:
        if not job.wait_stopped(MEASURE_STOP_S):
            log.warning("quitting: a measurement did not stop its engine within %.0f s", MEASURE_STOP_S)
    if not QThreadPool.globalInstance().waitForDone(QUIT_WAIT_MS):
        log.info("quitting: %d worker(s) still running are not waited for",
                 QThreadPool.globalInstance().activeThreadCount())


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
