"""The machine panel's words and bars over real fit estimates: bars add up, claims stay apart."""

from __future__ import annotations

import pytest
from gguf_factory import ArchDesc, write_gguf
from hypothesis import given, settings, strategies as st

from gguf_budget.core import load_model
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.types import FitRequest, Reserves
from gguf_budget.core.views.fit_report import verdict_text
from gguf_budget.core.machine.snapshot import GpuInfo, HardwareSnapshot, hypothetical_machine
from gguf_budget.core.views.machine_view import (
    NO_GPU_WORDS, claim_rows, gpu_status, gpu_status_detail, kv_rows, pool_bars, snapshot_when, split_text, weight_rows,
)
from gguf_budget.core.units import human_bytes

GIB = 1 << 30


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    path = write_gguf(tmp_path_factory.mktemp("m") / "m.gguf", ArchDesc(n_layer=4, n_vocab=8192), "header_only")[0]
    return load_model(path)


@settings(max_examples=60, deadline=None)
@given(total=st.integers(0, 1 << 40), free_part=st.floats(0, 1), reserve=st.integers(0, 1 << 38),
       gpu_total=st.integers(1, 1 << 37), gpu_free_part=st.floats(0, 1))
def test_each_bar_splits_its_total_into_used_reserve_and_usable(spec, total, free_part, reserve, gpu_total,
                                                                 gpu_free_part):
    machine = hypothetical_machine(int(total * free_part), total, 1, gpu_total, int(gpu_total * gpu_free_part))
    fit = estimate_fit(spec, machine, FitRequest(reserves=Reserves(host=reserve, gpu=reserve // 2)))
    bars = pool_bars(fit)
    assert [b.total for b in bars] == [total, gpu_total]
    for bar, device in zip(bars, fit.devices, strict=True):
        assert bar.used + bar.reserve + bar.usable == bar.total
        assert bar.usable == max(device.available - device.reserve, 0)
        assert (bar.need, bar.shortfall) == (device.need, device.shortfall)


# Host need, all on the host: token_embd 557,056 + 4 blocks × 39,680 + output 557,056 + output_norm 256
# = 1,273,088 bytes of weights, plus KV 4 layers × 2,048 cells × 2 KV heads × (16 + 16) × 2 bytes
# = 1,048,576, plus the CPU's compute buffer 3,289,120 (the scheduler's replay) and the logits row 32,768, plus the
# sampler 12 × 8,192 = 98,304 and the KV cells' metadata 52 × 2,048 = 106,496 (`runtime_memory` Rules 11–12):
# 5,848,352 bytes (5.58 MiB), all short when the whole 1 GiB is reserved.
@pytest.mark.parametrize("machine, verdict", [
    (hypothetical_machine(64 * GIB), "fits CPU-only — everything in host RAM (slowest)"),
    (hypothetical_machine(64 * GIB, gpu_count=1, gpu_total=24 * GIB),
     "fits on GPU — all 4 blocks and the output layer offloaded"),
    (hypothetical_machine(1 * GIB), "does not fit — host short by 5.58 MiB: weights 1.21 MiB + KV 1.00 MiB + "
                                    "compute 3.17 MiB + samplers 96.00 KiB + KV cells' metadata 104.00 KiB > 0 B "
                                    "usable"),
])
def test_verdict_words(spec, machine, verdict):
    reserves = Reserves(host=1 * GIB) if machine.host_available == GIB else Reserves()
    fit = estimate_fit(spec, machine, FitRequest(reserves=reserves))
    assert verdict_text(fit) == verdict


def test_a_split_names_its_layer_count_and_the_auto_choice(spec):
    fit = estimate_fit(spec, hypothetical_machine(64 * GIB, gpu_count=1, gpu_total=24 * GIB),
                       FitRequest(gpu_layers=2))
    assert verdict_text(fit) == "fits split — the output layer and 1 of 4 blocks on GPU, the rest in host RAM (slower)"
    assert split_text(fit) == "2 of 5 slots on GPU (4 blocks + the output layer; auto: 5); output layer on GPU"
    coarse, exact = weight_rows(fit)
    half = fit.weights.file_bytes * 2 // 4
    assert coarse == ("Weights, by file share", f"GPU {human_bytes(half)} · host "
                      f"{human_bytes(fit.weights.file_bytes - half)} (file size × GPU layers / blocks)")
    # GPU: output 557,056 + norm 256 + the last block 39,680 = 596,992 bytes;
    # host: token_embd 557,056 + 3 blocks 119,040 = 676,096 bytes.
    assert exact == ("Weights, exact", "GPU 583.00 KiB · host 660.25 KiB (tensor inventory)")
    lower, engine = kv_rows(fit)
    assert lower == ("KV lower bound", "1.00 MiB (FP16, ctx 2,048, 4 attention layers)")
    assert engine[1].startswith("1.00 MiB (f16, 2,048 cells): GPU 256.00 KiB · host 768.00 KiB")


def test_three_claims_in_order_and_never_merged(spec):
    fit = estimate_fit(spec, hypothetical_machine(64 * GIB), FitRequest())
    rows = claim_rows(fit, snapshot_when(fit.snapshot, 0.0))
    assert [name for name, _ in rows] == ["File size (storage)", "Admission (estimate)", "Runtime evidence"]
    storage, admission, evidence = (text for _, text in rows)
    assert "the complete file its header describes" in storage and "RAM or VRAM" in storage
    assert admission == ("admitted against the hypothetical machine (typed in, not measured); "
                         "an estimate, not a guarantee")
    assert evidence == "none — only a real run can measure this"


def probed(captured_at: float = 1000.0, gpus: tuple[GpuInfo, ...] = (), error: str | None = None):
    return HardwareSnapshot(captured_at=captured_at, host_total=64 * GIB, host_available=32 * GIB, cgroup_limit=None,
                            gpus=gpus, gpu_error=error, source="probe")


@pytest.mark.parametrize("now, text", [
    (1000.0, "snapshot probed 0 s ago"), (1012.9, "snapshot probed 12 s ago"), (900.0, "snapshot probed 0 s ago"),
    (1000.0 + 300, "snapshot probed 5 min ago"), (1000.0 + 7200, "snapshot probed 2 h ago"),
])
def test_snapshot_age(now, text):
    assert snapshot_when(probed(), now) == text


GPU = GpuInfo(index=0, name="RTX", total=24 * GIB, free=20 * GIB, used=4 * GIB)


@pytest.mark.parametrize("snapshot, text", [
    (probed(gpus=(GPU,)), ""),
    (probed(gpus=(GPU,), error="GPU 1: no permission"), "GPU problem: GPU 1: no permission"),
    (probed(error="the NVIDIA driver is not loaded"), "No GPU found — everything runs on the CPU"),
    (probed(), "No GPU found — everything runs on the CPU"),
    (probed(error="left out by --no-gpu"), "no GPU: left out by --no-gpu"),     # a person's reason is said
    (hypothetical_machine(8 * GIB), "no GPU in this hypothetical machine"),
])
def test_gpu_status(snapshot, text):
    assert gpu_status(snapshot) == text
    detail = gpu_status_detail(snapshot)
    assert (detail != "") == (text == NO_GPU_WORDS)
    assert text != NO_GPU_WORDS or (snapshot.gpu_error or "no GPU found") in detail
    assert snapshot_when(hypothetical_machine(GIB), 5.0) == "hypothetical machine (typed in, not measured)"
