"""`ImportAhead`: modules imported on a thread of their own, and what waits for them run on the GUI thread after.

Real modules written to a folder on `sys.path`, each noting the thread that ran it.
"""

from __future__ import annotations

import importlib
import sys
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QObject

from gguf_budget.gui.qt.workers.import_ahead import IMPORT_THREAD, ImportAhead

NOTES = "import_ahead_notes"


@pytest.fixture
def modules(tmp_path: Path, monkeypatch):
    """A folder of modules on `sys.path`; each appends the name of the thread importing it to a shared list."""
    (tmp_path / f"{NOTES}.py").write_text("threads = []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    yield tmp_path
    for name in [n for n in sys.modules if n.startswith("import_ahead_")]:
        del sys.modules[name]


def write(folder: Path, name: str, body: str = "") -> str:
    (folder / f"{name}.py").write_text(f"import threading, {NOTES}\n{NOTES}.threads.append(threading.current_thread().name)\n{body}")
    return name


def test_the_modules_are_imported_off_the_gui_thread_and_then_runs_on_it(qtbot, modules):
    names = (write(modules, "import_ahead_a"), write(modules, "import_ahead_b"))
    owner = QObject()
    ahead = ImportAhead(names, owner)
    ran_on: list[str] = []
    ahead.when_ready(lambda: ran_on.append(threading.current_thread().name))
    assert ran_on == [] and not ahead.ready()
    qtbot.waitUntil(lambda: ran_on != [], timeout=10000)
    assert ran_on == ["MainThread"] and ahead.ready()
    assert sys.modules[NOTES].threads == [IMPORT_THREAD, IMPORT_THREAD]
    ahead.when_ready(lambda: ran_on.append("at once"))
    assert ran_on == ["MainThread", "at once"]  # imported: runs at once, imports nothing again


def test_modules_imported_before_start_no_thread(modules):
    name = write(modules, "import_ahead_c")
    importlib.import_module(name)
    ran: list[bool] = []
    ImportAhead((name,)).when_ready(lambda: ran.append(True))
    assert ran == [True]
    assert sys.modules[NOTES].threads == ["MainThread"]


def test_a_failed_import_still_answers_and_its_error_meets_the_gui_thread(qtbot, modules):
    name = write(modules, "import_ahead_broken", "raise ValueError('broken on purpose')\n")
    errors: list[str] = []

    def then() -> None:
        try:
            importlib.import_module(name)
        except ValueError as e:
            errors.append(str(e))

    owner = QObject()
    ImportAhead((name,), owner).when_ready(then)
    qtbot.waitUntil(lambda: errors != [], timeout=10000)
    assert errors == ["broken on purpose"]
    assert sys.modules[NOTES].threads == [IMPORT_THREAD, "MainThread"]
