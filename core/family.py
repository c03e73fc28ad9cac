"""Child processes die with the process that started them, however it ends (SIGKILL included).

A `library` scan's worker processes each hold their own end of the pool's queue, so they never see
it close: a `library` or a window ended by SIGTERM left them waiting forever. A `measure` killed
outright left llama.cpp running under /usr/bin/time. So every child is tied to its parent's life.

Rule 1: a Python child calls `die_with_parent(parent)` first (a pool's initializer): on Linux it asks
        the kernel for SIGKILL when its parent dies (`prctl(PR_SET_PDEATHSIG)` through ctypes); where
        that is not available a watchdog thread ends it once its parent has changed (polled every
        `WATCH_S`). Either way, a parent that died before the call ends the child at once.
Rule 2: a program that is not Python is started through `setpriv --pdeathsig KILL` where util-linux
        has it (`tied_to_parent`), which sets the same signal and then becomes the program; a wrapper
        that starts the program as its own child (/usr/bin/time) is tied itself, and ties the program
        in turn, so each link dies with the one before.
Rule 3: the kernel sends the signal when the *thread* that started the child ends, so a child is
        started by the thread that waits for it (the scan's pool and the measurement's engine are).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1
WATCH_S = 0.5
SETPRIV = "setpriv"


def _parent_death_signal() -> bool:
    """Rule 1 on Linux: SIGKILL when the parent dies; False where the kernel cannot be asked."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # the process's own symbols: libc's prctl among them
        return bool(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_S)
    os._exit(1)


def die_with_parent(parent: int) -> None:
    """Rule 1: end this process when `parent` (the pid that started it) ends."""
    if not _parent_death_signal():
        threading.Thread(target=_watch, args=(parent,), daemon=True, name="parent-watch").start()
    if os.getppid() != parent:
        os._exit(1)


def tied_to_parent(argv: tuple[str, ...]) -> tuple[str, ...]:
    """Rule 2: `argv` started so that it dies with the process that starts it, where the system allows."""
    if not sys.platform.startswith("linux"):
        return argv
    setpriv = shutil.which(SETPRIV)
    return (setpriv, "--pdeathsig", "KILL", *argv) if setpriv else argv
