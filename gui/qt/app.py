"""The composition root: builds the window and installs its add-ons; runs it, or shoots it offscreen.

Rule 1: `compose` is the one place that knows both the window and what extends it: it builds
        the `MainWindow`, installs the what-if, library, Quants and runtime-evidence add-ons through the
        window's host protocols (Quants puts its switch in the what-if View menu), adds Help ▸ Glossary
        and Help ▸ Show log folder, and watches the open model's file (File ▸ Reload). Nothing else
        imports the add-ons into the window. It installs the app-wide wheel guard (`wheel_guard`)
        before any widget is built.
Rule 2: the interactive run logs to a rotating file in the platform's state folder
        (`log_file`); an exception nobody caught goes there with its traceback, and the window
        shows it (`error_report`: "Internal error — details in the log", nothing reset).
Rule 3: kept apart from `launch.py` so argument errors are reported without importing Qt.
Rule 4: the interactive run quits in well under a second: on close every worker is told to stop
        and none is waited on for long, then the process ends without the interpreter's teardown
        (`workers.quitting`); `run_window` does not return.
Rule 5: SIGTERM, SIGHUP and Ctrl-C in the terminal end the interactive run as closing it does (`stop_signals`).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, NoReturn, Sequence

from PySide6.QtCore import (
    QEvent, QEventLoop, QMessageLogContext, QSettings, QThreadPool, QTimer, QtMsgType, SignalInstance, qInstallMessageHandler,
)
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QApplication

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import ModelSpec, load_model
from gguf_budget.core.machine.probe import REPROBE_IDLE_S, probe_hardware
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.quant.ladder import priced_variant
from gguf_budget.core.errors import BudgetError
from gguf_budget.gui.qt.app_icon import app_icon
from gguf_budget.gui.qt.error_report import ErrorReport
from gguf_budget.gui.qt.log_file import LOG_NAME, UrlOpener, add_show_log_folder, default_log_folder, start_log_file, stop_log_file
from gguf_budget.gui.qt.file_watch import install_file_watch
from gguf_budget.gui.qt.glossary_dialog import add_glossary
from gguf_budget.gui.qt.machine.calibration_dialog import add_calibration
from gguf_budget.gui.qt.library.wiring import Library, install_library
from gguf_budget.gui.qt.main_window import BandwidthBackend, MainWindow, measure_bandwidths
from gguf_budget.gui.qt.quants.wiring import Quants, install_quants
from gguf_budget.gui.qt.whatif.screens import prepare_view, shot_of
from gguf_budget.gui.qt.whatif.wiring import WhatIf, install_whatif
from gguf_budget.gui.qt.evidence.evidence_link import EvidenceLink, install_evidence
from gguf_budget.gui.qt.stop_signals import install_stop_signals
from gguf_budget.gui.qt.wheel_guard import install_wheel_guard
from gguf_budget.gui.qt.workers.quitting import end_process, stop_workers

SCREENSHOT_SIZE = (1440, 900)
WAIT_MS = 60_000
POOL_WAIT_MS = 10_000

@dataclass(frozen=True)
class Explorer:
    """The app as `compose` builds it: the window and the add-ons installed on it."""

    window: MainWindow
    whatif: WhatIf
    library: Library
    quants: Quants
    evidence: EvidenceLink
    errors: ErrorReport


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
    """Rule 1: the window, its add-ons and Help ▸ Show log folder (`log_folder`, or the platform's)."""
    install_wheel_guard()
    window = MainWindow(settings=settings, load_backend=load_backend, probe_backend=probe_backend,
                        bandwidth_backend=bandwidth_backend, reprobe_s=reprobe_s)
    whatif = install_whatif(window, compare_backend)
    library = install_library(window, home=library_home, config_file=library_config, cache_root=header_cache)
    quants = install_quants(window, whatif.view_menu)
    evidence = install_evidence(window)
    folder = log_folder or default_log_folder()
    add_show_log_folder(window.help_menu, folder, open_url)
    add_glossary(window.help_menu)
    add_calibration(window.view_menu, window.refresh_speed_figures, window.show_status)
    install_file_watch(window, window.file_menu.menu, window.file_menu.recent_menu.menuAction())
    return Explorer(window, whatif, library, quants, evidence, ErrorReport(window, folder / LOG_NAME))


def application() -> QApplication:
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication([sys.argv[0]])
    app.setOrganizationName("gguf-budget")
    app.setApplicationName("gguf-budget")
    app.setApplicationDisplayName("GGUF Budget Explorer")
    app.setWindowIcon(app_icon())
    return app


def open_window(options: argparse.Namespace, settings: QSettings | None = None,
                log_folder: Path | None = None) -> Explorer:
    """Show the window and start loading FILE; `--budget`/`--ctx` apply once the model is planned."""
    explorer = compose(settings, log_folder=log_folder)
    window = explorer.window
    if options.budget is not None or options.ctx is not None:
        def first_load() -> None:
            window.modelLoaded.disconnect(first_load)
            window.apply_request(launch_budget(options), options.ctx)

        window.modelLoaded.connect(first_load)
    window.show()
    window.open_path(options.file)
    return explorer


def launch_budget(options: argparse.Namespace) -> Budget | None:
    """`--budget SIZE` as the launcher read it (0 = unlimited), or None when not given."""
    return None if options.budget is None else Budget.from_cli(options.budget)


def run_window(options: argparse.Namespace) -> NoReturn:
    """The interactive app: runs until the window is closed, logging to the platform's state folder;
    then ends the process (Rule 4) with the event loop's exit code."""
    app = application()
    install_stop_signals(app)
    folder = default_log_folder()
    handler = start_log_file(folder)
    try:
        explorer = open_window(options, log_folder=folder)
        sys.excepthook = explorer.errors.hook
        code = app.exec()
        explorer.window.close()
        stop_workers(explorer.window)
    finally:
        sys.excepthook = sys.__excepthook__
        stop_log_file(handler)
    end_process(code)


def _wait_for(done: Callable[[], bool], signals: Sequence[SignalInstance]) -> None:
    """Run the event loop until `done()` holds or WAIT_MS pass; each signal wakes the check."""
    loop = QEventLoop()
    for signal in signals:
        signal.connect(loop.quit)
    tick = QTimer(interval=100)
    tick.timeout.connect(loop.quit)
    tick.start()
    deadline = time.monotonic() + WAIT_MS / 1000
    while not done() and time.monotonic() < deadline:
        loop.exec()
    tick.stop()
    for signal in signals:
        signal.disconnect(loop.quit)


def _offscreen_messages(mode: QtMsgType, context: QMessageLogContext, message: str) -> None:
    """Qt's messages on stderr, less the offscreen platform's notice that it cannot resize hints."""
    if "propagateSizeHints" not in message:
        sys.stderr.write(message + "\n")


def run_screenshot(options: argparse.Namespace, settings_file: Path) -> str | None:
    """Render the window to `options.screenshot`; returns an error message, or None on success."""
    qInstallMessageHandler(_offscreen_messages)
    application()
    store = QSettings(str(settings_file), QSettings.Format.IniFormat)
    explorer = compose(store, header_cache=settings_file.parent / "headers")  # a URL is read afresh, kept nowhere
    explorer.window.resize(*(getattr(options, "size", None) or SCREENSHOT_SIZE))
    explorer.window.show()
    try:
        return shoot(explorer, options)
    finally:
        _dispose(explorer.window)
        store.sync()  # nothing left to write when it is destroyed, after its folder is gone


def _dispose(window: MainWindow) -> None:
    """Close, let the workers finish, and destroy the window while Qt is still up (no crash at exit)."""
    window.close()
    QThreadPool.globalInstance().waitForDone(POOL_WAIT_MS)
    window.deleteLater()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def shoot(explorer: Explorer, options: argparse.Namespace) -> str | None:
    """Open FILE (or the URL), wait for its plan and the probe, judge `--preset`'s machine, bring `--view` up
    and save the window as a PNG once the "Run it:" line has its last answer."""
    window = explorer.window
    failure: list[str] = []
    window.loadFailed.connect(failure.append)
    remote = explorer.library.url.worker
    remote.failed.connect(lambda message: failure.append(f"cannot open the URL: {message}"))
    window.open_path(options.file)
    _wait_for(lambda: bool(failure) or window.session.state.model is not None,
              (window.modelLoaded, window.loadFailed, remote.failed))
    model = window.session.state.model
    if failure or model is None:
        return failure[0] if failure else "the model did not load in time"
    _wait_for(lambda: window.session.state.machine is not None, (window.hardwareProbed,))
    _wait_for(window.bandwidths_measured, (window.bandwidthsMeasured,))
    if getattr(options, "preset", None):
        window.body.hardware.editor.set_preset(options.preset)
    if getattr(options, "priced", None):
        try:
            window.show_model(priced_variant(model, options.priced))
        except BudgetError as e:
            return str(e)
    window.apply_request(launch_budget(options), options.ctx)
    error = prepare_view(window, explorer.whatif, explorer.quants, options.view, options.compare, _wait_for)
    if error:
        return error
    _wait_for(lambda: not window.run_it.ladder_pending(), ())
    QApplication.processEvents()
    if not shot_of(window, explorer.quants, options.view).grab().save(options.screenshot, "PNG"):
        return f"could not write the screenshot to {options.screenshot}"
    return None
