"""The fit estimate: weight split (coarse vs exact), reserves, auto GPU layers, verdicts, MoE.

Hand-worked bytes for the default tiny block (n_embd 64, n_ff 128, 4 heads, 2 KV heads of 16,
Q8_0 = 34 bytes per 32 weights, norms F32):
  attn_norm 256 + q 4352 + k 2176 + v 2176 + o 4352 + ffn_norm 256 + gate/up/down 3 · 8704
  = 39680 bytes per block.
With an 8192-token vocabulary, token_embd and output are 64 · 8192 / 32 · 34 = 557056 bytes
each, output_norm 256: the output layer outweighs both blocks together.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from gguf_factory import ArchDesc
from gguf.constants import GGMLQuantizationType as T

from gguf_budget.core.errors import RequestError
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.runtime_types import EngineSettings
from gguf_budget.core.fit.types import FitRequest, Reserves
from gguf_budget.core.machine.snapshot import hypothetical_machine, snapshot_from_readings

GiB = 1024**3
MiB = 1024**2
BLOCK = 39680
TABLE = 557056
BIG_HEAD = ArchDesc(n_layer=2, n_vocab=8192)
TENSORS = 2 * TABLE + 256 + 2 * BLOCK
# These shapes' 16-wide heads have no CUDA flash-attention kernel, so `-fa auto` would resolve off on the (CUDA)
# hypothetical GPU (`flash_attn_support` Rule 4); the budgets below are priced with it on, asked for
FA_ON = EngineSettings(flash_attn=True)


def gpu_machine(free: int, count: int = 1, host: int = 64 * GiB):
    return hypothetical_machine(host, gpu_count=count, gpu_total=max(free, 1), gpu_free=free)


@pytest.mark.parametrize(
    ("g", "gpu_exact", "host_exact"),
    [
        (0, 0, TENSORS),
        (1, TABLE + 256, TENSORS - TABLE - 256),  # -ngl 1 offloads the output layer first
        (2, TABLE + 256 + BLOCK, TABLE + BLOCK),  # then the last block
        (3, 2 * BLOCK + TABLE + 256, TABLE),  # g = L + 1: everything but token_embd
    ],
)
def test_exact_split_on_a_model_with_a_large_output_layer(model, g, gpu_exact, host_exact):
    spec = model(BIG_HEAD, mode="complete")
    assert spec.tensor_bytes == TENSORS
    w = estimate_fit(spec, gpu_machine(8 * GiB), FitRequest(ctx=256, gpu_layers=g)).weights
    assert (w.gpu_exact, w.host_exact) == (gpu_exact, host_exact)
    assert w.gpu_exact + w.host_exact == spec.tensor_bytes
    assert w.file_bytes == spec.file_bytes
    assert (w.gpu_coarse, w.host_coarse) == (spec.file_bytes * min(g, 2) // 2, spec.file_bytes - spec.file_bytes * min(g, 2) // 2)


def test_coarse_and_exact_disagree_when_the_output_layer_is_large(model):
    spec = model(BIG_HEAD, mode="complete")
    w = estimate_fit(spec, gpu_machine(8 * GiB), FitRequest(ctx=256, gpu_layers=2)).weights
    assert w.host_coarse == 0  # g = L: the coarse gate moves the whole file
    assert w.host_exact == TABLE + BLOCK  # the token table and block 0 stay on the host


def test_tied_embeddings_copy_the_table_to_the_gpu_with_the_output_layer(model):
    spec = model(replace(BIG_HEAD, tied=True), mode="complete")
    e = estimate_fit(spec, gpu_machine(8 * GiB), FitRequest(ctx=256, gpu_layers=3))
    assert (e.weights.gpu_exact, e.weights.host_exact) == (2 * BLOCK + TABLE + 256, TABLE)
    assert e.weights.gpu_exact + e.weights.host_exact == spec.tensor_bytes + TABLE
    assert any("tied embeddings" in n for n in e.notes)


def test_header_only_files_gate_on_the_complete_file_they_describe(model, gguf_file):
    spec = model(BIG_HEAD)
    complete = gguf_file(BIG_HEAD, "complete", name="complete.gguf")
    e = estimate_fit(spec, gpu_machine(8 * GiB), FitRequest(ctx=256, gpu_layers=1))
    assert spec.header_only and e.weights.file_bytes == complete.stat().st_size > TENSORS
    assert e.weights.gpu_coarse == complete.stat().st_size // 2 and e.claims.header_only


def test_the_gpu_reserve_is_taken_from_the_first_gpu_only(model):
    spec = model(BIG_HEAD)
    e = estimate_fit(spec, gpu_machine(8 * GiB, count=4), FitRequest(ctx=256))
    assert [(d.name, d.reserve, d.usable) for d in e.devices] == [
        ("host", 6 * GiB, 58 * GiB),
        ("gpu0", 3 * GiB // 2, 8 * GiB - 3 * GiB // 2),
        ("gpu1", 0, 8 * GiB), ("gpu2", 0, 8 * GiB), ("gpu3", 0, 8 * GiB),
    ]


def test_usable_memory_never_goes_below_zero(model):
    e = estimate_fit(model(BIG_HEAD), gpu_machine(GiB, host=GiB), FitRequest(ctx=256))
    assert [d.usable for d in e.devices] == [0, 0]


def test_reserves_are_editable(model):
    e = estimate_fit(model(BIG_HEAD), gpu_machine(2 * MiB, host=2 * MiB), FitRequest(ctx=256, reserves=Reserves(0, 0), engine=FA_ON))
    assert e.verdict == "fits_gpu" and [(d.reserve, d.usable) for d in e.devices] == [(0, 2 * MiB), (0, 2 * MiB)]


# KV at ctx 256, f16: 256 cells · 2 KV heads · (16 + 16) · 2 = 32768 bytes per block
KV_BLOCK = 32768
# Compute buffers at ctx 256 (the scheduler replayed over the reserved graph, `runtime_memory` Rule 5; the replay
# itself is checked on the real runs of tests/test_rpc_runs.py): every device's need counts them (`devices` Rule 4).
OUTPUT = 8192 * 4  # the host's logits row
CPU_COMPUTE = 661_536 + OUTPUT  # no GPU: the whole graph on the host
GPU_COMPUTE = 595_200  # the GPU's, -ngl 0 … 2 (at 0 it runs the prompt's large batches: op offload)
GPU_COMPUTE_ALL = 595_072  # the GPU's with every slot offloaded
BESIDE = 12 * 8192 + 52 * 256  # the host's sampler and its 256 KV cells' metadata (`runtime_memory` Rules 11–12)


@pytest.mark.parametrize(
    ("usable", "auto"),
    [
        # the output layer (no KV) is the first slot offloaded, then block 1, then block 0; each boundary moved up
        # by the GPU's compute buffer, which the GPU holds from -ngl 0 on (op offload)
        (GPU_COMPUTE, 0),
        (TABLE + 256 + GPU_COMPUTE - 1, 0),
        (TABLE + 256 + GPU_COMPUTE, 1),
        (TABLE + 256 + BLOCK + KV_BLOCK + GPU_COMPUTE - 1, 1),
        (TABLE + 256 + BLOCK + KV_BLOCK + GPU_COMPUTE, 2),
        (TABLE + 256 + 2 * (BLOCK + KV_BLOCK) + GPU_COMPUTE_ALL - 1, 2),
        (TABLE + 256 + 2 * (BLOCK + KV_BLOCK) + GPU_COMPUTE_ALL, 3),
    ],
)
def test_auto_gpu_layers_is_the_most_that_fit_with_their_kv(model, usable, auto):
    machine = gpu_machine(3 * GiB // 2 + usable)
    e = estimate_fit(model(BIG_HEAD), machine, FitRequest(ctx=256, engine=FA_ON))
    assert (e.auto_gpu_layers, e.gpu_layers) == (auto, auto)
    assert e.devices[1].usable == usable and e.devices[1].need <= usable


@pytest.mark.parametrize(
    ("machine", "g", "verdict"),
    [
        (hypothetical_machine(64 * GiB), None, "cpu_only"),
        (gpu_machine(8 * GiB), None, "fits_gpu"),
        (gpu_machine(3 * GiB // 2 + TABLE + 256 + GPU_COMPUTE), None, "fits_split"),  # the output layer and compute
        (gpu_machine(3 * GiB // 2 + BLOCK + KV_BLOCK + GPU_COMPUTE), None, "cpu_only"),  # a block fits, the output not
        (gpu_machine(2 * GiB), 0, "cpu_only"),
        (gpu_machine(2 * GiB), 2, "fits_split"),
    ],
)
def test_verdicts(model, machine, g, verdict):
    assert estimate_fit(model(BIG_HEAD), machine, FitRequest(ctx=256, gpu_layers=g)).verdict == verdict


def test_does_not_fit_names_the_shortfall_per_device(model):
    spec = model(BIG_HEAD)
    host_need = TENSORS + 2 * KV_BLOCK + CPU_COMPUTE + BESIDE  # the host's compute buffer and logits row count too
    e = estimate_fit(spec, hypothetical_machine(6 * GiB + host_need - 1000), FitRequest(ctx=256))
    assert (e.verdict, e.shortfall) == ("does_not_fit", {"host": 1000})
    too_many = estimate_fit(spec, gpu_machine(3 * GiB // 2 + 100), FitRequest(ctx=256, gpu_layers=1))
    assert (too_many.verdict, too_many.shortfall) == ("does_not_fit", {"gpu0": TABLE + 256 + GPU_COMPUTE - 100})


def test_swap_is_never_counted_as_ram(model):
    spec = model(BIG_HEAD)
    short = snapshot_from_readings(0.0, 8 * GiB, 6 * GiB + 1000, swap_total=512 * GiB)
    e = estimate_fit(spec, short, FitRequest(ctx=256))
    assert e.verdict == "does_not_fit" and e.shortfall["host"] == TENSORS + 2 * KV_BLOCK + CPU_COMPUTE + BESIDE - 1000
    assert any("swap" in n and "not counted" in n for n in e.notes)


@pytest.mark.parametrize("context_length", [None, 0])
def test_unknown_says_what_is_missing(model, context_length):
    spec = replace(model(BIG_HEAD), context_length=context_length)
    e = estimate_fit(spec, hypothetical_machine(64 * GiB), FitRequest())
    assert e.verdict == "unknown" and e.kv.engine is None and e.kv.ctx is None
    assert e.unknowns == ("context length: the file does not give it (pass a context size)",)
    assert estimate_fit(spec, hypothetical_machine(64 * GiB), FitRequest(ctx=256)).verdict == "cpu_only"


def test_a_host_that_could_not_be_read_makes_the_verdict_unknown(model):
    broken = snapshot_from_readings(0.0, 0, 0, host_error="host memory could not be read: OSError: boom")
    e = estimate_fit(model(BIG_HEAD), broken, FitRequest(ctx=256))
    assert e.verdict == "unknown" and e.unknowns == ("host memory could not be read: OSError: boom",)


def test_requests_beyond_the_model_are_clamped_and_noted(model):
    e = estimate_fit(model(BIG_HEAD), gpu_machine(8 * GiB), FitRequest(ctx=256, gpu_layers=99))
    assert e.gpu_layers == 3 and e.output_on_gpu
    assert any("at most 3" in n for n in e.notes)
    no_gpu = estimate_fit(model(BIG_HEAD), hypothetical_machine(64 * GiB), FitRequest(ctx=256, gpu_layers=2))
    assert no_gpu.gpu_layers == 0 and no_gpu.verdict == "cpu_only"


@pytest.mark.parametrize("kwargs", [dict(ctx=0), dict(gpu_layers=-1), dict(kv_type="q3_k")])
def test_bad_requests_are_refused(kwargs):
    with pytest.raises(RequestError):
        FitRequest(**kwargs)
    with pytest.raises(RequestError):
        Reserves(host=-1)


def test_claims_keep_storage_admission_and_evidence_apart(model):
    spec = model(BIG_HEAD, mode="complete")
    machine = hypothetical_machine(64 * GiB, captured_at=1700000000.0)
    c = estimate_fit(spec, machine, FitRequest(ctx=256)).claims
    assert (c.file_size, c.admission, c.captured_at, c.snapshot_source, c.runtime_evidence) == (
        spec.file_bytes, "cpu_only", 1700000000.0, "hypothetical", None)


# MoE: 2 blocks with 4 routed experts of n_ff 128: each *_exps tensor is 64 · 128 · 4 Q8_0 weights
# = 32768 / 32 · 34 = 34816 bytes, three per block → 104448 bytes of routed experts per block.
EXPERTS = 3 * 34816
MOE = ArchDesc(arch="qwen2moe", n_layer=2, n_vocab=8192, n_expert=4, n_expert_used=2)
MOE_GPU_COMPUTE = 1_119_488  # the GPU's compute buffer at ctx 256, -ngl 0 … 2 (replayed as GPU_COMPUTE is)
MOE_CPU_EXPERTS_COMPUTE = 1_119_232  # the GPU's with every slot offloaded and the experts on the host (--cpu-moe)


def test_moe_cpu_experts_strategy_is_shown_beside_the_default(model):
    spec = model(MOE)
    assert spec.routed_expert_bytes == 2 * EXPERTS
    dense = [b - EXPERTS for b in spec.layer_bytes]
    machine = gpu_machine(3 * GiB // 2 + sum(dense) + TABLE + 256 + 2 * KV_BLOCK + MOE_CPU_EXPERTS_COMPUTE)
    e = estimate_fit(spec, machine, FitRequest(ctx=256, engine=FA_ON))
    assert e.verdict == "fits_split" and e.gpu_layers < 3
    m = e.moe
    assert (m.name, m.verdict) == ("cpu_experts", "fits_split")
    host, gpu = m.devices
    assert (host.weights, host.kv) == (spec.complete_file_bytes, 0)  # the full file, as the first gate budgets it
    assert (gpu.weights, gpu.kv, gpu.compute) == (sum(dense) + TABLE + 256, 2 * KV_BLOCK, MOE_CPU_EXPERTS_COMPUTE)
    assert m.host_exact == 2 * EXPERTS + TABLE


def test_moe_strategy_reports_its_own_shortfall(model):
    spec = model(MOE)
    e = estimate_fit(spec, gpu_machine(3 * GiB // 2 + MOE_GPU_COMPUTE + 1000), FitRequest(ctx=256))  # -ngl 0's compute
    assert e.verdict == "cpu_only"
    assert e.moe.verdict == "does_not_fit" and set(e.moe.shortfall) == {"gpu0"}


def test_dense_models_have_no_moe_strategy(model):
    assert estimate_fit(model(BIG_HEAD), hypothetical_machine(64 * GiB), FitRequest(ctx=256)).moe is None


def test_mixed_quant_blocks_are_placed_by_their_real_bytes(model):
    desc = replace(BIG_HEAD, layer_mix={1: {"ffn_down": T.F32}})
    spec = model(desc)
    e = estimate_fit(spec, gpu_machine(8 * GiB), FitRequest(ctx=256, gpu_layers=2))
    assert spec.layer_bytes[1] == BLOCK - 8704 + 128 * 64 * 4
    assert e.weights.gpu_exact == spec.layer_bytes[1] + TABLE + 256
