"""The guard against PySide6 dropping references to None/True/False keeps a long session alive."""

from __future__ import annotations

import os
import subprocess
import sys

from gguf_budget.gui import pyside_guard

STORM = """
import sys
from PySide6.QtCore import QObject, QTimer, Signal
{setup}
class Source(QObject):
    ping = Signal()
timer, source = QTimer(), Source()
for _ in range(300_000):
    timer.stop()
    source.ping.emit()
print("alive", sys.getrefcount(None) > 1 << 40)
"""


def run_storm(setup: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([sys.executable, "-c", STORM.format(setup=setup)], env=env, capture_output=True,
                          text=True, timeout=120)


def test_a_storm_of_void_calls_and_emits_survives_once_the_window_module_is_imported():
    done = run_storm("import gguf_budget.gui.main_window")
    assert done.returncode == 0, done.stderr[-400:]
    leaking = any(pyside_guard.leaks_per_call().values())
    assert done.stdout.strip() == f"alive {leaking}"


def test_without_the_guard_a_leaking_pyside_aborts_and_a_healthy_one_does_not():
    done = run_storm("")
    if any(pyside_guard.leaks_per_call().values()):
        assert done.returncode != 0 and "dealloc" in done.stderr
    else:
        assert done.returncode == 0


def test_install_is_idempotent():
    pyside_guard.install()
    before = sys.getrefcount(None)
    assert pyside_guard.install() is False
    assert abs(sys.getrefcount(None) - before) < 1000
