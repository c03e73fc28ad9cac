"""MoE expert offload: the smallest --n-cpu-moe N that fits with every layer offloaded, by bisection,
reported beside the plain layer split with its own command."""

from __future__ import annotations

import math

import pytest
from gguf_factory import ArchDesc

from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.runtime_types import EngineSettings
from gguf_budget.core.fit.types import FitRequest
from gguf_budget.core.fit.placement.gpu_split import fewest_cpu_moe_layers
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.model.roles import TensorRole

GiB = 1024**3
RESERVE = 3 * GiB // 2
MOE = ArchDesc(arch="qwen2moe", n_layer=4, n_vocab=8192, n_expert=4, n_expert_used=2)
KV_BLOCK = 32768  # ctx 256, f16: 256 cells · 2 KV heads · (16 + 16) · 2 bytes
# The GPU's compute buffer at ctx 256 with the experts of blocks 0 … n − 1 on the host (the scheduler replayed,
# `runtime_memory` Rule 5; `--n-cpu-moe n` is a tensor override, `moe` Rule 5): part of what the GPU must hold.
COMPUTE = (1_119_360, 1_123_456, 1_123_456, 1_119_232, 1_119_232)
# priced with flash attention asked on: the 16-wide heads have no CUDA kernel, so `-fa auto` would resolve off on the
# (CUDA) hypothetical GPU (`flash_attn_support` Rule 4)
FA_ON = FitRequest(ctx=256, engine=EngineSettings(flash_attn=True))


@pytest.fixture
def spec(model):
    return model(MOE)


def gpu_need(spec, n: int) -> int:
    """What one GPU holds with every slot offloaded and the experts of blocks 0 … n − 1 on the host."""
    experts = [r.get(TensorRole.EXPERTS, 0) for r in spec.layer_role_bytes]
    output = spec.output_table_bytes + spec.global_bytes.output_norm
    return sum(spec.layer_bytes) - sum(experts[:n]) + output + spec.n_layer * KV_BLOCK + COMPUTE[n]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4])
def test_the_smallest_n_that_fits_is_found(spec, n):
    exact = estimate_fit(spec, hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=RESERVE + gpu_need(spec, n)),
                         FA_ON)
    m = exact.moe_offload
    assert (m.name, m.n_cpu_moe, m.gpu_layers) == ("n_cpu_moe", n, 5)
    assert m.devices[1].need == gpu_need(spec, n) == m.devices[1].usable
    assert m.verdict == ("fits_gpu" if n == 0 else "fits_split")
    experts = [r.get(TensorRole.EXPERTS, 0) for r in spec.layer_role_bytes]
    assert m.host_exact == m.devices[0].weights == spec.global_bytes.token_embd + sum(experts[:n])
    if n:
        one_short = hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=RESERVE + gpu_need(spec, n - 1) - 1)
        assert estimate_fit(spec, one_short, FA_ON).moe_offload.n_cpu_moe == n


def test_when_even_all_experts_on_the_host_do_not_fit_the_shortfall_is_reported(spec):
    small = hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=RESERVE + gpu_need(spec, 4) - 100)
    m = estimate_fit(spec, small, FA_ON).moe_offload
    assert (m.verdict, m.n_cpu_moe, m.shortfall) == ("does_not_fit", 4, {"gpu0": 100})


def test_the_offload_carries_its_command(spec):
    m = estimate_fit(spec, hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=RESERVE + gpu_need(spec, 2)),
                     FitRequest(ctx=256, kv_type="q8_0")).moe_offload
    assert m.command.argv[3:15] == ("-c", "256", "-ngl", "5", "--n-cpu-moe", "2", "-ctk", "q8_0", "-ctv", "q8_0",
                                    "-fa", "on")


def test_dense_models_and_machines_without_a_gpu_have_no_offload(model, spec):
    assert estimate_fit(model(ArchDesc(n_layer=2)), hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=8 * GiB),
                        FitRequest(ctx=256)).moe_offload is None
    assert estimate_fit(spec, hypothetical_machine(64 * GiB), FitRequest(ctx=256)).moe_offload is None


@pytest.mark.parametrize("n_layer", [1, 48, 100_000])
def test_the_n_cpu_moe_search_bisects(n_layer):
    for answer in sorted({0, 1, n_layer // 2, n_layer}):
        asked: list[int] = []

        def fits(n: int, answer: int = answer, asked: list[int] = asked) -> bool:
            asked.append(n)
            return n >= answer

        assert fewest_cpu_moe_layers(n_layer, fits) == answer
        assert len(asked) <= 2 + math.ceil(math.log2(n_layer + 1))
    assert fewest_cpu_moe_layers(n_layer, lambda n: False) is None
