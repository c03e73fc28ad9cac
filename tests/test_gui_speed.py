"""The window on the explorer session: the honest headline, exact ctx, the cap and the policy, the ring,
the usable-RAM mark, the decode estimates and their bandwidths — on real widgets, against `derive` and the CLI."""

from __future__ import annotations

import json
import time
from dataclasses import replace

import numpy as np
import pytest
from gguf_factory import ArchDesc
from gui_support import GIB, MIB, WIDE, child, open_model, settle, type_into
from PySide6.QtCore import QThreadPool, Qt

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.explorer.derive import initial_budget
from gguf_budget.core import hypothetical_machine, load_model
from gguf_budget.core.explorer.derive import derive
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.machine.backend import Backend
from gguf_budget.core.machine.bandwidth import Bandwidths, BandwidthSource
from gguf_budget.core.machine.presets import with_presets
from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.core.plan.types import CtxPolicy, RingReason
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.speed_view import decode_brief, decode_text, speed_summary
from gguf_budget.gui.cli import main
from gguf_budget.gui.cli.launch import parse_launch_args
from gguf_budget.gui.qt.app import open_window
from gguf_budget.gui.qt.main_window import MainWindow

LLAMA70B = catalogue_path(find_entry("llama-3.1-70b-instruct"))
LLAMA8B = catalogue_path(find_entry("llama-3.1-8b-instruct"))
NO_CONTEXT = ArchDesc(name="no-context", n_layer=4, n_vocab=2048, omit=("llama.context_length",))


def machine_32g():
    """24 GiB available of 32 GiB, no GPU: the 70B's 40 GiB of weights cannot load fully."""
    return hypothetical_machine(24 * GIB, host_total=32 * GIB)


@pytest.fixture
def seventy(qtbot, make_window) -> MainWindow:
    window = make_window(probe_backend=machine_32g)
    qtbot.waitUntil(lambda: window.session.state.machine is not None, timeout=5000)
    open_model(qtbot, window, LLAMA70B)
    window.apply_request(budget=Budget.of(16 * GIB))
    return window


def test_the_70b_at_16_gib_is_feasible_but_slow_and_the_full_load_does_not_fit(qtbot, seventy):
    banner = child(seventy, "banner")
    speed = seventy.session.view.plan_speed
    assert banner.property("state") == "slow" and speed.tok_s < 2 and seventy.session.view.plan.feasible
    assert f"each token streams {human_bytes(speed.bytes.stream)} from disk" in banner.text()
    assert decode_text(speed) in banner.text() and "FEASIBLE — SLOW" in banner.text()
    assert child(seventy, "bannerTier").property("tier") == "tight"  # 287 MiB left of 16 GiB: amber
    assert child(seventy, "fullLoadLineTier").property("tier") == "won't"
    assert child(seventy, "headlineDiffer").text().startswith("Why they differ: the Budget plan streams 53 of 80 layers")
    line = child(seventy, "fullLoadLine").text()
    assert line.startswith("Full load (llama.cpp placement on the hypothetical machine): does not fit")
    assert child(seventy, "fitMaxCtx").text().startswith("none")
    assert child(seventy, "fitDecode").text() == "no estimate: it does not fit"
    expected = derive(replace(seventy.session.state, budget=Budget.of(16 * GIB)))
    assert (banner.text(), line) == (expected.headline.text, expected.headline.full_load)


def test_the_slow_threshold_is_a_setting_that_the_banner_follows(qtbot, seventy):
    threshold = child(seventy, "slowThreshold")
    threshold.setValue(seventy.session.view.plan_speed.tok_s / 2)
    settle(qtbot, seventy)
    assert child(seventy, "banner").property("state") == "feasible"
    threshold.setValue(2.0)
    settle(qtbot, seventy)
    assert child(seventy, "banner").property("state") == "slow"


def test_slow_means_slow_with_every_layer_pinned_and_the_banner_says_it_is_the_bandwidth(qtbot, make_window):
    """Pinned but under the threshold: amber, on the real banner, naming the RAM bandwidth, not streaming."""
    window = make_window(probe_backend=machine_32g)
    open_model(qtbot, window, LLAMA8B)
    window.apply_request(budget=Budget.of(6 * GIB))
    settle(qtbot, window)
    speed, banner = window.session.view.plan_speed, child(window, "banner")
    assert window.session.view.plan.n_pinned == 32 and speed.bytes.stream == 0
    child(window, "slowThreshold").setValue(speed.tok_s * 1.5)
    settle(qtbot, window)
    assert banner.property("state") == "slow" and "(slow)" in child(window, "bannerPlain").text()
    assert banner.text().startswith("Budget plan (layer-streaming runtime): FEASIBLE — SLOW")
    assert f"each token reads {human_bytes(speed.bytes.total)} from RAM at " in banner.text()
    assert decode_text(speed) in banner.text() and "streams" not in banner.text()
    child(window, "slowThreshold").setValue(speed.tok_s / 1.5)
    settle(qtbot, window)
    assert banner.property("state") == "feasible"


def test_the_pinned_caption_says_what_each_token_streams_and_the_estimate(seventy):
    speed = seventy.session.view.plan_speed
    text = child(seventy, "pinnedLabel").text()
    plan = seventy.session.view.plan
    assert text.startswith(f"{plan.n_pinned} / 80 layers pinned — each token streams {human_bytes(speed.bytes.stream)}")
    assert text.endswith(decode_brief(speed))


def test_the_budget_slider_marks_usable_ram_and_a_budget_above_it_is_said(qtbot, seventy):
    slider = child(seventy, "budgetSlider")
    usable = 24 * GIB - 6 * GIB
    assert slider.mark() == usable // MIB and "usable RAM, 18.00 GiB" in slider.toolTip()
    assert "exceeds this machine's usable RAM" not in child(seventy, "banner").text()
    seventy.apply_request(budget=Budget.of(20 * GIB))
    assert child(seventy, "banner").text().endswith("the budget exceeds this machine's usable RAM (18.00 GiB)")


@pytest.mark.parametrize("ctx", [100_000, 1000])
def test_an_asked_ctx_is_planned_exactly_from_the_launcher(qtbot, settings_store, tmp_path, write_model, ctx):
    path = write_model(replace(WIDE, context_length=8192))
    window = open_window(parse_launch_args([str(path), "--budget", "4G", "--ctx", str(ctx)]), settings_store,
                         tmp_path / "logs")
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: window.session.view.plan is not None and window.session.view.plan.ctx_explicit, timeout=10000)
    plan = window.session.view.plan
    assert (plan.ctx, plan.ctx_explicit, plan.feasible) == (ctx, True, True)
    label = child(window, "ctxValue").text()
    assert label.startswith(f"{ctx:,} tokens (as asked") and ("beyond the trained 8,192" in label) == (ctx > 8192)
    assert child(window, "ctxEdit").text() == str(ctx)
    QThreadPool.globalInstance().waitForDone(5000)


def test_a_typed_ctx_is_honoured_exactly_and_auto_comes_back(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model())
    auto_plan = window.session.view.plan
    type_into(qtbot, window, "ctxEdit", "1000")
    assert (window.session.view.plan.ctx, child(window, "ctxAuto").isChecked()) == (1000, False)
    assert child(window, "ctxSlider").value() == 1000  # shown where it is, not snapped to a step
    type_into(qtbot, window, "ctxEdit", "lots")
    assert child(window, "ctxError").isVisible() and window.session.view.plan.ctx == 1000
    child(window, "ctxAuto").setChecked(True)
    settle(qtbot, window)
    assert window.session.view.plan == auto_plan


def test_a_file_without_context_length_is_planned_at_the_default_ctx_as_the_cli_plans_it(
        qtbot, make_window, gguf_file, capsys):
    path = gguf_file(NO_CONTEXT, "header_only", name="nolen.gguf")
    window = make_window()
    open_model(qtbot, window, path)
    assert main(["plan", str(path), "--budget", "1G", "--json", "--no-measure"]) == 0
    cli = json.loads(capsys.readouterr().out)
    window.apply_request(budget=Budget.of(GIB))
    assert (window.session.view.plan.ctx, window.session.view.plan.ctx_cap) == (cli["ctx"], cli["ctx_cap"]) == (4096, 4096)
    type_into(qtbot, window, "ctxCapEdit", "3000")
    assert window.session.view.plan.ctx_cap == 3000
    type_into(qtbot, window, "ctxEdit", "700")
    assert window.session.view.plan.ctx == 700


def test_prefer_context_is_the_ctx_first_ranking(qtbot, make_window):
    window = make_window()
    open_model(qtbot, window, LLAMA8B)
    window.apply_request(budget=Budget.of(6 * GIB))
    speed_first = window.session.view.plan
    assert (speed_first.n_pinned, speed_first.ctx_policy) == (32, CtxPolicy.SPEED)
    child(window, "preferContext").setChecked(True)
    settle(qtbot, window)
    plan = window.session.view.plan
    assert (plan.ctx, plan.n_pinned, plan.ctx_policy) == (40_832, 0, CtxPolicy.CONTEXT)
    assert child(window, "ctxValue").text() == "40,832 tokens (auto, context first)"


def test_the_ring_knob_spans_the_cores_range_and_says_what_was_planned(qtbot, make_window):
    window = make_window()
    open_model(qtbot, window, LLAMA8B)
    buffers, note = child(window, "buffersSpin"), child(window, "ringNote")
    assert (buffers.minimum(), buffers.maximum()) == (1, 8)
    buffers.setValue(8)
    window.apply_request(budget=Budget.of(4 * GIB))
    ring = window.session.view.plan.ring
    assert (ring.requested, ring.planned, ring.reason) == (8, 1, RingReason.ONE_PINS_MORE)
    assert note.isVisible() and note.text().startswith("requested 8, planned 1: 1 buffer pins")
    buffers.setValue(1)
    settle(qtbot, window)
    assert not note.isVisible()


def test_typed_bandwidths_reach_the_estimates_and_say_typed(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model())
    before = window.session.view.plan_speed
    type_into(qtbot, window, "bwRam", "100G")
    speed = window.session.view.plan_speed
    assert speed.ram.bytes_per_s == 100 * GIB and speed.ram.source is BandwidthSource.TYPED
    assert speed.tok_s > before.tok_s and "100.00 GiB/s (typed" in child(window, "reportView").toPlainText()
    type_into(qtbot, window, "bwDisk", "fast")
    assert child(window, "bandwidthError").isVisible() and window.session.view.plan_speed == speed
    type_into(qtbot, window, "bwRam", "")
    assert window.session.view.plan_speed.ram.source is BandwidthSource.ASSUMED


def test_the_measured_bandwidths_are_the_probes_and_come_per_model(qtbot, make_window, write_model):
    calls: list[str] = []

    def backend(path: str):
        calls.append(path)
        figures = Bandwidths(ram=replace(Bandwidths().ram, bytes_per_s=7 * GIB, source=BandwidthSource.MEASURED))
        return figures, ("DISK not measured: no weights",)

    window = make_window(bandwidth_backend=backend)
    path = write_model()
    with qtbot.waitSignal(window.bandwidthsMeasured, timeout=10000):
        open_model(qtbot, window, path)
    assert calls == [str(path)] and window.bandwidths_measured()
    assert window.session.view.plan_speed.ram.bytes_per_s == 7 * GIB
    assert "(measured" in child(window, "bwRam").placeholderText()


def test_measure_again_measures_this_machine_for_real_and_keeps_it(qtbot, make_window, write_model,
                                                                  private_data_dir):
    window = make_window()
    open_model(qtbot, window, write_model())
    qtbot.waitUntil(window.bandwidths_measured, timeout=10000)
    assert window.session.view.plan_speed.ram.source is BandwidthSource.ASSUMED
    with qtbot.waitSignal(window.bandwidthsMeasured, timeout=20000):
        child(window, "measureAgain").click()
    speed = window.session.view.plan_speed
    assert speed.ram.source is BandwidthSource.MEASURED and "-thread read of" in speed.ram.detail
    date = time.strftime("%Y-%m-%d", time.gmtime(speed.ram.measured_at))
    assert child(window, "bwRam").placeholderText().endswith(f"(measured {date})")
    assert (private_data_dir / "machine-speed.json").is_file()
    assert f"measured on {date}" in child(window, "reportView").toPlainText()


def test_a_gpus_own_bandwidth_is_the_vram_figure_the_editor_shows(qtbot, make_window, write_model):
    window = make_window(probe_backend=lambda: with_presets("RTX 4090", machine_32g()))
    qtbot.waitUntil(lambda: window.session.state.machine is not None, timeout=5000)
    open_model(qtbot, window, write_model())
    assert child(window, "bwVram").placeholderText() == "938.77 GiB/s (cited)"  # 1008 GB/s, the spec sheet's
    assert "rtx-4090" in child(window, "bwVram").toolTip()


def test_the_prompt_length_is_a_control_and_the_side_panel_gives_the_first_token(qtbot, make_window):
    window = make_window(probe_backend=machine_32g)
    open_model(qtbot, window, LLAMA8B)
    window.apply_request(budget=Budget.of(6 * GIB))
    settle(qtbot, window)
    decode = child(window, "fitDecode")
    assert "for a 1,000-token prompt" in decode.text() and decode.text().startswith("decode ≈ ")
    prompt = child(window, "promptTokens")
    assert (prompt.minimum(), prompt.value()) == (1, 1000)
    prompt.setValue(8000)
    settle(qtbot, window)
    assert window.session.state.prompt_tokens == 8000 and "for a 8,000-token prompt" in decode.text()
    assert window.session.view.plan_speed.prefill.prompt_tokens == 8000
    expected = derive(window.session.state)
    assert decode.text() == speed_summary(expected.full_load.speed)
    assert "for a 8,000-token prompt" in child(window, "reportView").toPlainText()


def test_the_sweeps_fourth_plot_is_decode_tok_s_as_the_cli_prints_it(qtbot, make_explorer, write_model, capsys):
    explorer = make_explorer()
    window, sweep = explorer.window, explorer.whatif.sweep
    qtbot.waitUntil(lambda: window.session.state.machine is not None, timeout=5000)
    path = write_model()
    open_model(qtbot, window, path)
    window.apply_request(budget=Budget.of(initial_budget(window.session.view.thresholds)))  # some layers stream
    with qtbot.waitSignal(sweep.sweepFinished, timeout=20000):
        explorer.whatif.sweep_dock.show()
        explorer.whatif.sweep_dock.raise_()
    qtbot.waitUntil(lambda: not sweep.worker.busy and sweep.result() is not None, timeout=20000)
    available = window.session.state.machine.host_available
    assert main(["sweep", str(path), "--budgets", sweep.range_edit.text(), "--json", "--no-measure",
                 "--host-available", str(available)]) == 0
    cli = json.loads(capsys.readouterr().out)
    x, y = sweep.chart.curves["tok_s"].getData()
    assert np.array_equal(x, [r["budget"] for r in cli["rows"]])
    want = np.array([np.nan if r["tok_s"] is None else r["tok_s"] for r in cli["rows"]])
    assert np.array_equal(y, want, equal_nan=True)
    at_4096 = [r["tok_s"] for r in cli["rows"] if r["feasible"] and r["ctx"] == 4096 and r["stream_bytes_per_token"]]
    assert len(at_4096) > 2 and at_4096 == sorted(at_4096)  # at one ctx, decode climbs with the pinned count
    assert sweep.chart.plots["tok_s"].titleLabel.text == "Decode tok/s at the start of a conversation (estimate)"


def test_the_window_draws_what_derive_gives_for_its_own_state(qtbot, make_window):
    window = make_window()
    open_model(qtbot, window, load_model(LLAMA8B).path)
    view = derive(window.session.state)
    assert window.session.view == view
    assert ExplorerState(**{**window.session.state.__dict__}) == window.session.state



def test_a_typed_backend_and_compute_rates_reach_the_estimates_shown(qtbot, make_window, write_model):
    """The machine editor reads --backend, --gpu-tflops and --cpu-gflops as the command line does (the core's
    parse_backend, GPU_TFLOPS, CPU_GFLOPS); the full load's line and the plan's estimate take them."""
    window = make_window(probe_backend=lambda: hypothetical_machine(32 * GIB, gpu_count=1, gpu_total=24 * GIB))
    qtbot.waitUntil(lambda: window.session.state.machine is not None, timeout=5000)
    open_model(qtbot, window, write_model())
    shown = child(window, "fitDecode")
    speed = window.session.view.full_load.speed
    assert speed.gpu is not None and speed.gpu.compute is None and speed.prefill is None  # a GPU of unknown rate
    assert "--gpu-tflops gives it" in shown.text()
    type_into(qtbot, window, "typedGpuTflops", "100")
    speed = window.session.view.full_load.speed
    assert speed.gpu.compute.flops_per_s == 100 * 10**12 and speed.gpu.compute.source is BandwidthSource.TYPED
    assert speed.prefill is not None and shown.text() == speed_summary(speed) and "first token after" in shown.text()
    type_into(qtbot, window, "typedGpuTflops", "fast")
    assert child(window, "machineError").isVisible() and "a GPU FP16 rate must be a number" in child(
        window, "machineError").text()
    assert window.session.view.full_load.speed == speed  # a bad value changes nothing
    box = child(window, "typedBackend")
    type_into(qtbot, window, "typedGpuTflops", "100")
    box.setFocus()
    box.lineEdit().selectAll()
    qtbot.keyClicks(box.lineEdit(), "vulkan")
    qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Return)
    settle(qtbot, window)
    assert window.session.view.full_load.speed.gpu.speed.backend is Backend.VULKAN
    plan_rate = window.session.view.plan_speed.prefill.compute
    type_into(qtbot, window, "typedCpuGflops", "5")
    rate = window.session.view.plan_speed.prefill.compute
    assert rate.flops_per_s == 5 * 10**9 and rate.source is BandwidthSource.TYPED and rate != plan_rate
