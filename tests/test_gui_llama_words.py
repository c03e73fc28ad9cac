"""The window asks in llama.cpp's words: File ▸ Ask about a llama.cpp command… and the llama.cpp options knobs give
the full load `fit` gives for the same command; a command llama.cpp would refuse is one line and changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gguf_factory import ArchDesc, write_gguf
from gui_support import child, open_model, settle

from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.views.fit_report import fit_dict
from gguf_budget.gui.cli import main

pytestmark = pytest.mark.usefixtures("measured_machine")  # conftest: this machine's figures measured once a run, not a test

GIB = 1 << 30
MACHINE = ("--host-available", "8G", "--no-gpu", "--cpu-features", "none")
GEMMA = ArchDesc(arch="gemma3", n_layer=6, n_head=4, n_head_kv=1, head_dim=256, sliding_window=512, qk_norm=True,
                 post_norms=True, tied=True, context_length=8192, tokens=300)
COMPARED = ("ctx", "server", "runtime", "peak_rss_short", "peak_rss_full", "verdict", "devices", "kv", "v_type")


@pytest.fixture
def gemma(tmp_path: Path) -> Path:
    return write_gguf(tmp_path / "gemma.gguf", GEMMA, "header_only")[0]


@pytest.fixture
def window(qtbot, make_window, gemma):
    w = make_window(probe_backend=lambda: hypothetical_machine(8 * GIB))
    qtbot.waitUntil(lambda: w.session.state.machine is not None)
    open_model(qtbot, w, gemma)
    return w


def drawn(window) -> dict:
    load = window.session.view.full_load
    return {**fit_dict(load.fit), "ctx": load.ctx}


def cli(capsys, *argv: str) -> dict:
    assert main(["fit", *MACHINE, "--json", *argv]) in (0, 3)
    return json.loads(capsys.readouterr().out)


def ask(qtbot, window, text: str) -> None:
    window.ask_command.choose()
    dialog = window.ask_command.dialog
    dialog.text.setPlainText(text)
    dialog.accept()
    settle(qtbot, window)


def test_a_pasted_command_sets_every_knob_and_answers_as_fit(qtbot, capsys, window, gemma):
    command = f"llama-server -m {gemma} -c 4096 -fa off -ub 256 -ctv q8_0 --swa-full -np 2 --temp 0.3 --lora x.gguf"
    ask(qtbot, window, command)
    assert window.ask_command.dialog.result() == 1
    want = cli(capsys, "--command", command)
    got = drawn(window)
    assert {k: got[k] for k in COMPARED} == {k: want[k] for k in COMPARED}
    assert child(window, "flashAttnCombo").currentText() == "off" and child(window, "ubatchSpin").value() == 256
    assert child(window, "vTypeCombo").currentText() == "q8_0" and child(window, "swaFullCombo").currentText() == "on"
    assert child(window, "parallelSpin").value() == 2
    words = child(window, "engineWords").text()
    assert "As llama.cpp: -fa off -ub 256 --swa-full" in words and "--lora x.gguf" in words and "--temp 0.3" in words


def test_a_knob_moved_after_asking_keeps_the_rest(qtbot, capsys, window, gemma):
    ask(qtbot, window, f"llama-cli -m {gemma} -c 4096 -ub 128")
    child(window, "flashAttnCombo").setCurrentIndex(2)  # off
    settle(qtbot, window)
    want = cli(capsys, "--command", f"llama-cli -m {gemma} -c 4096 -ub 128 -fa off")
    got = drawn(window)
    assert {k: got[k] for k in COMPARED} == {k: want[k] for k in COMPARED}


def test_a_command_llama_cpp_would_refuse_is_one_line_in_the_dialog(qtbot, window):
    before = window.session.view.state
    window.ask_command.choose()
    dialog = window.ask_command.dialog
    dialog.text.setPlainText("llama-server -c 4096 --frobnicate")
    dialog.accept()
    error = child(dialog, "askCommandError")
    assert dialog.isVisible() and error.isVisibleTo(dialog)
    assert error.text().startswith("error: invalid argument: --frobnicate") and "\n" not in error.text()
    assert dialog.text.toPlainText() == "llama-server -c 4096 --frobnicate"  # nothing the person typed is lost
    assert window.session.view.state == before
    dialog.reject()


def test_a_command_naming_another_model_opens_it_first(qtbot, capsys, window, tmp_path):
    other = write_gguf(tmp_path / "other.gguf", ArchDesc(n_layer=4, context_length=4096), "header_only")[0]
    with qtbot.waitSignal(window.modelLoaded, timeout=10000):
        window.ask_command.choose()
        window.ask_command.dialog.text.setPlainText(f"llama-completion -m {other} -c 2048 -b 512")
        window.ask_command.dialog.accept()
    settle(qtbot, window)
    assert window.session.state.model.path == str(other)
    want = cli(capsys, "--command", f"llama-completion -m {other} -c 2048 -b 512")
    got = drawn(window)
    assert {k: got[k] for k in COMPARED} == {k: want[k] for k in COMPARED}
    assert got["runtime"] == "llama-completion"


def test_the_llama_cpp_options_are_remembered_as_llama_cpp_spells_them(qtbot, window, make_window, gemma):
    ask(qtbot, window, "llama-server -c 4096 -fa off -ub 256 -ctv q8_0 -lm none")
    assert window.settings().llama_options == "-fa off -ub 256 -lm none -ctv q8_0"
    window.save_settings()
    again = make_window(window.settings_store(), probe_backend=lambda: hypothetical_machine(8 * GIB))
    state = again.session.state
    assert " ".join(state.engine.argv()) == "-fa off -ub 256 -lm none" and state.v_type == "q8_0"


@pytest.mark.parametrize("stored", ["-fa maybe", "--temp 0.3", "-m other.gguf", "--lora x.gguf", 3, "x" * 5000])
def test_stored_options_that_do_not_read_are_refused_and_the_rest_kept(stored):
    from gguf_budget.core.explorer.persist import settings_from, state_from

    settings, refusals = settings_from({"llama_options": stored, "kv_type": "q8_0"})
    assert settings.llama_options == "" and [r.key for r in refusals] == ["llama_options"]
    assert state_from(settings).kv_type == "q8_0" and state_from(settings).engine.argv() == []
