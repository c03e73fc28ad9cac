"""SIGTERM and SIGHUP stop a command as Ctrl-C does: `timeout`, `kill` and a closed terminal included.

Rule 1: while a command runs, SIGTERM and SIGHUP raise `Stopped` (a `KeyboardInterrupt`) in the main
        thread, where Ctrl-C would raise; every `finally` and every stop written for Ctrl-C runs —
        `measure` stops llama.cpp's family and removes its temporary folder, a scan stops its
        workers, a download removes its partial file.
Rule 2: the command then ends with one line, "gguf-budget: stopped by SIGTERM", and the exit code
        a shell reports for the signal (128 + its number).
Rule 3: the handlers are the command's only: the ones before are put back when it returns (the
        window installs its own, `gui.qt.stop_signals`).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class Stopped(KeyboardInterrupt):
    """Rule 1: a stop signal, raised where Ctrl-C would be."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    @property
    def words(self) -> str:
        return f"gguf-budget: stopped by {signal.Signals(self.signum).name}"

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def _raise(signum: int, frame: FrameType | None) -> None:
    raise Stopped(signum)


@contextmanager
def stop_signals_raise() -> Iterator[None]:
    """Rules 1 and 3 for the body of the `with` (in the main thread; elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {s: signal.signal(s, _raise) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
