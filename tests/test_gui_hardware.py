"""The machine panel: the real probe on this machine, injected snapshots, what-if GPUs and reserves.

The expected fit is always `estimate_fit` called directly with the model as the core loads
it, the machine and the ctx, KV type and reserves the test set, never with what the window
reports of itself; the probe is injected at its boundary (a callable returning a snapshot).
"""

from __future__ import annotations

from dataclasses import replace

import threading
import time

from gui_support import GIB, LLAMA70B, child, open_model, settle, small_machine
from PySide6.QtCore import Qt

from gguf_budget.core.machine.cpu_features import read_cpu_features
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import ModelSpec, load_model
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.types import FitRequest, Reserves
from gguf_budget.core.machine.snapshot import NVML_REASONS, hypothetical_machine, snapshot_from_readings
from gguf_budget.core.machine.probe import probe_hardware
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.machine_view import NO_GPU_WORDS, claim_rows, kv_rows, pool_bars, snapshot_when, weight_rows
from gguf_budget.core.views.runtime_report import band_rows


def here(machine):
    """A typed machine as the window builds it: with this machine's CPU features (its repacked copies priced as here)."""
    return replace(machine, cpu_features=read_cpu_features())


def test_the_real_probe_shows_this_machines_gpus_or_why_there_are_none(qtbot, make_window, write_model):
    window = make_window(probe_backend=probe_hardware)
    open_model(qtbot, window, write_model())
    qtbot.waitUntil(lambda: window.session.view.fit is not None, timeout=20000)
    snapshot = window.session.state.machine
    assert snapshot.source == "probe" and snapshot.host_total > 0
    status = child(window, "gpuStatus")
    if snapshot.gpus:  # a bar for each GPU the fit places on (integrated ones beside a discrete GPU are not)
        bars = pool_bars(window.session.view.fit)[1:]
        assert [child(window, f"gpuBar{i}").pool() for i in range(len(bars))] == list(bars)
    else:
        assert status.isVisible()
        assert status.text() == NO_GPU_WORDS and snapshot.gpu_error in status.toolTip()
        assert window.session.view.fit.gpu_layers == 0
    assert child(window, "hostBar").pool().total == snapshot.host_total
    assert child(window, "snapshotAge").text().startswith("Snapshot probed")


def test_a_probe_without_a_driver_says_so(qtbot, make_window, write_model):
    def no_driver():
        return snapshot_from_readings(time.time(), 64 * GIB, 40 * GIB, gpu_error=NVML_REASONS[9])

    window = make_window(probe_backend=no_driver)
    open_model(qtbot, window, write_model())
    qtbot.waitUntil(lambda: window.session.view.fit is not None)
    status = child(window, "gpuStatus")
    assert status.text() == "No GPU found — everything runs on the CPU"
    assert status.toolTip() == "Why: the NVIDIA driver is not loaded"
    assert "CPU-only" in child(window, "fitVerdict").text()


NAMED_ROWS = {  # every figure of the panel has a name a test (or a screen reader user) can find
    "weightsByFileShare": "Weights, by file share", "weightsExact": "Weights, exact",
    "kvLowerBound": "KV lower bound", "kvEngine": "KV engine",
    "peakRssFull": "Peak RSS, full context", "peakRssShort": "Peak RSS, short prompt",
    "claimStorage": "File size (storage)", "claimAdmission": "Admission (estimate)",
    "claimRuntime": "Runtime evidence",
}


def test_each_figure_sits_in_a_label_named_for_it(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model())
    qtbot.waitUntil(lambda: window.session.view.fit is not None)
    fit = window.session.view.fit
    rows = dict((*weight_rows(fit), *kv_rows(fit), *band_rows(fit),
                 *claim_rows(fit, snapshot_when(fit.snapshot, time.time()))))
    for name, title in NAMED_ROWS.items():
        if title == "Admission (estimate)":  # says how old the snapshot is, to the second
            assert child(window, name).text().startswith(rows[title].split(" against ")[0])
        else:
            assert child(window, name).text() == rows[title]


def tick_hypothetical(window, host: str, gpus: int, gpu_total: str) -> None:
    child(window, "hypoHostAvailable").setText(host)
    child(window, "hypoGpuCount").setValue(gpus)
    child(window, "hypoGpuTotal").setText(gpu_total)
    child(window, "hypotheticalBox").setChecked(True)


def expected_fit(model: ModelSpec, snapshot, ctx: int, **kw):
    """The fit at the ctx the test asked for, the default KV type (f16) and any other FitRequest field."""
    return estimate_fit(model, snapshot, FitRequest(ctx=ctx, kv_type="f16", **kw))


def open_70b(qtbot, window, write_model) -> ModelSpec:
    """Open the 70B shape in the window; returns it as the core loads it."""
    path = write_model(LLAMA70B, name="70b.gguf")
    open_model(qtbot, window, path)
    return load_model(path)


def test_a_hypothetical_24_gib_gpu_changes_the_split(qtbot, make_window, write_model):
    window = make_window()
    model = open_70b(qtbot, window, write_model)
    window.apply_request(ctx=8192)
    qtbot.waitUntil(lambda: window.session.view.fit is not None)
    before = window.session.view.fit
    assert before == expected_fit(model, small_machine(), 8192)
    assert before.gpu_layers == 0

    tick_hypothetical(window, "128G", 1, "24G")
    after = window.session.view.fit
    machine = here(hypothetical_machine(128 * GIB, gpu_count=1, gpu_total=24 * GIB))
    assert window.session.state.machine == machine
    assert after == expected_fit(model, machine, 8192)
    assert 0 < after.gpu_layers < model.n_layer
    assert child(window, "gpuSplit").text().startswith(f"{after.gpu_layers} of {model.n_layer + 1} slots on GPU")
    assert child(window, "gpuBar0").pool().total == 24 * GIB
    assert not child(window, "gpuStatus").isVisible()

    child(window, "hypotheticalBox").setChecked(False)
    assert window.session.view.fit == before


def test_the_gpu_layer_spin_overrides_the_auto_split(qtbot, make_window, write_model):
    window = make_window()
    model = open_70b(qtbot, window, write_model)
    window.apply_request(ctx=4096)
    tick_hypothetical(window, "256G", 2, "80G")
    spin = child(window, "gpuLayersSpin")
    assert spin.text() == "auto" and spin.maximum() == model.n_layer + 1
    spin.setValue(10)
    fit = window.session.view.fit
    machine = here(hypothetical_machine(256 * GIB, gpu_count=2, gpu_total=80 * GIB))
    assert fit == expected_fit(model, machine, 4096, gpu_layers=10)
    output_layer = model.output_table_bytes + model.global_bytes.output_norm
    assert fit.weights.gpu_exact == sum(model.layer_bytes[-9:]) + output_layer  # output first, then 9 blocks
    assert fit.auto_gpu_layers == model.n_layer + 1
    assert child(window, "weightsExact").text().startswith(f"GPU {human_bytes(fit.weights.gpu_exact)} · host")


def test_reserves_are_editable_and_bad_machine_text_keeps_the_last_fit(qtbot, make_window, write_model):
    window = make_window()
    path = write_model()
    open_model(qtbot, window, path)
    window.apply_request(ctx=2048)
    reserve = child(window, "reserveHost")
    reserve.setFocus()
    reserve.selectAll()
    qtbot.keyClicks(reserve, "10G")
    qtbot.keyClick(reserve, Qt.Key.Key_Return)
    fit = window.session.view.fit
    assert fit.reserves == Reserves(host=10 * GIB)
    assert child(window, "hostBar").pool().reserve == 10 * GIB
    assert fit == expected_fit(load_model(path), small_machine(), 2048, reserves=Reserves(host=10 * GIB))

    host = child(window, "hypoHostAvailable")
    host.setText("lots")
    child(window, "hypotheticalBox").setChecked(True)
    assert child(window, "machineError").isVisible()
    assert window.session.view.fit is fit


def test_refresh_probes_again_off_the_gui_thread(qtbot, make_window, write_model):
    threads = []

    def probe():
        threads.append(threading.current_thread())
        return small_machine()

    window = make_window(probe_backend=probe)
    open_model(qtbot, window, write_model())
    qtbot.waitUntil(lambda: len(threads) == 1 and window.session.state.machine is not None)
    with qtbot.waitSignal(window.hardwareProbed):
        qtbot.mouseClick(child(window, "refreshHardware"), Qt.MouseButton.LeftButton)
    assert len(threads) == 2
    assert threading.main_thread() not in threads


def test_the_three_claims_stay_apart(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model())
    qtbot.waitUntil(lambda: window.session.view.fit is not None)
    storage, admission, evidence = (child(window, name).text() for name in ("claimStorage", "claimAdmission", "claimRuntime"))
    assert "storage" not in admission and "says nothing about RAM or VRAM" in storage
    assert admission.startswith("admitted against the hypothetical machine") and "not a guarantee" in admission
    assert evidence.startswith("none")


def test_a_budget_tick_that_keeps_ctx_does_not_re_estimate_the_fit(qtbot, make_window, write_model):
    window = make_window(probe_backend=small_machine)
    open_model(qtbot, window, write_model())
    qtbot.waitUntil(lambda: window.session.view.fit is not None, timeout=20000)
    window.apply_request(ctx=256)
    settle(qtbot, window)
    fit = window.session.view.fit
    window.apply_request(budget=Budget.of(window.session.view.plan.budget.limit + 64 * 2**20))
    settle(qtbot, window)
    assert window.session.view.plan.ctx == 256 and window.session.view.fit is fit
    window.apply_request(ctx=512)
    settle(qtbot, window)
    assert window.session.view.fit is not fit and window.session.view.fit.kv.ctx == 512
