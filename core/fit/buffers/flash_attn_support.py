"""Whether `-fa auto` fuses attention: each backend's support for `FLASH_ATTN_EXT` at a layer's head shape.

Pure; read off `core.llama_cpp.LLAMA_CPP_SOURCE`.

Rule 1: `auto` is resolved after the KV cache is made (src/llama-context.cpp `resolve_fused_ops`, called from
        `sched_reserve`): a one-token-per-sequence graph is reserved and, if the scheduler puts any layer's
        FLASH_ATTN_EXT on another device than the layer's (because that layer's backend does not support it), flash
        attention is disabled for the whole context; else it stays on. Layers on the CPU never refuse (Rule 3).
Rule 2: before that, `auto` with a quantized V cache is turned on outright (src/llama-context.cpp
        `llama_init_from_model`: "enabling flash_attn since it is required for quantized V cache"), so nothing is
        resolved.
Rule 3: CPU: every head shape and cache type (ggml-cpu's `supports_op` accepts FLASH_ATTN_EXT). RPC forwards the
        question to its server's backend (ggml-rpc.cpp `ggml_backend_rpc_device_supports_op`); the servers priced
        here are CPU servers, so RPC takes the CPU's rule.
Rule 4: CUDA and ROCm (one source, HIP): ggml-cuda/fattn.cu `ggml_cuda_get_best_fattn_kernel` — K head 40, 64, 72,
        80, 96, 112, 128 or 256 with V of the same size; 192 with V 128 and a GQA ratio that is a multiple of 8
        (the GQA optimisation must apply: ratio ≥ 2); 320 with V 256 and a ratio that is a multiple of 32; 512 with
        V 512 and ratio ≥ 2; 576 with V 512 and ratio ≥ 2; K and V types f32, f16, bf16, q4_0, q4_1, q5_0, q5_1,
        q8_0 (`ggml_cuda_fattn_kv_type_supported`).
Rule 5: Vulkan: ggml-vulkan.cpp `ggml_backend_vk_device_supports_op` — K and V heads multiples of 8; K and V types
        f32, f16, bf16, q8_0, q5_1, q5_0, q4_1, q4_0, iq4_nl, bf16 on both or neither (the device's subgroup
        shuffle/vote taken as present, as on every desktop driver and lavapipe).
Rule 6: Metal: ggml-metal-device.m `ggml_metal_device_supports_op` — K head 32, 40, 48, 64, 72, 80, 96, 112, 128,
        192, 256, 320, 512 or 576; 72 only with V 72; V never larger than K; K and V of one type among f32, f16,
        bf16, q8_0, q4_0, q4_1, q5_0, q5_1.
Rule 7: SYCL: ggml-sycl/fattn.cpp `ggml_sycl_get_best_fattn_kernel` at one token (its oneDNN and MKL kernels need
        32) — K head 40, 64, 72, 80, 96, 112, 128, 256 or 512 with V of the same size, or 576 with V 512 and ratio
        ≥ 2; K and V of one type among f32, f16, bf16, q4_0, q8_0.
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.fit.buffers.backends import GpuBackend
from gguf_budget.core.fit.buffers.compute_graph import block_shapes
from gguf_budget.core.model.per_model_cache import per_model
from gguf_budget.core.model.spec import ModelSpec


@dataclass(frozen=True, kw_only=True)
class AttentionShape:
    """What FLASH_ATTN_EXT sees of one layer: K and V head sizes, the GQA ratio (query heads per KV head) and the
    cache's ggml types (`f16`, `q8_0`, …)."""

    k_head: int
    v_head: int
    gqa: int
    k_type: str
    v_type: str

    def words(self) -> str:
        return f"K {self.k_head}/V {self.v_head} at GQA {self.gqa}"


CUDA_KV_TYPES = frozenset({"f32", "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0"})
VULKAN_KV_TYPES = CUDA_KV_TYPES | {"iq4_nl"}
METAL_K_HEADS = frozenset({32, 40, 48, 64, 72, 80, 96, 112, 128, 192, 256, 320, 512, 576})
SYCL_KV_TYPES = frozenset({"f32", "f16", "bf16", "q4_0", "q8_0"})
SAME_HEADS = frozenset({40, 64, 72, 80, 96, 112, 128, 256})


def cuda_supports(s: AttentionShape) -> bool:
    """Rule 4 (CUDA and ROCm)."""
    if s.k_type not in CUDA_KV_TYPES or s.v_type not in CUDA_KV_TYPES:
        return False
    grouped = s.gqa >= 2
    if s.k_head in SAME_HEADS:
        return s.v_head == s.k_head
    return {192: s.v_head == 128 and grouped and s.gqa % 8 == 0,
            320: s.v_head == 256 and grouped and s.gqa % 32 == 0,
            512: s.v_head == 512 and grouped,
            576: s.v_head == 512 and grouped}.get(s.k_head, False)


def vulkan_supports(s: AttentionShape) -> bool:
    """Rule 5."""
    return (s.k_head % 8 == 0 and s.v_head % 8 == 0 and s.k_type in VULKAN_KV_TYPES and s.v_type in VULKAN_KV_TYPES
            and (s.k_type == "bf16") == (s.v_type == "bf16"))


def metal_supports(s: AttentionShape) -> bool:
    """Rule 6."""
    return (s.k_head in METAL_K_HEADS and (s.k_head != 72 or s.v_head == 72) and s.v_head <= s.k_head
            and s.k_type == s.v_type and s.k_type in CUDA_KV_TYPES)


def sycl_supports(s: AttentionShape) -> bool:
    """Rule 7."""
    if s.k_type != s.v_type or s.k_type not in SYCL_KV_TYPES:
        return False
    if s.k_head in SAME_HEADS | {512}:
        return s.v_head == s.k_head
    return s.k_head == 576 and s.v_head == 512 and s.gqa >= 2


def cpu_supports(s: AttentionShape) -> bool:
    """Rule 3 (the CPU, and RPC through its CPU server)."""
    return True


SUPPORTS = {GpuBackend.CUDA: cuda_supports, GpuBackend.ROCM: cuda_supports, GpuBackend.VULKAN: vulkan_supports,
            GpuBackend.METAL: metal_supports, GpuBackend.SYCL: sycl_supports, GpuBackend.RPC: cpu_supports}


@per_model(maxsize=64)
def attention_shapes(model: ModelSpec, k_type: str, v_type: str) -> tuple[AttentionShape | None, ...]:
    """Each layer's shape as FLASH_ATTN_EXT sees it (None: a layer without attention): an absorbed MLA layer attends
    over the latent and its rope part (K), of which V is the latent, one KV head; an older deepseek2 layer over
    every head's decompressed K and V. Kept per model and cache types: every placement a search prices asks it."""
    out: list[AttentionShape | None] = []
    for blk in block_shapes(model):
        m = blk.mla
        if m is not None and m.absorbed:
            k, v, kv_heads = m.kv_lora + m.rope, m.kv_lora, 1
        elif m is not None:
            k, v, kv_heads = m.nope + m.rope, m.v_head, blk.n_head
        elif blk.v and blk.head_v:
            kv_heads = blk.v // blk.head_v
            k, v = blk.k // kv_heads, blk.head_v
        else:
            out.append(None)
            continue
        out.append(AttentionShape(k_head=k, v_head=v, gqa=max(1, blk.n_head // max(kv_heads, 1)), k_type=k_type,
                                  v_type=v_type))
    return tuple(out)


@dataclass(frozen=True, kw_only=True)
class FlashAttn:
    """Whether attention is fused, and why: `asked` the request (None: auto); `refused_by` the first device whose
    backend has no kernel for a layer it holds, with that layer's shape."""

    asked: bool | None
    fused: bool
    refused_by: str | None = None
    shape: AttentionShape | None = None

    @property
    def v_flat(self) -> bool:
        """Rule 1: the cache was made for flash attention (untransposed V) that was then resolved off."""
        return self.asked is None and not self.fused


def resolve(asked: bool | None, shapes: tuple[AttentionShape | None, ...],
            layer_backends: tuple[tuple[str, GpuBackend] | None, ...], v_quantized: bool) -> FlashAttn:
    """Rules 1–2: `asked` on/off stands; auto is on unless a layer's device (`layer_backends[il]`: the GPU's printed
    name and backend, None on the CPU) refuses that layer's shape."""
    if asked is not None or v_quantized:
        return FlashAttn(asked=asked, fused=True if asked is None else asked)
    for shape, device in zip(shapes, layer_backends, strict=False):
        if shape is not None and device is not None and not SUPPORTS[device[1]](shape):
            return FlashAttn(asked=None, fused=False, refused_by=device[0], shape=shape)
    return FlashAttn(asked=None, fused=True)
