"""The Qt application around the window: the interactive run, and the offscreen screenshot.

Kept apart from `launch.py` so argument errors are reported without importing Qt.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

from PySide6.QtCore import (
    QEvent, QEventLoop, QMessageLogContext, QSettings, QThreadPool, QTimer, QtMsgType, SignalInstance, qInstallMessageHandler,
)
from PySide6.QtWidgets import QApplication

from gguf_budget.gui.qt.app_icon import app_icon
from gguf_budget.gui.qt.main_window import MainWindow
from gguf_budget.gui.qt.whatif.screens import prepare_view

SCREENSHOT_SIZE = (1440, 900)
WAIT_MS = 60_000
POOL_WAIT_MS = 10_000


def application() -> QApplication:
    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setOrganizationName("gguf-budget")
    app.setApplicationName("gguf-budget")
    app.setApplicationDisplayName("GGUF Budget Explorer")
    app.setWindowIcon(app_icon())
    return app


def open_window(options: argparse.Namespace, settings: QSettings | None = None) -> MainWindow:
    """Show the window and start loading FILE; `--budget`/`--ctx` apply once the model is planned."""
    window = MainWindow(settings=settings)
    if options.budget is not None or options.ctx is not None:
        def first_load() -> None:
            window.modelLoaded.disconnect(first_load)
            window.apply_request(options.budget, options.ctx)

        window.modelLoaded.connect(first_load)
    window.show()
    window.open_path(options.file)
    return window


def run_window(options: argparse.Namespace) -> int:
    """The interactive app: runs until the window is closed."""
    app = application()
    window = open_window(options)
    code = app.exec()
    _dispose(window)
    return code


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
    window = MainWindow(settings=QSettings(str(settings_file), QSettings.Format.IniFormat))
    window.resize(*SCREENSHOT_SIZE)
    window.show()
    try:
        return _shoot(window, options)
    finally:
        _dispose(window)


def _dispose(window: MainWindow) -> None:
    """Close, let the workers finish, and destroy the window while Qt is still up (no crash at exit)."""
    window.close()
    QThreadPool.globalInstance().waitForDone(POOL_WAIT_MS)
    window.deleteLater()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def _shoot(window: MainWindow, options: argparse.Namespace) -> str | None:
    failure: list[str] = []
    window.loadFailed.connect(failure.append)
    window.open_path(options.file)
    _wait_for(lambda: bool(failure) or window.current_model() is not None,
              (window.modelLoaded, window.loadFailed))
    if failure or window.current_model() is None:
        return failure[0] if failure else "the model did not load in time"
    _wait_for(lambda: window.snapshot() is not None, (window.hardwareProbed,))
    window.apply_request(options.budget, options.ctx)
    error = prepare_view(window, window.whatif, options.view, options.compare, _wait_for)
    if error:
        return error
    QApplication.processEvents()
    if not window.grab().save(options.screenshot, "PNG"):
        return f"could not write the screenshot to {options.screenshot}"
    return None
