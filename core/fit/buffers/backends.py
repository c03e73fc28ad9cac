"""llama.cpp's GPU backends as its scheduler sees them: buffer names, alignment, op offload, pipelining.

Pure; a table read off `core.llama_cpp.LLAMA_CPP_SOURCE` (ggml/src/ggml-*/).

Rule 1: buffer names as llama.cpp prints them: `CUDA0`, `ROCm0`, `Vulkan0`, `MTL0`, `SYCL0`,
        `RPC0[host:port]` (each RPC server's own device 0; ggml-rpc.cpp names it after its endpoint).
Rule 2: the CPU backend's compute buffer is the first device's host buffer type where it has one
        (llama-context.cpp `llama_context`: `ggml_backend_dev_host_buffer_type(model.devices[0])`):
        `CUDA_Host`, `ROCm_Host`, `Vulkan_Host`, `SYCL_Host`; Metal and RPC have none: `CPU`.
Rule 3: alignment of a compute buffer: CUDA/ROCm 128 (`ggml_backend_cuda_buffer_type_get_alignment`),
        Metal 32, RPC the remote CPU's 32, Vulkan the device's `minStorageBufferOffsetAlignment`
        (`ggml_backend_vk_buffer_type_get_alignment`; 64 taken), SYCL 128, the CPU 32. The host's
        compute buffer takes its host buffer type's: CUDA_Host the CPU's 32
        (`ggml_backend_cuda_host_buffer_type`), Vulkan_Host the first device's
        `minMemoryMapAlignment` (`ggml_backend_vk_host_buffer_type_get_alignment`: 64, as Mesa's
        lavapipe and the common desktop drivers report it).
Rule 4: `offload_op`: CUDA/ROCm (`ggml_backend_cuda_device_offload_op`), Vulkan, SYCL take any op of
        a batch of 32 rows or more but `GET_ROWS`; Metal only matrix products
        (`ggml_backend_metal_device_offload_op`); RPC none (ggml-rpc.cpp: `offload_op = NULL`).
Rule 5: every one of them reports async compute and events (`caps`), so pipeline parallelism
        is possible on all (`sched` Rule 6).
Rule 6: `maps_file`: Metal builds its model buffer from the mmap'd file (`buffer_from_host_ptr` in
        ggml-metal.cpp's device caps; src/llama-model.cpp `load_tensors` calls
        `ggml_backend_dev_buffer_from_host_ptr` over `get_mapping_range`), so with mmap a Metal GPU's
        weights are the span of the file its tensors cover (`MTL0_Mapped`, `placement` Rule 3);
        CUDA, ROCm, Vulkan, SYCL and RPC copy their tensors into buffers of their own.
Rule 7: which backend: the one asked (`EngineSettings.gpu_backend`), else the one a `-dev` list
        names by its buffer prefix (`-dev Vulkan0`: Vulkan; llama.cpp's `--device` takes the names
        of Rule 1), else the GPU maker's usual one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gguf_budget.core.machine.gpu import Vendor
from gguf_budget.core.vocab import TextEnum

CPU_ALIGNMENT = 32
OFFLOAD_MIN_BATCH = 32


class GpuBackend(TextEnum):
    """Which llama.cpp backend drives the GPUs; the value is the word the command line and JSON use."""

    CUDA = "cuda"
    ROCM = "rocm"
    VULKAN = "vulkan"
    METAL = "metal"
    SYCL = "sycl"
    RPC = "rpc"


@dataclass(frozen=True, kw_only=True)
class BackendRules:
    """Rules 1–4 and 6 for one backend (`host_alignment`: Rule 3's host compute buffer)."""

    prefix: str
    host_buffer: str
    alignment: int
    offload: int | None
    matmul_only: bool = False
    maps_file: bool = False
    host_alignment: int = CPU_ALIGNMENT

    def device_name(self, i: int, gpu_name: str) -> str:
        return f"{self.prefix}0[{gpu_name}]" if self.prefix == "RPC" else f"{self.prefix}{i}"


BACKENDS: dict[GpuBackend, BackendRules] = {
    GpuBackend.CUDA: BackendRules(prefix="CUDA", host_buffer="CUDA_Host", alignment=128, offload=OFFLOAD_MIN_BATCH),
    GpuBackend.ROCM: BackendRules(prefix="ROCm", host_buffer="ROCm_Host", alignment=128, offload=OFFLOAD_MIN_BATCH),
    GpuBackend.VULKAN: BackendRules(prefix="Vulkan", host_buffer="Vulkan_Host", alignment=64, offload=OFFLOAD_MIN_BATCH,
                                    host_alignment=64),
    GpuBackend.METAL: BackendRules(prefix="MTL", host_buffer="CPU", alignment=32, offload=OFFLOAD_MIN_BATCH,
                                   matmul_only=True, maps_file=True),
    GpuBackend.SYCL: BackendRules(prefix="SYCL", host_buffer="SYCL_Host", alignment=128, offload=OFFLOAD_MIN_BATCH),
    GpuBackend.RPC: BackendRules(prefix="RPC", host_buffer="CPU", alignment=CPU_ALIGNMENT, offload=None),
}

BY_VENDOR = {Vendor.NVIDIA: GpuBackend.CUDA, Vendor.AMD: GpuBackend.ROCM, Vendor.APPLE: GpuBackend.METAL,
             Vendor.INTEL: GpuBackend.SYCL, Vendor.UNKNOWN: GpuBackend.CUDA}


def backend_named(devices: tuple[str, ...] | None) -> GpuBackend | None:
    """Rule 7: the one backend every name of a `-dev` list starts with (`Vulkan0`, `RPC0[host:port]`), else None."""
    named = {b for name in devices or () for b, r in BACKENDS.items() if re.fullmatch(rf"{r.prefix}\d+(\[.*\])?", name)}
    return named.pop() if len(named) == 1 else None


def backend_of(vendor: Vendor, chosen: GpuBackend | None, devices: tuple[str, ...] | None = None) -> GpuBackend:
    """Rule 7: the request's backend, else the one `-dev` names, else the vendor's usual one (an unknown vendor: CUDA)."""
    if chosen is not None:
        return chosen
    return backend_named(devices) or BY_VENDOR[vendor]
