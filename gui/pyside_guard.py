"""A guard against a PySide6 reference-count bug that aborts the app after a few thousand Qt calls.

PySide6 6.12.0 returns Python's singletons without taking a reference to them: every void
C++ method (`update()`, `setText()`, `QTimer.stop()`, …) hands back None, and every
`Signal.emit()` hands back True, each one reference short. On Python ≤ 3.11 the counts reach
0 after a few thousand calls — seconds of dragging a slider — and CPython aborts with
"none_dealloc: deallocating None" (or "bool_dealloc"). Python 3.12 made the singletons
immortal, which hides the bug.

Rule 1: the guard measures the leak (a few void calls and emits) instead of trusting version
        numbers, so it does nothing on a fixed PySide6 or a Python with immortal singletons.
Rule 2: where they leak, None, True and False each get a reserve of RESERVE references once —
        what 3.12's immortality amounts to (they are static objects, never freed anyway). At
        one reference per call the reserve outlasts centuries of continuous redrawing.
Rule 3: `install()` is idempotent; the window modules call it at import.
"""

from __future__ import annotations

import ctypes
import sys

from PySide6.QtCore import QObject, QTimer, Signal

RESERVE = 1 << 48
SINGLETONS = (None, True, False)
_PROBE_CALLS = 16


class _Probe(QObject):
    ping = Signal()


def leaks_per_call() -> dict[str, int]:
    """References lost per void call (to None) and per emit (to True); zeros on a healthy PySide6."""
    timer, probe = QTimer(), _Probe()
    none_before, true_before = sys.getrefcount(None), sys.getrefcount(True)
    for _ in range(_PROBE_CALLS):
        timer.stop()
        probe.ping.emit()
    return {"None": max(0, (none_before - sys.getrefcount(None)) // _PROBE_CALLS),
            "True": max(0, (true_before - sys.getrefcount(True)) // _PROBE_CALLS)}


def _reserve(obj: object) -> bool:
    count = ctypes.c_ssize_t.from_address(id(obj))  # ob_refcnt leads every PyObject in release builds
    before = sys.getrefcount(obj)
    count.value += RESERVE
    if sys.getrefcount(obj) - before != RESERVE:  # another object layout: undo, leave it alone
        count.value -= RESERVE
        return False
    return True


def install() -> bool:
    """Give the singletons their reserve if Qt calls leak them (and they have none yet); True if given now."""
    if sys.getrefcount(None) >= RESERVE // 2 or not any(leaks_per_call().values()):
        return False
    return all([_reserve(obj) for obj in SINGLETONS])
