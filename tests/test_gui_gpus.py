"""The window's GPU vocabulary: presets in the machine editor, the tensor split, per-GPU bars and reserves,
the MoE offload, and the command with its Copy button. Every expected fit is `estimate_fit` called directly."""

from __future__ import annotations

from dataclasses import replace

from gguf_factory import ArchDesc
from gui_support import GIB, LLAMA70B, child, open_model
from PySide6.QtGui import QGuiApplication

from gguf_budget.core.machine.cpu_features import read_cpu_features
from gguf_budget.core.fit.ctx.auto_ctx import auto_fit
from gguf_budget.core.fit.types import FitRequest, Reserves
from gguf_budget.core.machine.presets import with_presets
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.views.machine_view import pool_bars

MOE = ArchDesc(name="tiny-moe", arch="qwen2moe", n_layer=8, n_embd=256, n_ff=512, n_vocab=8000, n_expert=8,
               n_expert_used=2, context_length=4096)


def here(machine):
    """A typed machine as the window builds it: with this machine's CPU features (its repacked copies priced as here)."""
    return replace(machine, cpu_features=read_cpu_features())


def expected_fit(window, snapshot, **kw):
    """The full load `fit` gives for the window's model and knobs (no ctx asked: llama.cpp's default ctx)."""
    request = FitRequest(kv_type=window.session.state.request().kv_type, **kw)
    return auto_fit(window.session.state.model, snapshot, request).fit


def test_two_gpu_presets_get_a_bar_each_showing_their_layers(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model(LLAMA70B, name="70b.gguf"))
    child(window, "hypoHostAvailable").setText("256G")
    child(window, "hypotheticalBox").setChecked(True)
    child(window, "machineEditor").set_preset("RTX 3090,RTX 3060")
    snapshot = window.session.state.machine
    assert [(g.name, g.total) for g in snapshot.gpus] == [("RTX 3090", 24 * GIB), ("RTX 3060", 12 * GIB)]
    assert snapshot == here(with_presets("RTX 3090,RTX 3060", hypothetical_machine(256 * GIB)))
    fit = window.session.view.fit
    assert fit == expected_fit(window, snapshot)
    bars = pool_bars(fit)
    for i, bar in enumerate(bars[1:]):
        assert child(window, f"gpuBar{i}").pool() == bar and bar.layers.startswith("block")
    assert not child(window, "hypoGpuTotal").isEnabled()


def test_a_machine_preset_replaces_the_whole_machine_and_shares_one_pool(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model())
    child(window, "machineEditor").set_preset("M4 Max 128GB")
    snapshot = window.session.state.machine
    assert snapshot.host_total == 128 * GIB and snapshot.gpus[0].memory == "unified"
    fit = window.session.view.fit
    assert fit == expected_fit(window, snapshot)
    assert fit.devices[0].shared == fit.devices[1].need > 0
    assert not child(window, "hypoHostAvailable").isEnabled()
    child(window, "hypoPreset").setCurrentText("Nope 1000")
    assert child(window, "machineError").isVisible() and window.session.state.machine == snapshot  # the last good machine stays


def test_the_tensor_split_field_moves_layers_and_refuses_bad_text(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model(LLAMA70B, name="70b.gguf"))
    child(window, "machineEditor").set_preset("RTX 3090,RTX 3060")
    split = child(window, "tensorSplit")
    split.setText("1,1")
    split.editingFinished.emit()
    fit = window.session.view.fit
    assert fit == expected_fit(window, window.session.state.machine, tensor_split=(1.0, 1.0))
    argv = fit.command.argv
    assert argv[argv.index("-np") - 2:argv.index("-np")] == ("-ts", "1,1")  # the server's own flags follow
    split.setText("1,x")
    split.editingFinished.emit()
    assert child(window, "tensorSplitError").isVisible() and "not a list of shares" in child(window, "tensorSplitError").text()
    assert window.session.view.fit == fit


def test_per_gpu_reserves(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model())
    child(window, "machineEditor").set_preset("RTX 3090,RTX 3060")
    reserves = child(window, "reserveGpus")
    reserves.setText("0,2G")
    reserves.editingFinished.emit()
    fit = window.session.view.fit
    assert [d.reserve for d in fit.devices[1:]] == [0, 2 * GIB]
    assert fit == expected_fit(window, window.session.state.machine, reserves=Reserves(per_gpu=(0, 2 * GIB)))


def test_the_command_is_shown_and_copied(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model(MOE, name="my moe.gguf"))
    child(window, "machineEditor").set_preset("RTX 3060")
    fit = window.session.view.fit
    box = child(window, "runCommand")
    assert box.toPlainText().startswith(fit.recommended.shell)
    assert "'" in fit.recommended.shell  # the space in the file name is quoted
    with qtbot.waitSignal(child(window, "copyCommand").parent().copied):
        child(window, "copyCommand").click()
    assert QGuiApplication.clipboard().text() == fit.recommended.shell
    child(window, "commandProgramCombo").setCurrentText("Ollama")  # Ollama is a program like the rest, with Copy
    assert box.toPlainText().startswith(fit.recommended.ollama_modelfile) and "num_gpu" in box.toPlainText()
    child(window, "copyCommand").click()
    assert QGuiApplication.clipboard().text() == fit.recommended.ollama_modelfile
    offload = child(window, "moeOffload")
    assert offload.isVisible() and "--n-cpu-moe" in offload.text()
