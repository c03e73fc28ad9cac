"""Quitting the window joins nothing: no worker, no measurement; the process exits, stderr clean.

The real app runs in a child process (quitting ends the process, by design). What quitting waits on is
counted, not timed: from the moment the app stops its workers, the child marks every join the GUI thread
makes — of Qt's thread pool (`QThreadPool.waitForDone`), of a thread (`Thread.join`), of an event
(`Event.wait`, how a cancelled measurement was awaited) — and the process's end (`end_process`). With a
real llama-server measurement in flight, SIGTERM ends the app and the engine's process group ends with it.
No time is measured (`benchmarks/bench_launch.py` does).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from launch_watch import app_env

from llama_support import llama_engine
from runnable_model import write_runnable_model

from gguf_budget.core.measure.engine import EngineKind

JOINS = r"""
import sys
import threading
from pathlib import Path
from PySide6.QtCore import QThreadPool
import gguf_budget.gui.qt.app as app_module

marks = Path(sys.argv[1])
quitting = []

def counted(join, name):
    def joined(waited, *args, **kwargs):
        if quitting and threading.current_thread() is threading.main_thread():
            (marks / name).write_text("the app waited while quitting")
        return join(waited, *args, **kwargs)
    return joined

QThreadPool.waitForDone = counted(QThreadPool.waitForDone, "pool joined")
threading.Thread.join = counted(threading.Thread.join, "thread joined")
threading.Event.wait = counted(threading.Event.wait, "event awaited")
real_stop, real_end = app_module.stop_workers, app_module.end_process

def stop_workers(window):
    quitting.append(True)
    real_stop(window)

def end_process(code):
    (marks / "ended").write_text(str(code))
    real_end(code)

app_module.stop_workers, app_module.end_process = stop_workers, end_process
"""

WORKERS = JOINS + r"""
import time
from PySide6.QtCore import QTimer
from gguf_budget.gui.cli import main
from gguf_budget.gui.qt.workers.background import BackgroundCall
from gguf_budget.gui.qt.workers.progress_call import ProgressCall

opened = app_module.open_window

def stubborn():
    time.sleep(20)
    (marks / "stubborn finished").write_text("the app waited for a worker")

asked = []

def polite(progress, cancelled):
    asked.append(cancelled)
    (marks / "polite started").write_text("running")
    while not cancelled():
        time.sleep(0.01)

def told_then_ended(code):
    if asked[0]():
        (marks / "polite asked to stop").write_text("its call was dropped")
    end_process(code)

app_module.end_process = told_then_ended

def watched(options, *args, **kwargs):
    window = opened(options, *args, **kwargs)
    keep = []

    def drawn():
        window.modelLoaded.disconnect(drawn)
        slow = BackgroundCall(stubborn, parent=window)
        slow.start()
        call = ProgressCall("a test's work", window)
        call.start(polite)
        keep.extend([slow, call])
        QTimer.singleShot(20, close_once_running)

    def close_once_running():
        if not (marks / "polite started").exists():
            QTimer.singleShot(20, close_once_running)
            return
        print("closing", flush=True)
        window.close()

    window.modelLoaded.connect(drawn)
    return window

app_module.open_window = watched
sys.exit(main([]))
"""

MEASURING = JOINS + r"""
import psutil
from gguf_budget.gui.cli import main

def engine_started(*args, **kwargs):
    engine = real_popen(*args, **kwargs)
    print("engine", engine.pid, flush=True)
    return engine

real_popen, psutil.Popen = psutil.Popen, engine_started
opened = app_module.open_window

def watched(options, *args, composed, **kwargs):
    def measure(explorer):
        composed(explorer)
        explorer.evidence.measure()

    return opened(options, *args, composed=measure, **kwargs)

app_module.open_window = watched
sys.exit(main([sys.argv[2]]))
"""


def clean(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "propagateSizeHints" not in line]


def group_ends(leader: int) -> bool:
    """Whether the process group `leader` led (the measurement's session: /usr/bin/time and llama-server) empties."""
    for _ in range(600):
        try:
            os.killpg(leader, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_quitting_with_running_workers_joins_none_and_exits_cleanly(tmp_path: Path):
    marks = tmp_path / "marks"
    marks.mkdir()
    done = subprocess.run([sys.executable, "-c", WORKERS, str(marks)], capture_output=True, text=True,
                          env=app_env(tmp_path), timeout=120)
    assert "closing" in done.stdout, done.stderr[-2000:]
    assert done.returncode == 0 and clean(done.stderr) == [], done.stderr[-2000:]
    left = sorted(p.name for p in marks.iterdir())
    assert left == ["ended", "polite asked to stop", "polite started"]  # nothing joined: no pool, no thread, no event


def test_quitting_during_a_real_measurement_kills_its_engine_and_waits_for_neither(tmp_path: Path):
    server = llama_engine(EngineKind.SERVER)  # loads, serves one request, is stopped: the longest of the engines
    marks = tmp_path / "marks"
    marks.mkdir()
    model = write_runnable_model(tmp_path / "tiny.gguf")
    stderr = tmp_path / "stderr.txt"
    with stderr.open("w") as err_file:
        child = subprocess.Popen([sys.executable, "-c", MEASURING, str(marks), str(model)], stdout=subprocess.PIPE,
                                 stderr=err_file, text=True, env=app_env(tmp_path, GGUF_BUDGET_LLAMA_BIN=server.executable))
        line = child.stdout.readline()
        if not line.startswith("engine "):
            child.kill()
            raise AssertionError(f"no measurement: {line!r} {stderr.read_text()[-2000:]}")
        child.send_signal(signal.SIGTERM)
        child.communicate(timeout=120)
    err = stderr.read_text()
    assert child.returncode == 128 + signal.SIGTERM and clean(err) == ["gguf-budget: stopped by SIGTERM"], err[-2000:]
    assert sorted(p.name for p in marks.iterdir()) == ["ended"]  # nothing joined: no pool, no thread, no event
    assert group_ends(int(line.split()[1]))  # llama-server and what wrapped it died with the app
