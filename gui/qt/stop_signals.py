"""The window ends on SIGTERM, SIGHUP and the terminal's Ctrl-C as it ends when closed.

Qt's event loop runs in C++, so a Python signal handler would wait for the next Python code on the main
thread: Ctrl-C raised `KeyboardInterrupt` inside whatever slot ran next (a traceback, an internal-error
dialog, and the window stayed), and SIGTERM ended the process without stopping a scan's workers.

Rule 1: the three signals are written to a socket the event loop watches (`signal.set_wakeup_fd`);
        the slot that reads it closes the window's event loop with 128 + the signal's number, and
        the app then quits as it does when closed (settings written, work told to stop, a
        measurement's llama.cpp stopped, `workers.quitting`).
Rule 2: it says so in one line on stderr: "gguf-budget: interrupted" for Ctrl-C, "gguf-budget:
        stopped by SIGTERM" for the others.
"""

from __future__ import annotations

import signal
import socket
import sys

from PySide6.QtCore import QObject, QSocketNotifier
from PySide6.QtWidgets import QApplication

SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def words(signum: int) -> str:
    """Rule 2."""
    if signum == signal.SIGINT:
        return "gguf-budget: interrupted"
    return f"gguf-budget: stopped by {signal.Signals(signum).name}"


class StopSignals(QObject):
    """Rule 1 for one application; kept alive by its parent, the application."""

    def __init__(self, app: QApplication):
        super().__init__(app)
        self._app = app
        self._read, self._write = socket.socketpair()
        for end in (self._read, self._write):
            end.setblocking(False)
        signal.set_wakeup_fd(self._write.fileno(), warn_on_full_buffer=False)
        for signum in SIGNALS:
            signal.signal(signum, lambda *_: None)
        self._notifier = QSocketNotifier(self._read.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._woken)

    def _woken(self) -> None:
        try:
            received = self._read.recv(64)
        except OSError:
            return
        if received:
            signum = received[0]
            sys.stderr.write(words(signum) + "\n")
            self._app.exit(128 + signum)


def install_stop_signals(app: QApplication) -> StopSignals:
    return StopSignals(app)
