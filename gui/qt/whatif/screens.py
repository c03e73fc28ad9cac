"""Screenshots of the docks: `gguf-budget FILE --screenshot PNG --view sweep|compare|quants [--compare FILE2]`.

Rule 1: `plan` (the default) hides every dock: the plan alone. `sweep` raises the
        sweep dock and waits until the sweep of the plan on screen is drawn; `compare` raises
        the compare dock, loads FILE2 as the second model and waits for both ledgers; `quants`
        shows the Quants view and waits until the ladder is judged for the machine on screen.
Rule 2: the raised dock gets SCREENSHOT_DOCK_HEIGHT pixels so its chart or table is legible
        in a 1440×900 screenshot, at most the window's dock share (`window_size.dock_height`) and
        no more than the window's own minimum leaves it, so the shot is the size asked.
Rule 3: a failure (FILE2 does not load or cannot be planned, the sweep fails, or nothing
        answers in time) comes back as a one-line message for the caller to report.
Rule 4: the Quants view is a full-size view, its own window: `quants` shoots that window, at the size asked.
"""

from __future__ import annotations

from typing import Callable, Sequence

from PySide6.QtCore import QSize, Qt, SignalInstance
from PySide6.QtWidgets import QDockWidget, QMainWindow, QWidget

from gguf_budget.core.explorer.window_size import dock_height
from gguf_budget.gui.qt.quants.wiring import Quants
from gguf_budget.gui.qt.whatif.wiring import WhatIf

SCREENSHOT_DOCK_HEIGHT = 320
Wait = Callable[[Callable[[], bool], Sequence[SignalInstance]], None]


def prepare_view(window: QMainWindow, whatif: WhatIf, quants: Quants, view: str, compare_file: str | None,
                 wait: Wait) -> str | None:
    """Bring `view` on screen and wait for its numbers; a one-line error, or None when ready."""
    wanted = window.size()
    if view == "sweep":
        return _sweep(window, whatif, wait, wanted)
    if view == "compare":
        return _compare(window, whatif, compare_file, wait, wanted)
    if view == "quants":
        return _quants(window, quants, wait, wanted)
    for dock in window.findChildren(QDockWidget):  # every add-on's dock, not only the what-if ones
        dock.hide()
    return None


def _raise(window: QMainWindow, dock: QDockWidget) -> None:
    dock.show()
    dock.raise_()
    height = dock_height(SCREENSHOT_DOCK_HEIGHT, window.height())
    dock.widget().setMinimumHeight(height)  # the window exits after the shot
    window.resizeDocks([dock], [height], Qt.Orientation.Vertical)


def _within(window: QMainWindow, dock: QDockWidget, wanted: QSize) -> None:
    """Rule 2's last clause, once the dock's contents are drawn: lower its minimum by what the window lacks, and
    give the window back its asked size."""
    layout = window.layout()
    assert layout is not None  # a QMainWindow always has its own
    layout.activate()
    excess = window.minimumSizeHint().height() - wanted.height()
    if excess > 0:
        widget = dock.widget()
        widget.setMinimumHeight(max(widget.minimumHeight() - excess, widget.minimumSizeHint().height()))
        layout.invalidate()
        layout.activate()
        window.resize(wanted)


def _sweep(window: QMainWindow, whatif: WhatIf, wait: Wait, wanted: QSize) -> str | None:
    _raise(window, whatif.sweep_dock)
    sweep, failures = whatif.sweep, list[str]()
    sweep.sweepFailed.connect(failures.append)
    wait(lambda: bool(failures) or (sweep.result() is not None and not sweep.worker.busy),
         (sweep.sweepFinished, sweep.sweepFailed))
    if failures:
        return f"the sweep failed: {failures[0]}"
    _within(window, whatif.sweep_dock, wanted)
    return None if sweep.result() is not None else "the sweep did not finish in time"


def _compare(window: QMainWindow, whatif: WhatIf, compare_file: str | None, wait: Wait, wanted: QSize) -> str | None:
    if not compare_file:
        return "--view compare needs --compare FILE (the second model)"
    _raise(window, whatif.compare_dock)
    compare, failures, loaded = whatif.compare, list[str](), list[bool]()
    compare.secondFailed.connect(failures.append)
    compare.secondLoaded.connect(lambda: loaded.append(True))
    compare.open_second(compare_file)
    wait(lambda: bool(failures or loaded), (compare.secondLoaded, compare.secondFailed))
    if failures:
        return f"the second model cannot be compared: {failures[0]}"
    _within(window, whatif.compare_dock, wanted)
    return None if loaded else "the second model did not load in time"


def _quants(window: QMainWindow, quants: Quants, wait: Wait, wanted: QSize) -> str | None:
    for dock in window.findChildren(QDockWidget):
        dock.hide()
    quants.dock.show()
    quants.dock.resize(wanted)  # Rule 4: the Quants view is its own window, shot at the size asked
    follower = quants.follower
    follower.judge_now()  # the controls were set a moment ago: judge them now, not after the settle timer
    wait(lambda: follower.ladder() is not None and not follower.busy(), ())
    return None if follower.ladder() is not None else "the quant ladder was not priced in time"


def shot_of(window: QMainWindow, quants: Quants, view: str) -> QWidget:
    """Rule 4: what `view` is a picture of: the Quants view's own window, else the main window."""
    return quants.dock if view == "quants" else window
