"""After the first plan the GUI thread stays free to quit: it imports no module and builds the sweep chart a plot a turn.

Quitting is answered between two event-loop turns, so the longest turn after the first plan is what a close may
wait for. Counted, not timed, in the real app (a child process, the bundled demo, the sweep dock in front as on
every launch): every module first imported after the plan was painted, and by which thread (the add-ons' modules,
pyqtgraph and numpy: ~0.6 s of imports, 2.5 s on a loaded 2-core machine; a first launch imports numpy earlier, off
the GUI thread, to measure the bandwidths); the sweep chart's plots built in each turn, a turn being marked by a
zero-interval timer. The old code imported them all on the GUI thread and built the chart's four plots in one turn.
Everything still appears: the add-ons install and the chart draws the sweep.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from launch_watch import app_env

AFTER_FIRST_PLAN = r"""
import json
import sys
import threading
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget
import gguf_budget.gui.qt.app as app_module
from gguf_budget.gui.cli import main

seen = {"imported on the GUI thread": [], "imported off it": [], "plots a turn": [], "add-ons": False}
painted = []

class Imports:
    def find_spec(self, name, path=None, target=None):
        if painted and name not in sys.modules:
            on_gui = threading.current_thread() is threading.main_thread()
            seen["imported on the GUI thread" if on_gui else "imported off it"].append(name)
        return None

sys.meta_path.insert(0, Imports())
opened = app_module.open_window

class FirstPaint(QObject):
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint and window.session.state.model is not None:
            painted.append(True)
        return False

def watched(options, *args, composed, **kwargs):
    global window
    built = [0]

    def turn():
        chart = window.findChild(QWidget, "sweepChart")
        plots = 0 if chart is None else len(chart.plots)
        seen["plots a turn"].append(plots - built[0])
        built[0] = plots
        if chart is not None and chart.result() is not None:
            ticks.stop()
            for where in ("imported on the GUI thread", "imported off it"):  # not a name looked for and not found
                seen[where] = [name for name in seen[where] if name in sys.modules]
            print(json.dumps(seen), flush=True)
            window.close()

    def installed(explorer):
        composed(explorer)
        seen["add-ons"] = True

    window = opened(options, *args, composed=installed, **kwargs)
    window.ledger_chart().installEventFilter(FirstPaint(window))
    ticks = QTimer(window, interval=0)
    ticks.timeout.connect(turn)
    ticks.start()
    return window

app_module.open_window = watched
sys.exit(main([]))
"""


def test_after_the_first_plan_the_gui_thread_imports_nothing_and_builds_a_plot_a_turn(tmp_path: Path):
    done = subprocess.run([sys.executable, "-c", AFTER_FIRST_PLAN], capture_output=True, text=True,
                          env=app_env(tmp_path), timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["add-ons"]
    assert {"gguf_budget.gui.qt.addons", "pyqtgraph"} <= set(seen["imported off it"])
    assert seen["imported on the GUI thread"] == []
    assert sum(seen["plots a turn"]) == 4 and max(seen["plots a turn"]) == 1
