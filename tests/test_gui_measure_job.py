"""MeasureJob: work off the GUI thread with progress and Cancel, and exactly one answer, whatever the work raises."""

from __future__ import annotations

import threading

import pytest

from gguf_budget.core.errors import BudgetError
from gguf_budget.gui.qt.workers.measure_job import MeasureJob


def test_progress_then_the_result_and_the_work_ran_off_the_gui_thread(qtbot):
    job = MeasureJob()
    seen: list[object] = []
    job.progressed.connect(seen.append)

    def work(progress, cancel):
        progress("half")
        return threading.current_thread() is threading.main_thread()

    with qtbot.assertNotEmitted(job.failed), qtbot.waitSignal(job.succeeded, timeout=5000) as done:
        job.start(work)
        assert job.running
    assert done.args == [False] and seen == ["half"] and not job.running


def test_cancel_reaches_the_work(qtbot):
    job = MeasureJob()
    started = threading.Event()

    def work(progress, cancel):
        started.set()
        if not cancel.wait(5):
            return "not cancelled"
        raise BudgetError("the measurement was cancelled")

    with qtbot.waitSignal(job.failed, timeout=10000) as failed:
        job.start(work)
        started.wait(5)
        job.cancel()
    assert failed.args == ["the measurement was cancelled"]


@pytest.mark.parametrize("error, line", [
    (BudgetError("llama.cpp exited with code 1: bad model\nmore"), "llama.cpp exited with code 1: bad model"),
    (OSError("disk full"), "disk full"),
    (TypeError("a bug"), "internal error: TypeError: a bug"),
])
def test_every_exception_answers_in_one_line(qtbot, error, line):
    job = MeasureJob()

    def work(progress, cancel):
        raise error

    with qtbot.waitSignal(job.failed, timeout=5000) as failed:
        job.start(work)
    assert failed.args == [line] and not job.running


def test_one_run_at_a_time(qtbot):
    job = MeasureJob()
    gate = threading.Event()
    with qtbot.waitSignal(job.succeeded, timeout=5000):
        job.start(lambda progress, cancel: gate.wait(5))
        with pytest.raises(RuntimeError, match="already running"):
            job.start(lambda progress, cancel: None)
        gate.set()
