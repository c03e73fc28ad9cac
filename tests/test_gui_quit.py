"""Quitting the window: workers are told to stop and are not waited on; the process exits 0, stderr clean.

The real app runs in a child process (quitting ends the process, by design). Once its first plan
is drawn, two works start on the thread pool — one that never looks at a flag and sleeps far
longer than any wait, one that stops when its call is dropped — and once the second runs, the
window is closed. Each
leaves a file: what it did tells whether the app asked it to stop and whether it waited for it.
No time is measured (`benchmarks/bench_launch.py` does).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import sys, time
from pathlib import Path
from PySide6.QtCore import QTimer
import gguf_budget.gui.qt.app as app_module
from gguf_budget.gui.cli import main
from gguf_budget.gui.qt.workers.background import BackgroundCall
from gguf_budget.gui.qt.workers.progress_call import ProgressCall

marks = Path(sys.argv[1])
opened = app_module.open_window

def stubborn():
    time.sleep(20)
    (marks / "stubborn finished").write_text("the app waited for a worker")

def polite(progress, cancelled):
    (marks / "polite started").write_text("running")
    while not cancelled():
        time.sleep(0.01)
    (marks / "polite stopped").write_text("asked to stop")

def watched(options, *args, **kwargs):
    explorer = opened(options, *args, **kwargs)
    window = explorer.window
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
    return explorer

app_module.open_window = watched
sys.exit(main([]))
"""


def test_quitting_with_running_workers_stops_them_waits_for_none_and_exits_cleanly(tmp_path: Path):
    marks = tmp_path / "marks"
    marks.mkdir()
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", CHILD, str(marks)], capture_output=True, text=True, env=env,
                          timeout=120)
    stderr = [line for line in done.stderr.splitlines() if "propagateSizeHints" not in line]
    assert "closing" in done.stdout, done.stderr[-2000:]
    assert done.returncode == 0 and stderr == [], done.stderr[-2000:]
    assert (marks / "polite stopped").exists()
    assert not (marks / "stubborn finished").exists()
