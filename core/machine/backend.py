"""Which llama.cpp backend runs a GPU's layers, and how fast the GPU multiplies matrices.

Rule 1: the backends are llama.cpp's (ggml/src: ggml-cpu, ggml-cuda, ggml-cuda built with HIP
        for ROCm, ggml-vulkan, ggml-metal, ggml-sycl); their names are the ones `llama-bench`
        prints in its `backend` column.
Rule 2: a GPU's backend is the one typed (`--backend`), else its preset's, else its maker's usual
        one: NVIDIA CUDA, AMD ROCm, Apple Metal, Intel SYCL; a GPU of unknown make Vulkan (it runs
        on every maker's driver).
Rule 3: a GPU's compute figure is its dense FP16 matrix rate as the maker's figures give it:
        streaming multiprocessors (or compute units, Xe cores) × boost clock × the FP16 FLOPs each
        does a clock on its matrix units (FP16 accumulate); an Apple GPU's is its cores × the
        per-core rate of its chip generation (`core.speed.backend_speed`). A typed figure
        (`--gpu-tflops`) wins.
"""

from __future__ import annotations

from gguf_budget.core.errors import RequestError
from gguf_budget.core.machine.gpu import Vendor
from gguf_budget.core.vocab import TextEnum


class Backend(TextEnum):
    """Rule 1."""

    CPU = "CPU"
    CUDA = "CUDA"
    ROCM = "ROCm"
    VULKAN = "Vulkan"
    METAL = "Metal"
    SYCL = "SYCL"


GPU_BACKENDS = tuple(b for b in Backend if b is not Backend.CPU)
VENDOR_BACKEND = {Vendor.NVIDIA: Backend.CUDA, Vendor.AMD: Backend.ROCM, Vendor.APPLE: Backend.METAL,
                  Vendor.INTEL: Backend.SYCL}


def vendor_backend(vendor: Vendor) -> Backend:
    """Rule 2's fallback: the maker's usual backend."""
    return VENDOR_BACKEND.get(vendor, Backend.VULKAN)


def parse_backend(text: str) -> Backend:
    """'cuda', 'ROCm', 'hip' → the backend; a RequestError naming the choices otherwise."""
    key = text.strip().lower()
    if key == "hip":
        return Backend.ROCM
    for backend in GPU_BACKENDS:
        if backend.value.lower() == key:
            return backend
    raise RequestError(f"no GPU backend {text.strip()!r}; choose one of: {', '.join(b.value for b in GPU_BACKENDS)}")
