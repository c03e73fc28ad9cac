"""Which pools a fit fills: unified memory counted once, integrated and unreadable GPUs left out,
per-device reserves, and the user's tensor split."""

from __future__ import annotations

from dataclasses import replace

import pytest
from gguf.constants import GGMLQuantizationType as T
from gguf_factory import ArchDesc, write_gguf
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_budget.core.errors import RequestError
from gguf_budget.core import load_model
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.runtime_types import EngineSettings, SplitMode
from gguf_budget.core.fit.types import FitRequest, Reserves
from gguf_budget.core.machine.apple import AppleReading, apple_gpu
from gguf_budget.core.machine.gpu import GpuInfo, GpuMemory, Vendor
from gguf_budget.core.machine.snapshot import HardwareSnapshot, hypothetical_machine

MiB = 1024**2
GiB = 1024**3
DESC = ArchDesc(n_layer=12, n_embd=128, n_ff=256, n_vocab=4096, layer_mix={i: {"ffn_up": T.F32} for i in range(0, 12, 3)})


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    return load_model(write_gguf(tmp_path_factory.mktemp("fit") / "m.gguf", DESC, "header_only")[0])


def apple_machine(memsize: int, available: int, wired_limit_mb: int | None) -> HardwareSnapshot:
    gpu = apple_gpu(AppleReading(memsize, "Apple M2", True, wired_limit_mb), 0)
    return HardwareSnapshot(captured_at=0.0, host_total=memsize, host_available=available, cgroup_limit=None,
                            gpus=(gpu,), gpu_error=None, source="probe")


@settings(max_examples=150, deadline=None)
@given(memsize=st.integers(8 * MiB, 96 * MiB), available_part=st.floats(0, 1), wired=st.none() | st.integers(0, 96),
       ctx=st.integers(1, 4096), g=st.none() | st.integers(0, 13), host_reserve=st.integers(0, 8 * MiB),
       gpu_reserve=st.integers(0, 4 * MiB))
def test_host_and_gpu_placement_on_an_apple_machine_never_exceed_the_one_pool(spec, memsize, available_part, wired,
                                                                             ctx, g, host_reserve, gpu_reserve):
    machine = apple_machine(memsize, int(memsize * available_part), wired)
    e = estimate_fit(spec, machine, FitRequest(ctx=ctx, gpu_layers=g, reserves=Reserves(host_reserve, gpu_reserve)))
    host, gpu = e.devices
    placed = e.weights.gpu_exact + e.weights.host_exact + e.kv.engine
    server = host.server  # llama-server's prompt cache (and checkpoints) live in the same pool
    compute = host.compute + gpu.compute  # both compute buffers (and the logits row) are in the one pool too
    beside = host.sampler + host.kv_cells  # the process's sampler and KV cells' metadata, on the host
    assert host.need == host.weights + host.kv + gpu.weights + gpu.kv + server + compute + beside
    assert host.need == placed + server + compute + beside
    if e.verdict.admitted:
        assert placed + server + compute + beside <= machine.host_available - host_reserve  # never beyond the pool
        assert gpu.need <= max(machine.gpus[0].total - gpu_reserve, 0)  # nor beyond Metal's working set (usable ≥ 0)
    elif e.verdict == "does_not_fit":
        assert host.shortfall or gpu.shortfall


def test_a_discrete_gpu_leaves_the_igpu_out_and_says_so(spec):
    dgpu = GpuInfo(index=0, name="NVIDIA GeForce RTX 4090", total=24 * GiB, free=24 * GiB, used=0, vendor=Vendor.NVIDIA)
    igpu = GpuInfo(index=1, name="Intel GPU [8086:a7a0]", total=12 * GiB, free=12 * GiB, used=None, vendor=Vendor.INTEL,
                   memory=GpuMemory.GTT, integrated=True)
    machine = HardwareSnapshot(captured_at=0.0, host_total=16 * GiB, host_available=16 * GiB, cgroup_limit=None,
                               gpus=(dgpu, igpu), gpu_error=None, source="probe")
    e = estimate_fit(spec, machine, FitRequest(ctx=256))
    assert [d.name for d in e.devices] == ["host", "gpu0"]
    assert any("GPU 1 (Intel GPU [8086:a7a0]) is integrated" in n for n in e.notes)
    alone = estimate_fit(spec, replace(machine, gpus=(replace(igpu, index=0),)), FitRequest(ctx=256))
    assert [d.name for d in alone.devices] == ["host", "gpu0"] and alone.devices[0].shared > 0  # GTT: one pool


def test_a_gpu_whose_memory_is_unknown_is_named_and_not_placed_on(spec):
    lost = GpuInfo(index=0, name="NVIDIA GPU [10de:2684]", total=None, free=None, used=None, vendor=Vendor.NVIDIA,
                   reason="memory unknown: no driver")
    e = estimate_fit(spec, HardwareSnapshot(captured_at=0.0, host_total=16 * GiB, host_available=16 * GiB,
                                            cgroup_limit=None, gpus=(lost,), gpu_error=None,
                                            source="probe"), FitRequest(ctx=256))
    assert (e.verdict, e.gpu_layers, [d.name for d in e.devices]) == ("cpu_only", 0, ["host"])
    assert any("memory unknown (memory unknown: no driver)" in n and "cannot place layers" in n for n in e.notes)


def test_a_gpu_without_published_usage_is_budgeted_at_its_total(spec):
    arc = GpuInfo(index=0, name="Intel GPU [8086:56a0]", total=16 * GiB, free=None, used=None, vendor=Vendor.INTEL,
                  reason="xe publishes no VRAM usage")
    e = estimate_fit(spec, HardwareSnapshot(captured_at=0.0, host_total=16 * GiB, host_available=16 * GiB,
                                            cgroup_limit=None, gpus=(arc,), gpu_error=None,
                                            source="probe"), FitRequest(ctx=256))
    assert e.devices[1].available == 16 * GiB and e.verdict == "fits_gpu"
    assert any("free memory not published; its total, 16.00 GiB, is taken as free" in n for n in e.notes)


def test_reserves_are_editable_per_device(spec):
    machine = hypothetical_machine(64 * GiB, gpu_count=3, gpu_total=8 * GiB)
    default = estimate_fit(spec, machine, FitRequest(ctx=256))
    assert [d.reserve for d in default.devices] == [6 * GiB, 3 * GiB // 2, 0, 0]
    edited = estimate_fit(spec, machine, FitRequest(ctx=256, reserves=Reserves(per_gpu=(0, GiB))))
    assert [d.reserve for d in edited.devices] == [6 * GiB, 0, GiB, 0]  # entries win; GPU 2 keeps 0
    with pytest.raises(RequestError):
        Reserves(per_gpu=(-1,))


def test_a_user_tensor_split_moves_layers_as_llama_cpp_does(spec):
    # 12 blocks + output = 13 slots on GPUs of 8 and 4 GiB: by free memory j/13 < 2/3 for j ≤ 8 → 9 and 4;
    # -ts 1,1: j/13 < .5 for j ≤ 6 → 7 and 6; -ts 1,3: j/13 < .25 for j ≤ 3 → 4 and 9.
    machine = HardwareSnapshot(captured_at=0.0, host_total=64 * GiB, host_available=64 * GiB, cgroup_limit=None, gpus=(
        GpuInfo(index=0, name="a", total=8 * GiB, free=8 * GiB, used=0), GpuInfo(
            index=1, name="b", total=4 * GiB, free=4 * GiB, used=0,
        )), gpu_error=None, source="hypothetical")
    for split, runs in ((None, [(0, 9), (9, 13)]), ((1.0, 1.0), [(0, 7), (7, 13)]), ((1.0, 3.0), [(0, 4), (4, 13)])):
        e = estimate_fit(spec, machine, FitRequest(ctx=256, tensor_split=split))
        assert [d.slots for d in e.devices[1:]] == runs
    assert any("-ts 1,3" in n for n in estimate_fit(spec, machine, FitRequest(ctx=256, tensor_split=(1, 3))).notes)


@pytest.mark.parametrize("split", [(), (-1.0,), (float("nan"), 1.0), (1.0,) * 16])
def test_bad_tensor_splits_are_refused(split):
    with pytest.raises(RequestError):
        FitRequest(tensor_split=split)


def test_split_mode_none_puts_every_offloaded_layer_on_the_main_gpu(tmp_path):
    """-sm none -mg 1: the second GPU holds every offloaded slot; the first is not one of the model's devices at all
    (src/llama.cpp `llama_model_load_from_file_impl`: `model->devices = {devices[main_gpu]}`), so it holds nothing."""
    spec = load_model(write_gguf(tmp_path / "m.gguf", ArchDesc(n_layer=4), "header_only")[0])
    machine = hypothetical_machine(64 * 1024**3, gpu_count=2, gpu_total=24 * 1024**3)
    e = estimate_fit(spec, machine, FitRequest(ctx=512, gpu_layers=5,
                                               engine=EngineSettings(split_mode=SplitMode.NONE, main_gpu=1)))
    host, second = e.devices
    assert second.name == "gpu1" and second.slots == (0, 5) and second.weights > 0
    assert e.memory is not None and e.memory.devices[1].compute
