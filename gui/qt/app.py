"""The composition root: builds the window, then installs its add-ons; runs it.

Rule 1: `compose` builds the `MainWindow` and installs every add-on on it at once (`addons.install_addons`),
        after the wheel guard (`wheel_guard`, idempotent) and before any model opens: what a test, a benchmark
        and `--screenshot` (`screenshot`) drive.
Rule 2: the interactive run logs to a rotating file in the platform's state folder
        (`log_file`); an exception nobody caught goes there with its traceback, and the window
        shows it (`error_report`: "Internal error — details in the log", nothing reset).
Rule 3: kept apart from `launch.py` so argument errors are reported without importing Qt.
Rule 4: the interactive run quits at once: the last window closed ends the event loop directly
        (`exit`, not Qt's `quit`, which asks every top-level widget to close once more: ~0.15 s of a quit
        on a loaded 2-core machine), every worker is told to stop and none is waited on, then the process
        ends without the interpreter's teardown (`workers.quitting`); `run_window` does not return.
Rule 5: SIGTERM, SIGHUP and Ctrl-C in the terminal end the interactive run as closing it does (`stop_signals`).
Rule 6: the interactive run (`open_window`) draws the first plan before it composes the add-ons: the window
        is built and shown and its model starts loading; in the event-loop turn after the plan area first
        painted a model (or after a failed load, or FIRST_PLAN_LATEST_MS after the load when nothing was
        painted: a window not exposed) the add-ons' modules and the goal search's are imported off the GUI
        thread (`ImportAhead`), and the add-ons installed once they are, each showing the model already open (`addons` Rule 2): the window
        answers a close meanwhile. The wheel guard is there from the start (the application's style, `qt_start`
        Rule 3), running Python for value widgets' events only. A URL or Hub reference is opened by
        the library add-on, so for one the add-ons are installed first.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable, NoReturn

from PySide6.QtCore import QEvent, QObject, QSettings, QTimer
from PySide6.QtGui import QDesktopServices

from gguf_budget.core import ModelSpec, load_model
from gguf_budget.core.machine.probe import REPROBE_IDLE_S, probe_hardware
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.remote.refs import names_remote
from gguf_budget.gui.qt.log_file import UrlOpener, default_log_folder, start_log_file, stop_log_file
from gguf_budget.gui.qt.main_window import BandwidthBackend, MainWindow, measure_bandwidths
from gguf_budget.gui.qt.qt_start import application
from gguf_budget.gui.qt.stop_signals import install_stop_signals
from gguf_budget.gui.qt.wheel_guard import install_wheel_guard
from gguf_budget.gui.qt.workers.import_ahead import ImportAhead
from gguf_budget.gui.qt.workers.quitting import end_process, stop_workers

if TYPE_CHECKING:
    from gguf_budget.gui.qt.addons import Explorer

FIRST_PLAN_LATEST_MS = 500
"""Rule 6: how long after the model loaded the add-ons wait for a paint that may never come."""
ADDONS_MODULE = "gguf_budget.gui.qt.addons"
AFTER_FIRST_PLAN = (ADDONS_MODULE, "gguf_budget.core.explorer.tune")
"""Rule 6: what is imported off the GUI thread after the first plan: the add-ons, and the goal search the window's
Goal control runs (`goal_control` Rule 5), so no later GUI-thread turn imports it."""


def compose(
    settings: QSettings | None = None,
    *,
    load_backend: Callable[[str], ModelSpec] = load_model,
    probe_backend: Callable[[], HardwareSnapshot] = probe_hardware,
    bandwidth_backend: BandwidthBackend = measure_bandwidths,
    compare_backend: Callable[[str], ModelSpec] = load_model,
    log_folder: Path | None = None,
    open_url: UrlOpener = QDesktopServices.openUrl,
    library_home: Path | None = None,
    library_config: Path | None = None,
    header_cache: Path | None = None,
    reprobe_s: int | None = REPROBE_IDLE_S,
) -> Explorer:
    """Rule 1: the window and its add-ons; Help ▸ Show log folder opens `log_folder`, or the platform's."""
    from gguf_budget.gui.qt.addons import install_addons

    install_wheel_guard()
    window = MainWindow(settings=settings, load_backend=load_backend, probe_backend=probe_backend,
                        bandwidth_backend=bandwidth_backend, reprobe_s=reprobe_s)
    return install_addons(window, compare_backend=compare_backend, log_folder=log_folder, open_url=open_url,
                          library_home=library_home, library_config=library_config, header_cache=header_cache)


class _AfterFirstPlan(QObject):
    """Rule 6: runs `then` once, in the turn after the plan area first painted a model (or the fallbacks)."""

    def __init__(self, window: MainWindow, then: Callable[[], None]):
        super().__init__(window)
        self._window, self._then, self._done = window, then, False
        window.ledger_chart().installEventFilter(self)
        window.loadFailed.connect(lambda _message: self._soon())
        window.modelLoaded.connect(lambda: QTimer.singleShot(FIRST_PLAN_LATEST_MS, self, self._now))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and self._window.session.state.model is not None:
            self._soon()
        return False

    def _soon(self) -> None:
        QTimer.singleShot(0, self, self._now)

    def _now(self) -> None:
        if not self._done:
            self._done = True
            self._window.ledger_chart().removeEventFilter(self)
            self._then()


def _nothing(_explorer: Explorer) -> None:
    """No one to tell that the add-ons are installed."""


def open_window(options: argparse.Namespace, settings: QSettings | None = None, log_folder: Path | None = None,
                composed: Callable[[Explorer], None] = _nothing) -> MainWindow:
    """Show the window and start loading FILE; `--budget`/`--ctx` apply once the model is planned. The add-ons
    follow the first plan (Rule 6); `composed` hears of them once they are installed."""

    def install() -> None:
        from gguf_budget.gui.qt.addons import install_addons

        composed(install_addons(window, log_folder=log_folder))

    def import_then_install() -> None:
        ImportAhead(AFTER_FIRST_PLAN, window).when_ready(install)

    window = MainWindow(settings=settings)
    if options.budget is not None or options.ctx is not None:
        def first_load() -> None:
            window.modelLoaded.disconnect(first_load)
            window.apply_request(launch_budget(options), options.ctx)

        window.modelLoaded.connect(first_load)
    window.show()
    if names_remote(str(options.file)):
        install()
    else:
        _AfterFirstPlan(window, import_then_install)
    window.open_path(options.file)
    return window


def launch_budget(options: argparse.Namespace) -> Budget | None:
    """`--budget SIZE` as the launcher read it (0 = unlimited), or None when not given."""
    return None if options.budget is None else Budget.from_cli(options.budget)


def run_window(options: argparse.Namespace) -> NoReturn:
    """The interactive app: runs until the window is closed, logging to the platform's state folder;
    then ends the process (Rule 4) with the event loop's exit code."""
    app = application()
    app.setQuitOnLastWindowClosed(False)
    app.lastWindowClosed.connect(lambda: app.exit(0))  # Rule 4
    install_stop_signals(app)
    folder = default_log_folder()
    handler = start_log_file(folder)

    def composed(explorer: Explorer) -> None:
        sys.excepthook = explorer.errors.hook

    try:
        window = open_window(options, log_folder=folder, composed=composed)
        code = app.exec()
        window.close()
        stop_workers(window)
    finally:
        sys.excepthook = sys.__excepthook__
        stop_log_file(handler)
    end_process(code)
