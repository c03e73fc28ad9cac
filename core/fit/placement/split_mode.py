"""llama.cpp's `-sm row` and `-sm tensor` at the pinned revision: whether the load is made at all, and what is priced.

Pure; read off `core.llama_cpp.LLAMA_CPP_SOURCE`. `-sm layer` and `-sm none` are `gpu_split` (Rules 1–3, 8).

Rule 1: `-sm row` asks every model device's backend for a split buffer type (src/llama-model.cpp
        `make_gpu_buft_list`: `ggml_backend_reg_get_proc_address(reg, "ggml_backend_split_buffer_type")`)
        and, where the backend has none, throws "device X does not support split buffers": the model is
        not loaded, whatever -ngl asks (the list is made for each device before any layer is placed).
        At this revision only SYCL exports one (ggml-sycl.cpp: `SYCL_Split`); the CUDA backend — and so
        ROCm, its HIP build — no longer does (ggml-cuda.cu `ggml_backend_cuda_reg_get_proc_address`), nor
        do Vulkan, Metal or RPC. Checked on the real RPC build: tests/data/llamacpp-split-modes.
Rule 2: on SYCL, `-sm row` loads: each layer's matrices go to `SYCL_Split`, their rows spread over every
        SYCL device by the tensor split (ggml-sycl.cpp `get_row_split`, `get_row_rounding`, rows padded to
        512 elements), the rest of a layer and its KV on the layer's device. Not priced here: the fit
        prices it as `-sm layer` (the same weights in all, spread differently) and says so.
Rule 3: `-sm tensor` makes one meta device of every GPU (src/llama.cpp `llama_prepare_model_devices`:
        `ggml_backend_meta_device`), each tensor and the KV split by a per-tensor state
        (`llama_meta_device_get_split_state`), flash attention required (llama-context.cpp); the log prints
        one device's share under `Meta()` (the real two-device run of tests/data/llamacpp-split-modes: 47.05 MiB
        of weights — half of each matrix, the tied output copy whole — and 48 MiB of KV, where `-sm layer`
        put 45.53 + 40.52 MiB and 56 + 40 MiB). Not priced here: priced as `-sm layer` and said so.
"""

from __future__ import annotations

from gguf_budget.core.fit.buffers.backends import BACKENDS, GpuBackend, backend_of
from gguf_budget.core.fit.runtime_types import EngineSettings, SplitMode
from gguf_budget.core.machine.gpu import GpuInfo

SPLIT_BUFFERS = frozenset({GpuBackend.SYCL})
"""Rule 1: the backends that export `ggml_backend_split_buffer_type` (of those the fit knows)."""


def refusal(settings: EngineSettings, gpus: tuple[GpuInfo, ...]) -> str | None:
    """Rule 1: llama.cpp's own error where it refuses the load, else None."""
    if settings.split_mode is not SplitMode.ROW:
        return None
    for i, gpu in enumerate(gpus):
        backend = backend_of(gpu.vendor, settings.gpu_backend)
        if backend not in SPLIT_BUFFERS:
            name = BACKENDS[backend].device_name(i, gpu.name).split("[")[0]  # an RPC device is named RPC0 here
            return (f"-sm row: llama.cpp refuses the load — \"device {name} does not support split buffers\" "
                    f"(its {backend.value} backend has no row split at this revision; use -sm layer)")
    return None


def split_notes(settings: EngineSettings, gpus: tuple[GpuInfo, ...]) -> tuple[str, ...]:
    """Rules 2–3: the note where a split mode is priced as `-sm layer`."""
    if not gpus or settings.split_mode not in (SplitMode.ROW, SplitMode.TENSOR) or refusal(settings, gpus):
        return ()
    how = ("spreads each layer's matrices by rows over every GPU (SYCL_Split)" if settings.split_mode is SplitMode.ROW
           else "splits each matrix and the KV over the GPUs (one meta device)")
    return (f"-sm {settings.split_mode.value}: priced as -sm layer — llama.cpp {how}, so each GPU's weights, KV and "
            "compute here are approximate",)
