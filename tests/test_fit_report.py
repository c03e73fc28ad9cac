"""The words and the JSON of `hw` and `fit`: what a person reads must match the numbers."""

from __future__ import annotations

import json

from gguf_factory import ArchDesc

from gguf_budget.core.machine.cgroup import CgroupReading
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.types import FitRequest
from gguf_budget.core.views.fit_report import fit_dict, fit_text, snapshot_dict, snapshot_text
from gguf_budget.core.machine.gpu import GpuMemory, Vendor
from gguf_budget.core.machine.snapshot import GpuInfo, hypothetical_machine, snapshot_from_readings
from gguf_budget.core.units import human_bytes

GiB = 1024**3


def test_a_probe_without_gpus_says_so_plainly_with_the_reason():
    s = snapshot_from_readings(1700000000.0, 16 * GiB, 12 * GiB, [CgroupReading(8 * GiB, GiB)],
                               gpu_error="the NVIDIA driver is not loaded", swap_total=0)
    assert snapshot_text(s).splitlines() == [
        "Snapshot   2023-11-14 22:13:20 UTC — probed",
        "Host RAM   7.00 GiB available of 8.00 GiB total",
        "Container  memory cgroup limit 8.00 GiB (applied to the RAM figures)",
        "Swap       none — never counted as RAM",
        "GPU        No GPU found — everything runs on the CPU",
    ]
    assert snapshot_text(s, gpu_detail=True).splitlines()[-1] == (
        "GPU        No GPU found — everything runs on the CPU (the NVIDIA driver is not loaded)")


def test_gpus_are_listed_with_their_memory_and_partial_failures():
    gpu = GpuInfo(index=1, name="NVIDIA GeForce RTX 4090", total=24 * GiB, free=20 * GiB, used=4 * GiB,
                  vendor=Vendor.NVIDIA, bandwidth=1_008_096_000_000)
    apu = GpuInfo(index=2, name="AMD GPU [1002:15bf]", total=15 * GiB, free=14 * GiB, used=GiB, vendor=Vendor.AMD,
                  memory=GpuMemory.GTT, integrated=True)
    lost = GpuInfo(index=3, name="NVIDIA GPU [10de:2684]", total=None, free=None, used=None, vendor=Vendor.NVIDIA,
                   reason="memory unknown: no NVML")
    s = snapshot_from_readings(1700000000.0, 16 * GiB, 12 * GiB, gpus=[gpu, apu, lost], gpu_error="GPU 0: lost")
    text = snapshot_text(s)
    assert ("GPU 1       NVIDIA GeForce RTX 4090 (NVIDIA, dedicated VRAM): 20.00 GiB free of 24.00 GiB "
            "(4.00 GiB used); bandwidth 1008 GB/s") in text
    assert ("GPU 2       AMD GPU [1002:15bf] (AMD, GTT budget (host RAM the GPU maps), integrated): "
            "14.00 GiB free of 15.00 GiB (1.00 GiB used)") in text
    assert ("GPU 3       NVIDIA GPU [10de:2684] (NVIDIA, dedicated VRAM): unknown free of unknown — "
            "memory unknown: no NVML") in text
    assert "GPU errors  GPU 0: lost" in text
    gpus = json.loads(json.dumps(snapshot_dict(s)))["gpus"]
    assert [(g["vendor"], g["memory"], g["integrated"], g["total"], g["bandwidth"]) for g in gpus] == [
        ("nvidia", "vram", False, 24 * GiB, 1_008_096_000_000), ("amd", "gtt", True, 15 * GiB, None),
        ("nvidia", "vram", False, None, None)]


def test_a_typed_in_machine_without_a_time_shows_none():
    s = hypothetical_machine(8 * GiB)
    assert snapshot_text(s).splitlines()[0] == "Snapshot  hypothetical machine (typed in, not measured)"
    assert snapshot_dict(s)["captured_at_utc"] is None
    assert "GPU       none in this hypothetical machine" in snapshot_text(s)


def test_fit_dict_is_json_and_matches_the_estimate(model):
    spec = model(ArchDesc(n_layer=3))
    e = estimate_fit(spec, hypothetical_machine(6 * GiB + 1000, gpu_count=2, gpu_total=2 * GiB), FitRequest(ctx=300))
    d = json.loads(json.dumps(fit_dict(e)))
    assert (d["verdict"], d["gpu_layers"], d["output_on_gpu"], d["ctx"], d["kv"]["cells"]) == (
        e.verdict, 4, True, 300, 512)
    assert [dev["name"] for dev in d["devices"]] == ["host", "gpu0", "gpu1"]
    assert sum(dev["weights"] for dev in d["devices"]) == spec.tensor_bytes
    assert d["moe_cpu_experts"] is None and d["claims"]["runtime_evidence"] is None


def test_fit_text_names_each_devices_need_and_the_moe_shortfall(model):
    spec = model(ArchDesc(arch="qwen2moe", n_layer=2, n_expert=4, n_expert_used=2))
    roomy = hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=8 * GiB)
    # at -ngl 0 the GPU still holds the compute buffer of the prompt's offloaded large batches: 1000 B beside it
    offload = estimate_fit(spec, roomy, FitRequest(ctx=256, gpu_layers=0)).memory.devices[1].compute
    gpu = 3 * GiB // 2 + offload + 1000
    e = estimate_fit(spec, hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=gpu), FitRequest(ctx=256))
    text = fit_text(e)
    rows = {line[:12].strip(): line[13:] for line in text.splitlines()}
    assert rows["Verdict"] == "fits CPU-only — everything in host RAM (slowest)"
    assert rows["MoE offload"].startswith("even --n-cpu-moe 2 (every expert in host RAM) does not fit: gpu0 short by")
    assert "Need, gpu0" in text and (f"needs {human_bytes(offload)} of {human_bytes(offload + 1000)} usable "
                                     f"({human_bytes(gpu)} free − 1.50 GiB reserve; {human_bytes(gpu)} total)") in text
    moe = next(line for line in text.splitlines() if line.startswith("MoE option"))
    assert moe.endswith(f"does not fit, gpu0 short by {human_bytes(e.moe.shortfall['gpu0'])}")
