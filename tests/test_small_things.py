"""Issue 17, item 7: a title without the app name twice, Open Recent with folders, the compare
dialog in the open model's folder, and file types inferred from tensor types when a file lacks one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from gguf.constants import GGMLQuantizationType as T
from gguf_factory import write_gguf
from gui_support import OTHER, child, open_model
from PySide6.QtCore import QThreadPool
from PySide6.QtWidgets import QApplication, QFileDialog

from gguf_budget.core import BudgetRequest, load_model
from gguf_budget.core.views.command_words import unknown_command
from gguf_budget.core.units import counted
from gguf_budget.core.model.file_type import inferred_file_type_name
from gguf_budget.core.views.file_label import file_label
from gguf_budget.core.views.inspect_report import inspect_text
from gguf_budget.core.views.speed_view import approx_tok_s
from gguf_budget.gui.cli import main as cli_main
from gguf_budget.gui.qt.app import application
from gguf_budget.gui.qt.whatif.compare_view import CompareView

APP = "GGUF Budget Explorer"


def test_the_title_is_the_model_and_qt_adds_the_app_name_once(qtbot, make_window, write_model):
    application()
    window = make_window()
    open_model(qtbot, window, write_model(OTHER))
    assert window.windowTitle() == "other-llama"
    shown = f"{window.windowTitle()} — {QApplication.applicationDisplayName()}"  # how Qt's platforms title it
    assert shown.count(APP) == 1


def test_open_recent_shows_the_folder_too(qtbot, make_window, write_model, settings_store):
    first = make_window()
    path = write_model(OTHER, name="other.gguf")
    open_model(qtbot, first, path)
    first.close()
    second = make_window(settings_store)
    texts = [a.text() for a in child(second, "recentMenu").actions()]
    assert texts == [file_label(str(path), str(Path.home()))] and str(path.parent.name) in texts[0]


@pytest.mark.parametrize(("path", "home", "label"), [
    ("/home/ann/models/q.gguf", "/home/ann", "q.gguf — ~/models"),
    ("/home/ann/q.gguf", "/home/ann", "q.gguf — ~"),
    ("/srv/llm/q.gguf", "/home/ann", "q.gguf — /srv/llm"),
])
def test_a_file_label_is_name_then_folder(path, home, label):
    assert file_label(path, home) == label


def test_the_compare_dialog_opens_in_the_open_models_folder(qtbot, monkeypatch, tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    first = load_model(write_gguf(folder / "first.gguf", OTHER, "header_only")[0])
    asked: list[str] = []

    def dialog(_parent, _title: str, start: str, _filter: str) -> tuple[str, str]:
        asked.append(start)
        return "", ""  # the user cancels

    monkeypatch.setattr(QFileDialog, "getOpenFileName", dialog)
    view = CompareView()
    qtbot.addWidget(view)
    view.set_first(first, BudgetRequest(), None)
    view.choose()
    QThreadPool.globalInstance().waitForDone(5000)
    assert asked == [str(folder)]


@pytest.mark.parametrize(("desc", "name"), [
    (replace(OTHER, file_type=None, weight_type=T.Q4_K, mix={"ffn_down": T.Q6_K}), "Q4_K_M (inferred)"),
    (replace(OTHER, file_type=None, weight_type=T.Q8_0), "Q8_0 (inferred)"),
    (replace(OTHER, file_type=None, weight_type=T.Q5_K, mix={"attn_v": T.Q6_K}), "Q5_K_M (inferred)"),
    (replace(OTHER, file_type=15, weight_type=T.Q8_0), "Q4_K_M"),  # what the file declares wins
])
def test_a_file_without_general_file_type_gets_one_inferred(tmp_path, desc, name):
    spec = load_model(write_gguf(tmp_path / "m.gguf", desc, "header_only")[0])
    assert spec.file_type_name == name
    assert name in inspect_text(spec)


def test_no_weight_matrix_leaves_the_type_unknown():
    assert inferred_file_type_name(()) is None


@pytest.mark.parametrize("tok_s, words", [(0.24, "≈ 4.2 s/token"), (0.5, "≈ 2 s/token"), (1.0, "≈ 1 tok/s"),
                                          (3.44, "≈ 3.4 tok/s"), (0.001, "≈ 1,000 s/token")])
def test_a_speed_under_one_token_a_second_reads_as_seconds_per_token(tok_s, words):
    assert approx_tok_s(tok_s) == words


@pytest.mark.parametrize("argv, words", [
    (["fitt", "model.gguf"], "unknown command 'fitt' and no such model file: did you mean 'fit'?"),
    (["qaunts"], "did you mean 'quants'?"),
    (["zzzz"], "the commands are inspect, plan"),
])
def test_a_mistyped_command_is_named_with_the_nearest_one(capsys, argv, words):
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and "unrecognized arguments" not in err


def test_a_file_or_a_remote_model_is_never_taken_for_a_mistyped_command(tmp_path):
    model = tmp_path / "fitt"
    model.write_bytes(b"")
    assert unknown_command(str(model), ("fit",)) is None
    assert unknown_command("fitt.gguf", ("fit",)) is None
    assert unknown_command("someone/repo:Q4_K_M", ("fit",)) is None
    assert unknown_command("https://example.com/x", ("fit",)) is None


@pytest.mark.parametrize("n, noun, words", [(1, "model", "1 model"), (0, "model", "0 models"),
                                            (2, "folder", "2 folders"), (1024, "layer", "1,024 layers")])
def test_a_count_takes_its_noun_in_the_right_number(n, noun, words):
    assert counted(n, noun) == words
