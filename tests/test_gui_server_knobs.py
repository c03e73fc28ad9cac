"""The full-load panel's program and llama-server knobs, File ▸ Add vision projector… / draft model: each changes the
session and the drawn full load exactly as `fit --json` with the same flags does; bad files are one line and change
nothing; the knobs are remembered between runs."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from gguf_factory import ArchDesc, ProjectorDesc, write_gguf, write_projector
from gui_support import child, open_model, settle
from test_hostile_projector import with_u32
from PySide6.QtWidgets import QFileDialog

from gguf_budget.core.fit.runtime_types import Runtime
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.model.kv import KVType
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.fit_report import fit_dict
from gguf_budget.gui.cli import main

pytestmark = pytest.mark.usefixtures("measured_machine")  # conftest: this machine's figures measured once a run, not a test

GIB = 1 << 30
MACHINE = ("--host-available", "8G", "--no-gpu")
# A gemma3 shape: five sliding-window layers, so checkpoints are priced, and a context the slots can split.
GEMMA = ArchDesc(arch="gemma3", n_layer=6, n_head=4, n_head_kv=1, head_dim=256, sliding_window=512, qk_norm=True,
                 post_norms=True, tied=True, context_length=8192, tokens=300)
COMPARED = ("ctx", "max_ctx", "server", "runtime", "peak_rss_short", "peak_rss_full", "verdict", "devices")


def machine():
    """What `fit --host-available 8G --no-gpu` judges on."""
    return hypothetical_machine(8 * GIB)


@pytest.fixture
def gemma(tmp_path: Path) -> Path:
    return write_gguf(tmp_path / "gemma.gguf", GEMMA, "header_only")[0]


@pytest.fixture
def window(qtbot, make_window, gemma):
    w = make_window(probe_backend=machine)
    qtbot.waitUntil(lambda: w.session.state.machine is not None)
    open_model(qtbot, w, gemma)
    return w


def cli(capsys, path: Path, *flags: str) -> dict:
    """`fit --json` in-process, on the same machine and model."""
    main(["fit", str(path), "--json", *MACHINE, *flags])
    return json.loads(capsys.readouterr().out)


def cli_command(capsys, path: Path, *flags: str) -> str:
    main(["fit", str(path), "--print-command", *MACHINE, *flags])
    return capsys.readouterr().out.strip()


def drawn(window) -> dict:
    """The full load on screen, in `fit --json`'s words."""
    load = window.session.view.full_load
    return {**fit_dict(load.fit), "ctx": load.ctx, "max_ctx": load.max_ctx}


def assert_as_cli(capsys, window, path: Path, *flags: str) -> dict:
    """The session's full load and the drawn panel hold what `fit --json` with `flags` prints."""
    want, got = cli(capsys, path, *flags), drawn(window)
    assert {k: got[k] for k in COMPARED} == {k: want[k] for k in COMPARED}
    main(["fit", str(path), *MACHINE, *flags])
    printed = capsys.readouterr().out
    rows = child(window, "serverRows").text().splitlines()
    names = "|".join(("Slots", "Cache RAM", "Checkpoint", "Projector", "Draft", "Session", "Counted", "Cap", "Worst case"))
    assert [row.split(": ", 1)[0] for row in rows] == re.findall(rf"^({names}) ", printed, re.M)
    flat = " ".join(printed.split())  # `fit` wraps its text at 100 columns
    for row in rows:  # each line as `fit` prints it
        name, text = row.split(": ", 1)
        assert f"{name} {' '.join(text.split())}" in flat, row
    assert human_bytes(want["peak_rss_full"]) in child(window, "peakRssFull").text()
    assert human_bytes(want["peak_rss_short"]) in child(window, "peakRssShort").text()
    assert window.body.hardware.command.command_line() == cli_command(capsys, path, *flags)
    return want


def set_box(qtbot, window, name: str, value) -> None:
    """Type `value` into a spin box as a person would (select all, type, Return), or pick a combo's entry."""
    box = child(window, name)
    if hasattr(box, "setCurrentIndex"):
        box.setCurrentIndex(value)
    else:
        box.setFocus()
        box.lineEdit().selectAll()
        qtbot.keyClicks(box, str(value))
        qtbot.keyClick(box, "\r")
    settle(qtbot, window)


def test_defaults_are_fits_defaults(capsys, window, gemma):
    assert_as_cli(capsys, window, gemma)
    assert child(window, "parallelSpin").text() == "1"
    assert child(window, "cacheRamSpin").text() == "sized by this tool"
    assert child(window, "ctxCheckpointsSpin").text() == "32"
    assert child(window, "runtimeCombo").currentText() == "llama-server"


@pytest.mark.parametrize(("boxes", "flags"), [
    ((("parallelSpin", "3"),), ("-np", "3")),
    ((("parallelSpin", "auto"),), ("-np", "auto")),
    ((("parallelSpin", "2"), ("kvUnifiedCombo", 1)), ("-np", "2", "--kv-unified")),
    ((("parallelSpin", "auto"), ("kvUnifiedCombo", 2)), ("-np", "auto", "--no-kv-unified")),
    ((("cacheRamSpin", "2048"),), ("--cache-ram", "2048")),
    ((("cacheRamSpin", "no limit"),), ("--cache-ram", "-1")),
    ((("cacheRamSpin", "off"),), ("--cache-ram", "0")),
    ((("ctxCheckpointsSpin", "4"),), ("--ctx-checkpoints", "4")),
    ((("ctxCheckpointsSpin", "off"),), ("--ctx-checkpoints", "0")),
    ((("runtimeCombo", 1),), ("--runtime", "llama-cli")),
    ((("runtimeCombo", 2),), ("--runtime", "llama-completion")),
    ((("runtimeCombo", 3),), ("--runtime", "llama-cpp-python")),
])
def test_each_knob_changes_the_full_load_as_the_same_fit_flag_does(qtbot, capsys, window, gemma, boxes, flags):
    before = window.session.view.fit
    for name, value in boxes:
        set_box(qtbot, window, name, value)
    assert window.session.view.fit != before
    want = assert_as_cli(capsys, window, gemma, *flags)
    if "--runtime" in flags:
        assert window.session.state.runtime is Runtime(flags[-1])
        assert flags[-1] in child(window, "peakRssFull").text()
    else:
        assert want["runtime"] == "llama-server"


def test_a_two_gib_cache_is_in_the_verdict_as_fit_counts_it(qtbot, capsys, make_window, gemma):
    """On 7 GiB (1 GiB usable after the 6 GiB host reserve) a 2 GiB prompt cache turns the verdict when it is judged
    full (the worst case), as in `fit`; the typical chat fills little of it."""
    small = make_window(probe_backend=lambda: hypothetical_machine(7 * GIB))
    qtbot.waitUntil(lambda: small.session.state.machine is not None)
    open_model(qtbot, small, gemma)
    assert small.session.view.fit.verdict.admitted
    set_box(qtbot, small, "cacheRamSpin", "2048")
    assert small.session.view.fit.verdict.admitted
    child(small, "worstCaseCheck").setChecked(True)
    settle(qtbot, small)
    assert not small.session.view.fit.verdict.admitted
    want = json.loads((main(["fit", str(gemma), "--json", "--host-available", "7G", "--no-gpu", "--cache-ram", "2048",
                             "--worst-case"]), capsys.readouterr().out)[1])
    assert {k: drawn(small)[k] for k in COMPARED} == {k: want[k] for k in COMPARED}


def choose_file(monkeypatch, path: Path) -> None:
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), "GGUF models (*.gguf)"))


def add(qtbot, monkeypatch, window, action: str, path: Path) -> None:
    """File ▸ Add … with the dialog answering `path`; waits for the worker's answer."""
    choose_file(monkeypatch, path)
    child(window, action).trigger()
    qtbot.waitUntil(lambda: not window.server_files.busy(), timeout=10000)
    settle(qtbot, window)


def test_a_projector_and_a_draft_added_from_the_file_menu_are_priced_as_fit_prices_them(
        qtbot, capsys, monkeypatch, window, gemma, tmp_path):
    mm = write_projector(tmp_path / "mmproj.gguf", ProjectorDesc(text_embd=GEMMA.n_embd))
    draft = write_gguf(tmp_path / "draft.gguf", replace(GEMMA, n_layer=1), "header_only")[0]
    assert not child(window, "removeVisionProjectorAction").isEnabled()
    add(qtbot, monkeypatch, window, "addVisionProjectorAction", mm)
    assert window.session.state.server.projector.path == str(mm)
    assert child(window, "projectorFile").text() == "mmproj.gguf"
    assert "\nProjector: " in child(window, "serverRows").text()
    assert_as_cli(capsys, window, gemma, "--mmproj", str(mm))
    add(qtbot, monkeypatch, window, "addDraftModelAction", draft)
    assert child(window, "draftFile").text() == "draft.gguf"
    want = assert_as_cli(capsys, window, gemma, "--mmproj", str(mm), "--draft", str(draft))
    assert want["server"]["draft"] is not None and "--spec-type draft-simple" in window.body.hardware.command.command_line()
    child(window, "removeProjector").click()
    settle(qtbot, window)
    assert child(window, "projectorFile").text() == "none" and not child(window, "removeProjector").isEnabled()
    assert_as_cli(capsys, window, gemma, "--draft", str(draft))
    child(window, "removeDraftModelAction").trigger()
    settle(qtbot, window)
    assert_as_cli(capsys, window, gemma)


def bad_files(tmp_path: Path) -> list[tuple[str, Path, str]]:
    text = write_gguf(tmp_path / "text.gguf", replace(GEMMA, arch="llama", name="other"), "header_only")[0]
    wide = write_projector(tmp_path / "wide.gguf", ProjectorDesc(text_embd=256))
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a gguf at all" * 10)
    vocab = write_gguf(tmp_path / "vocab.gguf", replace(GEMMA, n_layer=1, tokens=600), "header_only")[0]
    mm = write_projector(tmp_path / "mm.gguf", ProjectorDesc(text_embd=GEMMA.n_embd))
    blocks = with_u32(write_projector(tmp_path / "blocks.gguf", ProjectorDesc(text_embd=GEMMA.n_embd)),
                      "clip.vision.block_count", 10**6)  # its full load once took the GUI thread 93 s
    return [("addVisionProjectorAction", text, "is not a vision projector (architecture 'llama'"),
            ("addVisionProjectorAction", blocks, "block_count is 1000000 but block 2 has no tensors"),
            ("addVisionProjectorAction", wide, "feeds a model 256 wide"),
            ("addVisionProjectorAction", junk, "junk.gguf"),
            ("addDraftModelAction", vocab, "its vocabulary has 600 tokens"),
            ("addDraftModelAction", mm, "is a vision projector"),
            ("addDraftModelAction", junk, "junk.gguf")]


def test_a_file_that_is_not_a_projector_or_a_draft_is_one_line_and_changes_nothing(
        qtbot, monkeypatch, window, gemma, tmp_path):
    good = write_projector(tmp_path / "good.gguf", ProjectorDesc(text_embd=GEMMA.n_embd))
    add(qtbot, monkeypatch, window, "addVisionProjectorAction", good)
    for action, path, words in bad_files(tmp_path):
        state, view = window.session.state, window.session.view
        rows = child(window, "serverRows").text()
        add(qtbot, monkeypatch, window, action, path)
        message = child(window, "serverFileMessage")
        assert message.isVisible() and words in message.text() and "\n" not in message.text()
        assert message.text().startswith("Not added: ")
        assert window.session.state is state and window.session.view is view
        assert child(window, "serverRows").text() == rows and child(window, "projectorFile").text() == "good.gguf"
    add(qtbot, monkeypatch, window, "addVisionProjectorAction", good)
    assert not child(window, "serverFileMessage").isVisible()


def test_another_model_takes_neither_file_along_and_says_so(qtbot, monkeypatch, window, tmp_path):
    mm = write_projector(tmp_path / "mm.gguf", ProjectorDesc(text_embd=GEMMA.n_embd))
    add(qtbot, monkeypatch, window, "addVisionProjectorAction", mm)
    set_box(qtbot, window, "parallelSpin", "3")
    other = write_gguf(tmp_path / "other.gguf", replace(GEMMA, n_embd=128, name="other"), "header_only")[0]
    open_model(qtbot, window, other)
    assert window.session.state.server.projector is None and window.session.state.server.n_parallel == 3
    assert child(window, "projectorFile").text() == "none" and child(window, "parallelSpin").text() == "3"
    assert "Removed the vision projector: it was checked against" in child(window, "serverFileMessage").text()
    assert "Projector:" not in child(window, "serverRows").text()


def test_the_knobs_are_remembered_between_runs(qtbot, make_window, settings_store, gemma, tmp_path, monkeypatch):
    first = make_window(settings_store, probe_backend=machine)
    qtbot.waitUntil(lambda: first.session.state.machine is not None)
    open_model(qtbot, first, gemma)
    for name, value in (("parallelSpin", "auto"), ("kvUnifiedCombo", 2), ("cacheRamSpin", "512"),
                        ("ctxCheckpointsSpin", "7"), ("runtimeCombo", 3)):
        set_box(qtbot, first, name, value)
    add(qtbot, monkeypatch, first, "addVisionProjectorAction",
        write_projector(tmp_path / "mm.gguf", ProjectorDesc(text_embd=GEMMA.n_embd)))
    chosen = first.session.state
    first.close()
    second = make_window(settings_store, probe_backend=machine)
    restored = second.session.state
    assert (restored.runtime, restored.server) == (chosen.runtime, replace(chosen.server, projector=None))
    assert [child(second, n).text() for n in ("parallelSpin", "cacheRamSpin", "ctxCheckpointsSpin")] == \
        [f"auto ({4}, unified)", "512", "7"]
    assert child(second, "kvUnifiedCombo").currentIndex() == 2
    assert child(second, "runtimeCombo").currentText() == "llama-cpp-python"
    assert child(second, "projectorFile").text() == "none"


def test_adding_a_file_needs_a_model(make_window):
    w = make_window(probe_backend=machine)
    assert not child(w, "addVisionProjectorAction").isEnabled() and not child(w, "addDraftModelAction").isEnabled()
    assert not child(w, "addProjector").isEnabled() and not child(w, "addDraft").isEnabled()


def test_how_a_projector_and_a_draft_run_has_a_knob_each_as_the_same_fit_flag(
        qtbot, capsys, monkeypatch, make_window, gemma, tmp_path):
    """--no-mmproj-offload, --image-size, -ngld, -devd none and -ctkd in the window, on a machine with a GPU so each
    moves a byte; enabled only beside their file."""
    gpu_machine = ("--host-available", "8G", "--gpu-total", "4G")
    w = make_window(probe_backend=lambda: hypothetical_machine(8 * GIB, gpu_count=1, gpu_total=4 * GIB))
    qtbot.waitUntil(lambda: w.session.state.machine is not None)
    open_model(qtbot, w, gemma)
    knobs = ("projectorOffloadCheck", "imageSizeEdit", "draftLayersSpin", "draftOnGpuCheck", "draftKvCombo")
    assert not any(child(w, name).isEnabled() for name in knobs)
    mm = write_projector(tmp_path / "mmproj.gguf", ProjectorDesc(text_embd=GEMMA.n_embd))
    draft = write_gguf(tmp_path / "draft.gguf", replace(GEMMA, n_layer=2), "header_only")[0]
    add(qtbot, monkeypatch, w, "addVisionProjectorAction", mm)
    add(qtbot, monkeypatch, w, "addDraftModelAction", draft)
    assert all(child(w, name).isEnabled() for name in knobs)
    files = ("--mmproj", str(mm), "--draft", str(draft))

    def as_fit(*flags: str) -> None:
        want = json.loads((main(["fit", str(gemma), "--json", *gpu_machine, *files, *flags]), capsys.readouterr().out)[1])
        got = {**fit_dict(w.session.view.full_load.fit), "ctx": w.session.view.full_load.ctx}
        assert {k: got[k] for k in ("ctx", "server", "verdict", "devices")} == \
            {k: want[k] for k in ("ctx", "server", "verdict", "devices")}
        main(["fit", str(gemma), "--print-command", *gpu_machine, *files, *flags])
        assert w.body.hardware.command.command_line() == capsys.readouterr().out.strip()

    as_fit()
    on_gpu = w.session.view.fit.server.projector.device
    child(w, "projectorOffloadCheck").setChecked(False)
    settle(qtbot, w)
    assert (on_gpu, w.session.view.fit.server.projector.device) == ("gpu0", "host")
    as_fit("--no-mmproj-offload")
    edit = child(w, "imageSizeEdit")
    edit.setFocus()
    qtbot.keyClicks(edit, "128x96")
    qtbot.keyClick(edit, "\r")
    settle(qtbot, w)
    assert w.session.state.server.image.text == "128x96"
    as_fit("--no-mmproj-offload", "--image-size", "128x96")
    state = w.session.state
    edit.selectAll()
    qtbot.keyClicks(edit, "wide")
    qtbot.keyClick(edit, "\r")
    settle(qtbot, w)
    message = child(w, "serverFileMessage")
    assert w.session.state is state and edit.text() == "128x96"
    assert message.isVisible() and "WIDTHxHEIGHT" in message.text() and "\n" not in message.text()
    set_box(qtbot, w, "draftLayersSpin", "1")
    set_box(qtbot, w, "draftKvCombo", [t.value for t in KVType].index("q8_0"))
    draft_state = w.session.state.server.draft
    assert (draft_state.gpu_layers, draft_state.kv_type) == (1, KVType.Q8_0)
    as_fit("--no-mmproj-offload", "--image-size", "128x96", "--draft-gpu-layers", "1", "--draft-kv-type", "q8_0")
    child(w, "draftOnGpuCheck").setChecked(False)
    settle(qtbot, w)
    assert not w.session.state.server.draft.on_gpu and "-devd none" in w.body.hardware.command.command_line()
    as_fit("--no-mmproj-offload", "--image-size", "128x96", "--draft-gpu-layers", "1", "--draft-kv-type", "q8_0",
           "--draft-device", "none")
    child(w, "removeDraft").click()
    settle(qtbot, w)
    assert not child(w, "draftLayersSpin").isEnabled() and child(w, "projectorOffloadCheck").isEnabled()


def test_the_session_chart_draws_fits_trajectory_and_its_worst_case(qtbot, capsys, window, gemma):
    """The small chart under the server lines holds what `fit --json` predicts after each request of the assumed
    typical chat, and the worst case; it follows a knob as fit does."""
    chart = child(window, "sessionChart")
    for flags in ((), ("-np", "2", "--kv-unified")):
        if flags:
            set_box(qtbot, window, "parallelSpin", "2")
            set_box(qtbot, window, "kvUnifiedCombo", 1)
        session = cli(capsys, gemma, *flags)["server"]["session"]
        assert chart.isVisible()
        assert list(child(window, "sessionPlot").chart.rss) == [t["rss"] for t in session["trajectory"]]
        assert child(window, "sessionPlot").chart.worst == session["worst_case_rss"]
        assert human_bytes(session["worst_case_rss"]) in child(window, "sessionCaption").text()
