"""The verdict follows the devices: a load fits only if every device — each GPU, a GPU holding no layer but
computing a prompt's large batches, and the host — holds its weights + KV + compute buffer within its free memory
less its reserve (`devices` Rule 4); the automatic GPU layers and ctx ask the same test. And `-sm row`/`tensor` as
llama.cpp 0c1e570 takes them (`split_mode`), checked on real two-device RPC runs.

The compute buffers themselves are the scheduler's replay (`runtime_memory` Rule 5), checked buffer by buffer on
the real runs of tests/test_rpc_runs.py; here they are read from `memory.devices`, the figures `fit` shows."""

from __future__ import annotations

import re
import shlex
from dataclasses import replace
from pathlib import Path

import pytest
from gguf_factory import ArchDesc, write_gguf
from hypothesis import given, settings
from hypothesis import strategies as st
from rpc_runs import RpcRun
from runnable_model import multi_device_descs

from gguf_budget.core.fit.ctx.auto_ctx import auto_fit, largest_ctx
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.runtime_types import EngineSettings, SplitMode
from gguf_budget.core.fit.types import FitEstimate, FitRequest, Reserves
from gguf_budget.core.machine.gpu import GpuInfo, Vendor
from gguf_budget.core.machine.snapshot import hypothetical_machine, what_if
from gguf_budget.core.model.loader import load_model
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.fit_report import fit_dict, fit_text, verdict_text

GiB = 1024**3
MiB = 1024**2
DESC = ArchDesc(n_layer=4, n_vocab=8192)
CTX = 512
SPLIT_LOGS = Path(__file__).parent / "data" / "llamacpp-split-modes"


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    return load_model(write_gguf(tmp_path_factory.mktemp("verdict") / "m.gguf", DESC, "header_only")[0])


def lines(e: FitEstimate) -> list[tuple[str, int, int]]:
    """Per device: (name, weights + KV + compute buffer (+ the host's logits row) + what else it holds (the host's
    samplers and KV cells' metadata among it), usable)."""
    assert e.memory is not None
    out = []
    for d, m in zip(e.devices, e.memory.devices, strict=True):
        compute = (m.compute or 0) + (m.output if d.name == "host" else 0)
        out.append((d.name, d.weights + (d.kv or 0) + compute + d.shared + d.server + d.sampler + d.kv_cells, d.usable))
    return out


def test_the_second_gpus_compute_buffer_breaks_the_load(spec):
    """Two GPUs, every slot offloaded: the second reserves its own compute buffer (CUDA1, with pipeline parallelism's
    copies), which the old verdict left to a reserve it does not have by default."""
    machine = hypothetical_machine(64 * GiB, gpu_count=2, gpu_total=GiB)
    ask = FitRequest(ctx=CTX, gpu_layers=5, reserves=Reserves(gpu=0))
    roomy = estimate_fit(spec, machine, ask)
    second, buffer = roomy.devices[2], roomy.memory.devices[2]
    assert buffer.buffer == "CUDA1" and buffer.compute > second.weights + second.kv > 0
    exact = GiB - (second.weights + second.kv + buffer.compute)  # a reserve that leaves the second GPU just enough
    fits = estimate_fit(spec, machine, replace(ask, reserves=Reserves(gpu=0, per_gpu=(0, exact))))
    assert fits.verdict == "fits_gpu"
    short = estimate_fit(spec, machine, replace(ask, reserves=Reserves(gpu=0, per_gpu=(0, exact + 1))))
    assert (short.verdict, short.shortfall) == ("does_not_fit", {"gpu1": 1})
    reason = verdict_text(short)
    assert reason.startswith("does not fit — gpu1 short by 1 B: ") and f"compute {human_bytes(buffer.compute)}" in reason
    auto = estimate_fit(spec, machine, replace(ask, gpu_layers=None, reserves=Reserves(gpu=0, per_gpu=(0, exact + 1))))
    assert auto.gpu_layers < 5 and all(need <= room for _, need, room in lines(auto)[1:])  # the search asks it too


def test_fit_shows_each_devices_four_lines_and_what_they_are_compared_with(spec):
    machine = hypothetical_machine(64 * GiB, gpu_count=2, gpu_total=GiB)
    e = estimate_fit(spec, machine, FitRequest(ctx=CTX, gpu_layers=5, reserves=Reserves(gpu=0)))
    gpu1 = next(d for d in fit_dict(e)["devices"] if d["name"] == "gpu1")
    assert gpu1["compute"] == e.memory.devices[2].compute and gpu1["total"] == GiB and gpu1["available"] == GiB
    assert gpu1["need"] == gpu1["weights"] + gpu1["kv"] + gpu1["compute"]
    text = fit_text(e)
    block = text[text.index("Need, gpu1"):text.index("Need, gpu1") + 400]
    for word, value in (("weights", e.devices[2].weights), ("KV", e.devices[2].kv),
                        ("compute", e.memory.devices[2].compute), ("reserve", 0)):
        assert re.search(rf"\n  {word} +{re.escape(human_bytes(value))}", block), word
    assert "1.00 GiB free − 0 B reserve; 1.00 GiB total" in block


def test_a_gpu_holding_no_layer_must_hold_the_buffer_of_its_op_offload(spec):
    """-ngl 0: llama.cpp still runs the prompt's large batches (≥ 32 rows) on the GPU, in a compute buffer there."""
    ask = FitRequest(ctx=CTX, gpu_layers=0, reserves=Reserves(gpu=0))
    c = estimate_fit(spec, hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=GiB), ask).memory.devices[1].compute
    assert c > 0
    just = hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=c)
    short = hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=c - 1)
    assert estimate_fit(spec, just, ask).verdict == "cpu_only"
    e = estimate_fit(spec, short, ask)
    assert (e.verdict, e.shortfall, e.devices[1].weights) == ("does_not_fit", {"gpu0": 1}, 0)
    no_offload = replace(ask, engine=EngineSettings(op_offload=False))  # --no-op-offload: no buffer there
    assert estimate_fit(spec, short, no_offload).verdict == "cpu_only"


@pytest.mark.parametrize("gpus", [0, 1])
def test_the_host_must_hold_its_compute_buffer_and_logits_row(spec, gpus):
    """The CPU's compute buffer (CUDA_Host beside a GPU) and the output buffer are host memory as much as the KV."""
    ask = FitRequest(ctx=CTX, gpu_layers=2, reserves=Reserves(host=0, gpu=0))
    roomy = estimate_fit(spec, hypothetical_machine(64 * GiB, gpu_count=gpus, gpu_total=GiB), ask)
    name, need, _ = lines(roomy)[0]
    assert name == "host" and roomy.memory.devices[0].buffer == ("CUDA_Host" if gpus else "CPU")
    for available, verdict in ((need, "cpu_only" if not gpus else "fits_split"), (need - 1, "does_not_fit")):
        e = estimate_fit(spec, hypothetical_machine(available, gpu_count=gpus, gpu_total=GiB), ask)
        assert e.verdict == verdict and e.shortfall == ({"host": 1} if verdict == "does_not_fit" else {})


def machine_of(host: int, frees: list[int]):
    gpus = tuple(GpuInfo(index=i, name="gpu", total=64 * MiB, free=f, used=64 * MiB - f) for i, f in enumerate(frees))
    return what_if(hypothetical_machine(host), gpus=gpus)


@settings(max_examples=40, deadline=None)
@given(host=st.integers(0, 12 * MiB), frees=st.lists(st.integers(0, 8 * MiB), max_size=3), g=st.none() | st.integers(0, 5),
       ctx=st.sampled_from([256, 512, 2048]), offload=st.booleans())
def test_any_load_judged_to_fit_holds_every_devices_four_lines_within_its_free(spec, host, frees, g, ctx, offload):
    """Property: weights + KV + compute + reserve ≤ free on every device of every admitted load — the load as asked,
    the automatic GPU layers, llama.cpp's automatic ctx and the largest ctx (one test answers all four)."""
    machine = machine_of(host, frees)
    ask = FitRequest(ctx=ctx, gpu_layers=g, reserves=Reserves(host=MiB, gpu=MiB), engine=EngineSettings(op_offload=offload))
    chosen = auto_fit(spec, machine, replace(ask, ctx=None))
    most = largest_ctx(spec, machine, chosen)
    judged = [estimate_fit(spec, machine, ask), chosen.fit]
    judged += [estimate_fit(spec, machine, replace(ask, ctx=most, gpu_layers=chosen.fit.gpu_layers))] if most else []
    for e in judged:
        for name, need, room in lines(e):
            assert not e.verdict.admitted or need <= room, (name, need, room, e.verdict)
            assert (need <= room) == (e.shortfall.get(name, 0) == 0)  # the shortfall is what the lines say


def test_sm_row_is_refused_where_llama_cpp_has_no_split_buffer(tmp_path):
    """llama.cpp 0c1e570 asks each device's backend for a split buffer type (llama-model.cpp `make_gpu_buft_list`);
    RPC (and CUDA, ROCm, Vulkan, Metal) has none, so the real two-device run ends with its error before any buffer."""
    log = (SPLIT_LOGS / "tied12_2dev_all_sm-row.log").read_text()
    run = RpcRun("tied12_2dev_all_sm-row", "tied12", 2, 99, ("-sm", "row"))
    assert log.splitlines()[0] == "+ " + shlex.join(run.command())
    said = re.search(r"error loading model: (.+)", log)[1]
    assert "buffer size" not in log
    spec = load_model(write_gguf(tmp_path / "tied12.gguf", multi_device_descs()["tied12"], "header_only")[0])
    for ask in (run.request(), replace(run.request(), gpu_layers=0)):  # refused whatever -ngl asks
        e = estimate_fit(spec, run.machine(), ask)
        assert e.verdict == "does_not_fit" and f'"{said}"' in e.refused and e.recommended is None
        assert verdict_text(e) == f"does not fit — {e.refused}" and fit_dict(e)["refused"] == e.refused
    cuda = estimate_fit(spec, hypothetical_machine(64 * GiB, gpu_count=2, gpu_total=24 * GiB),
                        FitRequest(ctx=4096, engine=EngineSettings(split_mode=SplitMode.ROW)))
    assert cuda.verdict == "does_not_fit" and '"device CUDA0 does not support split buffers"' in cuda.refused
    cpu = estimate_fit(spec, hypothetical_machine(64 * GiB), FitRequest(ctx=4096, engine=EngineSettings(split_mode=SplitMode.ROW)))
    assert cpu.verdict == "cpu_only" and cpu.refused is None  # no GPU: no split buffer is asked for


def test_sm_row_on_sycl_and_sm_tensor_are_priced_as_layer_and_say_so(tmp_path):
    """SYCL has a split buffer (SYCL_Split) and `-sm tensor` a meta device: both load; neither is priced per GPU here.
    The real tensor run prints one device's share under Meta(): its KV is half the two devices' whole KV."""
    spec = load_model(write_gguf(tmp_path / "tied12.gguf", multi_device_descs()["tied12"], "header_only")[0])
    intel = what_if(hypothetical_machine(64 * GiB), gpus=tuple(
        GpuInfo(index=i, name="Arc", total=16 * GiB, free=16 * GiB, used=0, vendor=Vendor.INTEL) for i in range(2)))
    row = estimate_fit(spec, intel, FitRequest(ctx=4096, engine=EngineSettings(split_mode=SplitMode.ROW)))
    assert row.refused is None and row.verdict == "fits_gpu"
    assert any(n.startswith("-sm row: priced as -sm layer — llama.cpp spreads") for n in row.notes)
    run = RpcRun("tied12_2dev_all_sm-tensor", "tied12", 2, 99, ("-sm", "tensor"))
    log = (SPLIT_LOGS / "tied12_2dev_all_sm-tensor.log").read_text()
    assert log.splitlines()[0] == "+ " + shlex.join(run.command())
    meta_kv = float(re.search(r"Meta\(\) KV buffer size = +([\d.]+) MiB", log)[1]) * MiB
    e = estimate_fit(spec, run.machine(), run.request())
    assert e.refused is None and sum(d.kv for d in e.devices[1:]) == 2 * meta_kv
    assert any(n.startswith("-sm tensor: priced as -sm layer — llama.cpp splits each matrix") for n in e.notes)
    layer = estimate_fit(spec, run.machine(), replace(run.request(), engine=replace(run.request().engine,
                                                                                       split_mode=SplitMode.LAYER)))
    assert not any("priced as -sm layer" in n for n in layer.notes)
