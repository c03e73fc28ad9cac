"""Settings read by us first (issue #24 item 7): what Qt would choke on never reaches it, a file that
needs repair is repaired once (valid keys kept, the original set aside), and a remembered choice
survives a model that cannot honour it.

The crash is real: `@Variant(` nested 20,000 deep (340 KB, under the old 1 MiB guard) kills Qt's
reader with SIGSEGV, so the start-up tests run the window in a child process."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gguf_factory import ArchDesc
from gui_support import WIDE, child, open_model
from hostile_support import HANG_LIMIT_S, outcome_as_nobody, world_readable_folder
from PySide6.QtCore import QSettings

from gguf_budget.core.ini_screen import list_elements, screen_ini
from gguf_budget.core.plan.types import HeadMode
from gguf_budget.gui.qt.evidence.evidence_link import LLAMA_PATH_KEY
from gguf_budget.core.plan.budget import Budget
from gguf_budget.gui.qt.file_dialogs import Purpose, remember
from gguf_budget.gui.qt.settings import (
    GEOMETRY_KEY, MAX_SETTINGS_BYTES, REFUSED_SUFFIX, SETTINGS_FILE, TYPED, ExplorerSettings, is_written, load_settings,
    user_settings,
)

# A list nested 20,000 deep as Qt writes one (QDataStream Qt_4_0: type 9, count 1, …, the int 1): 340 KB.
NESTED = "@Variant(" + r"\0\0\0\t\0\0\0\x1" * 20_000 + r"\0\0\0\x2\0\0\0\x1" + ")"
START_WINDOW = """
from PySide6.QtWidgets import QApplication
from gguf_budget.gui.qt.main_window import MainWindow
app = QApplication([])
window = MainWindow(probe_backend=lambda: None)
print(window.windowTitle(), window.settings().n_buffers)
"""


def start_window(config_home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CONFIG_HOME": str(config_home), "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([sys.executable, "-c", START_WINDOW], env=env, capture_output=True, text=True,
                          timeout=HANG_LIMIT_S)


def settings_file(config_home: Path, text: str) -> Path:
    path = config_home / "gguf-budget" / SETTINGS_FILE
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize("where", ["n_buffers", "recent element", "geometry", "unknown group"])
def test_a_variant_nested_20000_deep_never_reaches_qt(tmp_path, where):
    line = {"n_buffers": f"[explorer]\nn_buffers={NESTED}\n",
            "recent element": f"[explorer]\nrecent=/a.gguf, {NESTED}\n",
            "geometry": f"[window]\ngeometry={NESTED}\n",
            "unknown group": f"[other]\nx={NESTED}\n"}[where]
    path = settings_file(tmp_path, f"[explorer]\nn_buffers=3\n{line}")
    first = start_window(tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    assert first.stdout.split() == ["GGUF", "Budget", "Explorer", "3"]
    assert "repaired" in first.stderr and "@Variant" not in path.read_text()
    assert NESTED in (path.parent / (SETTINGS_FILE + REFUSED_SUFFIX)).read_text()


def test_a_repair_happens_once_not_every_run(tmp_path, caplog):
    path = tmp_path / SETTINGS_FILE
    junk = "".join(f"junk{i}=x\n" for i in range(120_000))
    path.write_text(f"[explorer]\nn_buffers=3\nhead_mode=stream\n[junk]\n{junk}")
    assert path.stat().st_size > MAX_SETTINGS_BYTES
    with caplog.at_level(logging.WARNING):
        store = user_settings(path)
    assert load_settings(store).n_buffers == 3 and load_settings(store).head_mode == "stream"
    assert caplog.text.count("repaired") == 1 and path.stat().st_size < 100
    aside = path.with_name(SETTINGS_FILE + REFUSED_SUFFIX)
    kept_aside = aside.stat().st_mtime_ns
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        again = user_settings(path)
    assert caplog.text == "" and aside.stat().st_mtime_ns == kept_aside
    assert Path(again.fileName()) == path and load_settings(again).n_buffers == 3


@pytest.mark.parametrize("line, reason", [
    ("[explorer]\nsecret_key=1", "not a key this app writes"),
    ("[General]\nfoo=bar", "not a key this app writes"),
    ("; a comment", "not a key=value line"),
    ("[explorer]\nn_buffers=@Variant(\\0\\0\\0\\x7f)", "typed value"),
    ("[explorer]\nrecent=\"/a, b\", @Rect(1 2 3 4)", "typed value"),
    ("[explorer]\nctx=" + "9" * 300_000, "characters long"),
    ('[explorer]\nkv_type="""\\,,,x\n[window]', "leaves a quote open"),
    ("[explorer]\nkv_type=f16\\", "ends in a backslash"),
])
def test_lines_the_app_never_writes_are_refused_with_their_reason(line, reason):
    screened = screen_ini("[explorer]\nctx=4096\n" + line + "\n", is_written, TYPED)
    assert len(screened.refused) == 1 and reason in screened.refused[0], screened.refused
    assert "ctx=4096" in screened.text


def test_text_qt_reads_as_text_is_kept():
    text = ('[explorer]\nrecent="/a/b, c.gguf", /x/\\"q\\".gguf, @@at.gguf, "@String(/a\\nb.gguf)"\n\n'
            '[window]\ngeometry=@ByteArray(\\x1\\xd9)\n\n[dialogs]\nmodel=@String(/m\\x10)\n')
    screened = screen_ini(text, is_written, TYPED)
    assert screened.refused == () and screened.text == text
    assert list_elements('"/a/b, c.gguf", /x, @@y') == ["/a/b, c.gguf", "/x", "@@y"]


def test_every_key_the_window_writes_is_one_the_screen_keeps(qtbot, make_window, write_model, tmp_path, settings_store):
    """The window's own file, after opening a model, choosing a llama.cpp and a folder, passes the screen untouched."""
    window = make_window(settings_store)
    open_model(qtbot, window, write_model())
    window.apply_request(budget=Budget.of(1 << 30), ctx=1024)  # remembered for this model
    settings_store.setValue(LLAMA_PATH_KEY, "/opt/llama.cpp/bin")
    for purpose in Purpose:
        remember(window, purpose, str(tmp_path), is_folder=True)
    window.save_settings()
    settings_store.sync()
    keys = settings_store.allKeys()
    assert {LLAMA_PATH_KEY, GEOMETRY_KEY, "explorer/n_buffers", *(f"dialogs/{p.value}" for p in Purpose)} <= set(keys)
    assert {k.rsplit(".", 1)[1] for k in keys if k.startswith("models/")} == {"budget", "ctx", "used"}
    assert all(is_written(key) for key in keys), [k for k in keys if not is_written(k)]
    text = Path(settings_store.fileName()).read_text()
    assert screen_ini(text, is_written, TYPED).refused == ()


def test_a_folder_that_cannot_be_written_uses_a_scratch_file_this_run():
    folder = world_readable_folder()
    try:
        path = folder / SETTINGS_FILE
        path.write_text(f"[explorer]\nn_buffers={NESTED}\n")
        path.chmod(0o644)
        report = outcome_as_nobody(lambda: print_scratch(path))
        assert report == "ok", report
        assert NESTED in path.read_text()  # left as it was: nothing could be written
    finally:
        import shutil

        shutil.rmtree(folder)


def print_scratch(path: Path) -> None:
    store = user_settings(path)
    if Path(store.fileName()) == path:
        raise AssertionError("Qt was given the unrepaired file")


def test_a_tied_model_never_overwrites_the_remembered_head_mode(qtbot, make_window, write_model, settings_store):
    window = make_window(settings_store)
    untied = write_model()
    tied = write_model(ArchDesc(**{**WIDE.__dict__, "tied": True}), name="tied.gguf")
    open_model(qtbot, window, untied)
    child(window, "headMode").setCurrentText(HeadMode.STREAM.value)
    assert window.settings().head_mode == "stream"
    open_model(qtbot, window, tied)
    assert child(window, "headMode").currentText() == "auto" and window.session.state.request().head_mode is HeadMode.AUTO
    window.save_settings()
    assert load_settings(QSettings(settings_store.fileName(), QSettings.Format.IniFormat)).head_mode == "stream"
    open_model(qtbot, window, untied)
    assert child(window, "headMode").currentText() == "stream" and window.session.state.request().head_mode is HeadMode.STREAM


def test_choosing_resident_on_a_tied_model_is_remembered(qtbot, make_window, write_model):
    window = make_window()
    tied = write_model(ArchDesc(**{**WIDE.__dict__, "tied": True}), name="tied.gguf")
    open_model(qtbot, window, tied)
    child(window, "headMode").setCurrentText(HeadMode.RESIDENT.value)
    assert window.settings().head_mode == "resident"
    assert ExplorerSettings().head_mode == "auto"


def test_text_qt_writes_in_its_own_typed_form_is_never_repaired(tmp_path, caplog):
    """Control characters in remembered text, and a NUL (which Qt writes as @String(…)): reading them back is no repair."""
    path = tmp_path / SETTINGS_FILE
    store = user_settings(path)
    from gguf_budget.core.explorer.session import ModelMemory
    from gguf_budget.gui.qt.settings import save_settings

    save_settings(store, ExplorerSettings(recent=("/m/a\nb.gguf", "/m/\x10c.gguf", "/m/@d.gguf")), ModelMemory())
    store.setValue("dialogs/model", "/m/\x1bx")
    store.setValue("measure/llama_path", "/opt/\x00llama")
    store.sync()
    assert "@String(" in path.read_text()
    with caplog.at_level(logging.WARNING):
        again = user_settings(path)
    assert caplog.text == "" and not path.with_name(SETTINGS_FILE + REFUSED_SUFFIX).exists()
    assert load_settings(again).recent == ("/m/a\nb.gguf", "/m/\x10c.gguf", "/m/@d.gguf")


def test_a_settings_path_that_is_not_utf8_is_never_given_to_qt(tmp_path, caplog):
    """Qt drops the bytes that are not UTF-8 and would read and write another file: this run uses a scratch file."""
    folder = Path(os.fsdecode(os.fsencode(str(tmp_path)) + b"/caf\xe9"))
    folder.mkdir()
    with caplog.at_level(logging.WARNING):
        store = user_settings(folder / SETTINGS_FILE)
    assert "its path is not UTF-8" in caplog.text
    store.setValue("explorer/budget_bytes", 1)
    store.sync()
    assert not (tmp_path / "caf" / SETTINGS_FILE).exists()
