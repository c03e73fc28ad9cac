"""File dialogs open where the person last was (issue 25, item 6): one remembered folder per purpose,
kept with the window's settings, never the process's current directory.

Qt's static dialogs block in their own event loop, so the dialog function is replaced by one that
records the folder it was asked to start in and answers as a person would."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from gui_support import child, open_model
from PySide6.QtWidgets import QFileDialog

from gguf_budget.core.model.catalogue import catalogue_path, find_entry

LLAMA_1B = catalogue_path(find_entry("llama-3.2-1b-instruct"))


class Person:
    """Answers the next file dialog with `answer`, writing down where it started."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.started: list[str] = []
        self.answer = ""
        for name in ("getOpenFileName", "getSaveFileName"):
            monkeypatch.setattr(QFileDialog, name, self._file)
        monkeypatch.setattr(QFileDialog, "getExistingDirectory", self._folder)

    def _file(self, _parent, _title, start, _filter="") -> tuple[str, str]:
        self.started.append(start)
        return self.answer, ""

    def _folder(self, _parent, _title, start) -> str:
        self.started.append(start)
        return self.answer


@pytest.fixture
def elsewhere(tmp_path, monkeypatch) -> Path:
    """The process runs in a folder of its own: a dialog must not start there."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return cwd


def test_open_starts_at_home_then_where_the_last_model_was_also_after_a_restart(
        qtbot, make_window, settings_store, monkeypatch, tmp_path, elsewhere):
    person = Person(monkeypatch)
    window = make_window()
    (tmp_path / "models").mkdir()
    person.answer = shutil.copy(LLAMA_1B, tmp_path / "models" / "m.gguf")
    with qtbot.waitSignal(window.modelLoaded, timeout=10000):
        window.file_menu.choose()
    assert person.started == [str(Path.home())] and person.started[0] != str(elsewhere)
    person.answer = ""
    window.file_menu.choose()
    assert person.started[-1] == str(tmp_path / "models")
    window.close()
    again = make_window(settings_store)
    again.file_menu.choose()
    assert person.started[-1] == str(tmp_path / "models")


def test_each_purpose_remembers_its_own_folder_and_a_deleted_folder_is_forgotten(
        qtbot, make_explorer, monkeypatch, tmp_path, elsewhere):
    person = Person(monkeypatch)
    app = make_explorer()
    window = app.window
    open_model(qtbot, window, LLAMA_1B)
    exports = tmp_path / "exports"
    exports.mkdir()
    person.answer = str(exports / "report.md")
    app.whatif.export_menu.choose("markdown")
    assert person.started == [str(Path.home() / "llama-3.2-1b-instruct-q4_k_m.skeleton-plan.md")]
    assert (exports / "report.md").is_file()
    person.answer = ""
    app.whatif.export_menu.choose("json")
    assert person.started[-1] == str(exports / "llama-3.2-1b-instruct-q4_k_m.skeleton-plan.json")
    window.file_menu.choose()                                        # models have their own folder
    assert person.started[-1] == str(Path.home())
    exports.joinpath("report.md").unlink()
    exports.rmdir()
    app.whatif.export_menu.choose("json")
    assert person.started[-1] == str(Path.home() / "llama-3.2-1b-instruct-q4_k_m.skeleton-plan.json")


def test_the_library_remembers_the_folder_it_added(qtbot, make_explorer, monkeypatch, tmp_path, elsewhere):
    person = Person(monkeypatch)
    app = make_explorer()
    added = tmp_path / "my-models"
    added.mkdir()
    person.answer = str(added)
    child(app.window, "libraryAddFolder").click()
    qtbot.waitUntil(lambda: not app.library.view.worker.busy, timeout=20000)
    person.answer = ""
    child(app.window, "libraryAddFolder").click()
    assert person.started == [str(Path.home()), str(added)]
