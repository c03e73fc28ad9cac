"""`-fa auto` resolved per backend (core/fit/buffers/flash_attn_support.py), on real GGUF headers.

llama.cpp 0c1e570 makes the KV cache while `auto` counts as on (V untransposed), then disables flash attention when a
GPU holding a layer has no kernel for its head shape (src/llama-context.cpp `resolve_fused_ops`). The older deepseek2
format (K head 192, V 128, as many KV heads as heads) is such a shape on CUDA: the published RTX 5080 load of
DeepSeek-Coder-V2-Lite prints "Flash Attention … set to disabled" and a compute buffer priced with an untransposed V.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from gguf_factory import ArchDesc, MLADesc, write_gguf

from gguf_budget.core import load_model
from gguf_budget.core.fit.buffers.backends import GpuBackend
from gguf_budget.core.fit.buffers.flash_attn_support import (
    SUPPORTS, AttentionShape, cuda_supports, metal_supports, sycl_supports, vulkan_supports,
)
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.runtime_memory import compute_buffer, graph_settings
from gguf_budget.core.fit.runtime_types import EngineSettings
from gguf_budget.core.fit.types import FitRequest
from gguf_budget.core.machine.gpu import GpuInfo, Vendor
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.model.kv import KVType
from gguf_budget.core.views.runtime_report import runtime_dict, runtime_rows

GiB = 1024**3
LEGACY = ArchDesc(arch="deepseek2", n_layer=3, n_embd=256, n_ff=512, n_head=16, n_head_kv=16, n_vocab=260,
                  mla=MLADesc(kv_lora_rank=128, rope_dim=64, key_length=192, value_length=128))
ABSORBED = replace(LEGACY, mla=MLADesc(kv_lora_rank=512, rope_dim=64, key_length=192, value_length=128, absorbed=True))
LLAMA = ArchDesc(n_layer=3, n_embd=512, n_ff=512, n_head=8, n_head_kv=2, n_vocab=260)


def shape(k: int, v: int, gqa: int, k_type: str = "f16", v_type: str | None = None) -> AttentionShape:
    return AttentionShape(k_head=k, v_head=v, gqa=gqa, k_type=k_type, v_type=v_type or k_type)


@pytest.mark.parametrize(("s", "cuda", "vulkan", "metal", "sycl"), [
    (shape(128, 128, 4), True, True, True, True),
    (shape(192, 128, 1), False, True, True, False),     # the older deepseek2 format
    (shape(192, 128, 8), True, True, True, False),
    (shape(576, 512, 16), True, True, True, True),      # absorbed MLA: one KV head
    (shape(576, 512, 1), False, True, True, False),
    (shape(320, 256, 32), True, True, True, False),
    (shape(72, 64, 2), False, True, False, False),
    (shape(100, 100, 2), False, False, False, False),
    (shape(128, 128, 4, "bf16", "f16"), True, False, False, False),
    (shape(128, 128, 4, "q4_0", "q8_0"), True, True, False, False),
])
def test_each_backend_has_its_own_kernels(s, cuda, vulkan, metal, sycl):
    assert (cuda_supports(s), vulkan_supports(s), metal_supports(s), sycl_supports(s)) == (cuda, vulkan, metal, sycl)
    assert SUPPORTS[GpuBackend.ROCM](s) == cuda and SUPPORTS[GpuBackend.RPC](s)


def machine(vendor: Vendor = Vendor.NVIDIA) -> HardwareSnapshot:
    gpu = GpuInfo(index=0, name="GPU", total=16 * GiB, free=16 * GiB, used=0, vendor=vendor)
    return HardwareSnapshot(captured_at=0.0, host_total=32 * GiB, host_available=32 * GiB, cgroup_limit=None,
                            gpus=(gpu,), gpu_error=None, source="probe")


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fa")
    return {name: load_model(write_gguf(folder / f"{name}.gguf", d, "header_only")[0])
            for name, d in (("legacy", LEGACY), ("absorbed", ABSORBED), ("llama", LLAMA))}


def memory(spec, backend: GpuBackend = GpuBackend.CUDA, gpu_layers: int | None = None, **engine):
    request = FitRequest(ctx=4096, gpu_layers=gpu_layers, engine=EngineSettings(gpu_backend=backend, **engine))
    e = estimate_fit(spec, machine(), request)
    assert e.memory is not None and e.memory.attention is not None
    return e.memory


def test_auto_is_off_where_the_gpu_has_no_kernel_and_the_cache_stays_untransposed(models):
    m = memory(models["legacy"])
    assert not m.attention.fused and m.attention.v_flat and m.attention.refused_by == "CUDA0"
    assert m.attention.shape == shape(192, 128, 1)
    off = memory(models["legacy"], flash_attn=False)
    assert not off.attention.fused and not off.attention.v_flat
    # the untransposed V's row indices are one per token, not one per element: the host's inputs shrink by
    # 512 tokens × (16 heads × 128 − 1) × 8 bytes, and each layer's transposed copy of V comes on the GPU
    assert off.host.compute - m.host.compute == 512 * (16 * 128 - 1) * 8


@pytest.mark.parametrize(("model", "backend", "gpu_layers", "engine"), [
    ("legacy", GpuBackend.METAL, None, {}),        # Metal has a 192/128 kernel at any GQA
    ("legacy", GpuBackend.VULKAN, None, {}),
    ("legacy", GpuBackend.RPC, None, {}),          # the CPU server's rule
    ("legacy", GpuBackend.CUDA, 0, {}),            # no layer on the GPU: the CPU runs every attention
    ("legacy", GpuBackend.CUDA, None, {"flash_attn": True}),  # asked on stands (the CPU runs the op)
    ("absorbed", GpuBackend.CUDA, None, {}),       # 576/512 at GQA 16
    ("llama", GpuBackend.CUDA, None, {}),
])
def test_auto_stays_on_where_every_layer_has_a_kernel(models, model, backend, gpu_layers, engine):
    a = memory(models[model], backend, gpu_layers, **engine).attention
    assert a.fused and not a.v_flat and a.refused_by is None


def test_a_quantized_v_cache_turns_auto_on_before_any_device_is_asked(models):
    request = FitRequest(ctx=4096, kv_type=KVType.Q8_0, engine=EngineSettings(gpu_backend=GpuBackend.CUDA))
    e = estimate_fit(models["legacy"], machine(), request)
    assert e.memory is not None and e.memory.attention is not None
    assert e.memory.attention.fused and e.memory.attention.asked is None


def test_the_cpu_alone_resolves_auto_on(models):
    s = graph_settings(models["legacy"], 4096, KVType.F16, EngineSettings())
    assert s.flash_attn and not s.v_flat
    assert compute_buffer(models["legacy"], s) == compute_buffer(
        models["legacy"], graph_settings(models["legacy"], 4096, KVType.F16, EngineSettings(flash_attn=True)))


def test_fit_says_how_auto_resolved(models):
    request = FitRequest(ctx=4096, engine=EngineSettings(gpu_backend=GpuBackend.CUDA))
    off = estimate_fit(models["legacy"], machine(), request)
    on = estimate_fit(models["llama"], machine(), request)
    text = dict(runtime_rows(off))["llama.cpp"]
    assert "flash attention auto → off on CUDA0 (no kernel for K 192/V 128 at GQA 1)" in text
    assert "flash attention auto → on," in dict(runtime_rows(on))["llama.cpp"]
    settings = runtime_dict(off)["settings"]
    assert (settings["flash_attn"], settings["flash_attn_asked"], settings["flash_attn_why"]) == (
        False, "auto", "on CUDA0 (no kernel for K 192/V 128 at GQA 1)")
    asked = estimate_fit(models["legacy"], machine(), replace(request, engine=EngineSettings(
        gpu_backend=GpuBackend.CUDA, flash_attn=False)))
    assert "flash attention off," in dict(runtime_rows(asked))["llama.cpp"]
