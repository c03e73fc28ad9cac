"""The Library dock and File ▸ Open URL… on real widgets: scan a real store tree, open from it, read a URL.

The store tree is built in a temporary home (a Hugging Face cache and an added folder); the URL is
served by a loopback HTTP server with Range support.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from gguf_factory import ArchDesc, write_gguf
from gui_support import WIDE, open_model
from http_models import Served
from PySide6.QtCore import Qt

from gguf_budget.core.library.config import add_folder

TINY = ArchDesc(name="tiny-llama", n_layer=2, n_embd=64, n_ff=128, n_head=2, n_head_kv=1, n_vocab=256,
                context_length=2048)


@pytest.fixture
def store(tmp_path) -> Path:
    """A Hugging Face cache in the test's library home, plus an added folder with a FIFO beside a model."""
    home = tmp_path / "library-home"
    snap = home / ".cache" / "huggingface" / "hub" / "models--owner--tiny-GGUF" / "snapshots" / ("a" * 40)
    blobs = snap.parent.parent / "blobs"
    snap.mkdir(parents=True)
    blobs.mkdir()
    source = write_gguf(tmp_path / "tiny.gguf", TINY, "header_only")[0]
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    (blobs / digest).write_bytes(source.read_bytes())
    os.symlink(f"../../blobs/{digest}", snap / "tiny-Q8_0.gguf")
    mine = tmp_path / "mine"
    mine.mkdir()
    write_gguf(mine / "wide.gguf", WIDE, "header_only")
    os.mkfifo(mine / "pipe.gguf")
    add_folder(mine, tmp_path / "library.json")
    return home


def rows(view) -> dict[str, list[str]]:
    model = view.table
    return {model.index(r, 0).data(): [model.index(r, c).data() for c in range(model.columnCount())]
            for r in range(model.rowCount())}


def scanned(qtbot, library) -> None:
    with qtbot.waitSignal(library.view.worker.succeeded, timeout=20000):
        library.library_action.trigger()


def test_file_library_shows_the_dock_and_scans_every_store(qtbot, make_explorer, store):
    explorer = make_explorer()
    library = explorer.library
    qtbot.waitUntil(lambda: explorer.window.session.state.machine is not None)
    assert library.dock.isHidden()
    scanned(qtbot, library)
    assert library.dock.isVisible()
    table = rows(library.view)
    assert set(table) == {"owner/tiny-GGUF · tiny-Q8_0.gguf", "wide.gguf", "pipe.gguf"}
    assert table["owner/tiny-GGUF · tiny-Q8_0.gguf"][1] == "huggingface"
    assert "fits CPU-only" in table["wide.gguf"][4] and "largest ctx that fits 4,096" in table["wide.gguf"][4]
    assert "pinned" in table["wide.gguf"][5]
    assert table["pipe.gguf"][4].startswith("unreadable: ") and "not a regular file" in table["pipe.gguf"][4]
    assert "3 models in 2 folders, 1 unreadable" == library.view.status.text()


def test_filter_sort_and_double_click_open_the_model(qtbot, make_explorer, store):
    explorer = make_explorer()
    library = explorer.library
    qtbot.waitUntil(lambda: explorer.window.session.state.machine is not None)
    scanned(qtbot, library)
    library.view.filter.setText("TINY")
    assert list(rows(library.view)) == ["owner/tiny-GGUF · tiny-Q8_0.gguf"]
    with qtbot.waitSignal(explorer.window.modelLoaded, timeout=10000):
        library.view.view.doubleClicked.emit(library.view.table.index(0, 0))
    assert explorer.window.session.state.model.n_layer == TINY.n_layer
    library.view.filter.setText("")
    library.view.view.sortByColumn(3, Qt.SortOrder.DescendingOrder)
    assert list(rows(library.view))[0] == "wide.gguf"


def test_an_unreadable_row_does_not_replace_the_model_on_screen(qtbot, make_explorer, write_model, store):
    explorer = make_explorer()
    library = explorer.library
    model = open_model(qtbot, explorer.window, write_model())
    scanned(qtbot, library)
    library.view.filter.setText("pipe")
    with qtbot.assertNotEmitted(explorer.window.modelLoaded, wait=200):
        library.view.view.doubleClicked.emit(library.view.table.index(0, 0))
    assert explorer.window.session.state.model is model
    assert "Cannot open pipe.gguf" in library.view.status.text()


def test_cancel_stops_the_scan_and_says_so(qtbot, make_explorer, store):
    explorer = make_explorer()
    library = explorer.library
    qtbot.waitUntil(lambda: explorer.window.session.state.machine is not None)
    with qtbot.waitSignal(library.view.worker.cancelled, timeout=5000):
        library.library_action.trigger()
        library.view.cancel_button.click()
    assert library.view.status.text() == "Scan cancelled" and library.view.scan_button.isEnabled()


def test_open_url_reads_the_header_and_opens_the_model(qtbot, make_explorer, httpserver, tmp_path):
    source = write_gguf(tmp_path / "remote.gguf", WIDE, "complete")[0]
    served = Served(source)
    httpserver.expect_request("/models/remote.gguf").respond_with_handler(served.handler)
    url = httpserver.url_for("/models/remote.gguf")
    explorer = make_explorer()
    with qtbot.waitSignal(explorer.window.modelLoaded, timeout=20000):
        explorer.library.url.open(url)
    assert explorer.window.session.state.model.n_layer == WIDE.n_layer
    assert 0 < served.sent < source.stat().st_size
    qtbot.waitUntil(lambda: "header read over the network" in explorer.window.messages.current())


def test_a_bad_url_is_one_line_and_keeps_the_model(qtbot, make_explorer, write_model, httpserver):
    explorer = make_explorer()
    model = open_model(qtbot, explorer.window, write_model())
    httpserver.expect_request("/gone.gguf").respond_with_data("no", status=404)
    with qtbot.waitSignal(explorer.library.url.worker.failed, timeout=20000):
        explorer.library.url.open(httpserver.url_for("/gone.gguf"))
    assert explorer.window.session.state.model is model
    assert "not found (404)" in explorer.window.messages.current()
    explorer.library.url.open("not a url at all")
    assert "Cannot open" in explorer.window.messages.current()


def test_file_menu_has_open_url_and_library(make_explorer):
    window = make_explorer().window
    names = [a.objectName() for a in window.file_menu.menu.actions()]
    assert "openUrlAction" in names and "libraryAction" in names


def test_adding_a_folder_where_the_folder_list_cannot_be_written_is_one_line(make_explorer, tmp_path):
    """The config folder is a file: `library --add` was a traceback, the window's Add an internal error."""
    library = make_explorer().library
    (tmp_path / "not-a-folder").write_text("a file")
    library.view._config_file = tmp_path / "not-a-folder" / "library.json"
    library.view.add_folder(tmp_path)
    assert library.view.status.text() == (f"Cannot add {tmp_path}: a file is where a folder should be: "
                                          f"{tmp_path / 'not-a-folder'}")


def test_a_scan_of_50000_files_sends_the_window_a_few_hundred_progress_reports(qtbot):
    """Every file's report crossed to the window's thread: 50,000 queued events for a first scan."""
    from gguf_budget.gui.qt.workers.progress_call import PROGRESS_STEPS, ProgressCall

    def work(progress, cancelled):
        for done in range(50_001):
            progress(done, 50_000)
        return "scanned"

    call = ProgressCall("scanning")
    seen: list[tuple[int, int]] = []
    call.progress.connect(lambda done, total: seen.append((done, total)))
    with qtbot.waitSignal(call.succeeded, timeout=20000):
        call.start(work)
    assert len(seen) <= PROGRESS_STEPS + 2 and seen[0] == (0, 50_000) and seen[-1] == (50_000, 50_000)
    assert all(b[0] > a[0] for a, b in zip(seen, seen[1:], strict=False))


def test_only_the_rows_shown_are_judged_with_a_thousand_models(qtbot, tmp_path, monkeypatch):
    """Verdicts are judged when a row is shown (table.py Rule 5): counted by the models `assess` is asked about."""
    import shutil

    import gguf_budget.gui.qt.library.dock as dock_module
    from gguf_budget.core.library.assess import LibrarySettings
    from gguf_budget.core.plan.budget import Budget
    from gguf_budget.gui.qt.library.dock import LibraryView
    from gui_support import small_machine

    source = write_gguf(tmp_path / "tiny.gguf", TINY, "header_only")[0]
    folder = tmp_path / "many"
    for i in range(1000):
        (folder / f"d{i // 100}").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, folder / f"d{i // 100}" / f"m{i:04d}.gguf")
    add_folder(folder, tmp_path / "library.json")
    asked: list[str] = []
    real = dock_module.assess
    monkeypatch.setattr(dock_module, "assess", lambda spec, settings: asked.append(spec.path) or real(spec, settings))
    settings = LibrarySettings(small_machine(), Budget.of(4 << 30))
    view = LibraryView(lambda: settings, tmp_path / "home", tmp_path / "library.json")
    qtbot.addWidget(view)
    view.resize(900, 500)
    view.show()
    qtbot.waitExposed(view)
    with qtbot.waitSignal(view.worker.succeeded, timeout=120000):
        view.rescan()
    table, grid = view.table, view.view

    def shown() -> set[str]:
        inside = grid.viewport().rect()
        return {table.entry(r).path for r in range(table.rowCount())
                if grid.visualRect(table.index(r, 0)).intersects(inside)}

    qtbot.waitUntil(lambda: bool(asked))
    first = shown()
    assert table.rowCount() == 1000 and 5 < len(first) < 50
    assert set(asked) == first and len(asked) == len(first)  # the rows painted, each once, nothing else
    grid.scrollToBottom()
    qtbot.waitUntil(lambda: len(asked) > len(first))
    last = shown()
    assert set(asked) == first | last and len(asked) == len(first | last) < 100
    assert all("fits" in table.index(r, 4).data() or "won't" in table.index(r, 4).data()
               for r in range(table.rowCount() - 3, table.rowCount()))
    before = len(asked)
    with qtbot.waitSignal(view.worker.succeeded, timeout=120000):
        view.rescan()  # unchanged files, same settings: the rows shown again were judged before
    again = [table.index(r, 4).data() for r in range(len(first))]  # the top rows, shown again
    assert len(asked) == before and all("fits" in cell or "won't" in cell for cell in again)
    grid.sortByColumn(4, Qt.SortOrder.AscendingOrder)  # a sort by the verdict needs every verdict
    qtbot.waitUntil(lambda: not any(e.unjudged() for e in table.entries()), timeout=120000)
    assert len(set(asked)) == 1000 and len(asked) == 1000  # each once: the GUI thread judges none while the worker does
