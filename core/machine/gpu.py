"""One GPU as a reading (or a person) describes it: vendor, memory, bandwidth, and what could not be read.

Rule 1: memory figures are bytes or None — unknown, never 0 — and `reason` says why a figure
        is missing (a driver that does not publish it, a library that failed).
Rule 2: `memory` says which memory the GPU's budget is: its own VRAM (a board's memory, or
        an APU's BIOS carve-out, which the OS never counts as RAM); a GTT budget (host RAM an
        AMD APU or an Intel iGPU maps through its graphics translation table); or Apple's
        unified memory up to the Metal working-set limit. GTT and unified budgets are host RAM:
        the GPU `shares_host_memory`, and a fit counts those bytes once, in the one pool.
Rule 3: `integrated` marks iGPUs and APUs. llama.cpp (src/llama.cpp, `llama_model_load_from_file`)
        adds integrated GPUs only when no discrete GPU was found.
Rule 4: bandwidth is bytes per second where known, with where it came from (the driver's
        bus width × memory clock, or the spec sheet of a preset by name); None otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.errors import RequestError
from gguf_budget.core.vocab import TextEnum


class Vendor(TextEnum):
    """Who made the GPU; the value is the word JSON shows."""

    NVIDIA = "nvidia"
    AMD = "amd"
    INTEL = "intel"
    APPLE = "apple"
    UNKNOWN = "unknown"


VENDOR_NAMES = {Vendor.NVIDIA: "NVIDIA", Vendor.AMD: "AMD", Vendor.INTEL: "Intel", Vendor.APPLE: "Apple",
                Vendor.UNKNOWN: "unknown vendor"}
PCI_VENDORS = {0x10DE: Vendor.NVIDIA, 0x1002: Vendor.AMD, 0x8086: Vendor.INTEL}


class GpuMemory(TextEnum):
    """Which memory a GPU's budget is (Rule 2)."""

    VRAM = "vram"
    GTT = "gtt"
    UNIFIED = "unified"


MEMORY_WORDS = {
    GpuMemory.VRAM: "dedicated VRAM",
    GpuMemory.GTT: "GTT budget (host RAM the GPU maps)",
    GpuMemory.UNIFIED: "unified memory up to the Metal working-set limit",
}


@dataclass(frozen=True, kw_only=True)
class GpuInfo:
    """One GPU (bytes; bandwidth in bytes per second)."""

    index: int
    name: str
    total: int | None
    free: int | None
    used: int | None
    vendor: Vendor = Vendor.UNKNOWN
    memory: GpuMemory = GpuMemory.VRAM
    integrated: bool = False
    bandwidth: int | None = None
    bandwidth_source: str | None = None
    reason: str | None = None
    reader: str = "nvml"
    max_buffer: int | None = None
    """The largest tensor its backend takes (Vulkan: the device's `maxStorageBufferRange`); None: no limit known."""

    def __post_init__(self) -> None:
        known = [v for v in (self.total, self.free, self.used, self.bandwidth) if v is not None]
        if self.index < 0 or any(v < 0 for v in known):
            raise RequestError(f"GPU {self.index}: memory figures cannot be negative")
        if self.total is not None and self.free is not None and self.free > self.total:
            raise RequestError(f"GPU {self.index}: more memory free than it has")

    @property
    def shares_host_memory(self) -> bool:
        return self.memory != GpuMemory.VRAM

    @property
    def budget(self) -> int | None:
        """What a fit may place here before reserves: free memory, else the total when no usage is published."""
        return self.free if self.free is not None else self.total

    @property
    def label(self) -> str:
        return f"GPU {self.index} ({self.name})"
