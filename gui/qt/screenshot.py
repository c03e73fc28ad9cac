"""`--screenshot`: the composed window, offscreen, saved as a PNG once it shows what was asked.

Rule 1: the window is composed whole (`app.compose`: the add-ons before the model opens), the model and the
        probe are waited for, `--preset`, `--priced` and `--view` are brought up, and the window is grabbed once
        the "Run it:" line has its last answer.
Rule 2: a URL is read afresh and kept nowhere: its header cache lives in the run's scratch folder.
Rule 3: the window is closed, its workers finished and it is destroyed while Qt is still up (no crash at exit).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

from PySide6.QtCore import QEvent, QEventLoop, QMessageLogContext, QSettings, QThreadPool, QTimer, QtMsgType, SignalInstance, qInstallMessageHandler
from PySide6.QtWidgets import QApplication

from gguf_budget.core.errors import BudgetError
from gguf_budget.core.quant.ladder import priced_variant
from gguf_budget.gui.qt.addons import Explorer
from gguf_budget.gui.qt.app import compose, launch_budget
from gguf_budget.gui.qt.main_window import MainWindow
from gguf_budget.gui.qt.qt_start import application
from gguf_budget.gui.qt.whatif.screens import prepare_view, shot_of

SCREENSHOT_SIZE = (1440, 900)
WAIT_MS = 60_000
POOL_WAIT_MS = 10_000


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
    explorer = compose(store, header_cache=settings_file.parent / "headers")  # Rule 2
    explorer.window.resize(*(getattr(options, "size", None) or SCREENSHOT_SIZE))
    explorer.window.show()
    try:
        return shoot(explorer, options)
    finally:
        _dispose(explorer.window)
        store.sync()  # nothing left to write when it is destroyed, after its folder is gone


def _dispose(window: MainWindow) -> None:
    """Rule 3."""
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
