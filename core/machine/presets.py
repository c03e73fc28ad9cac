"""Hypothetical machines from a table of common GPUs and machines: memory and bandwidth, cited.

Rule 1: this table is the one source: `fit --preset NAME`, the machine editor and the
        bandwidth of detected GPUs (looked up by the name their driver reports) all read it.
        Every row cites the maker's spec page; memory is what the maker sells (GiB), bandwidth
        the peak memory bandwidth it states (bytes per second).
Rule 2: a GPU preset is one card (free = all of it, as a hypothetical machine is typed in);
        several may be combined (`"RTX 4090,RTX 3060"`, at most GPU_COUNT.high of them, as a
        typed machine), host RAM comes from the probe or the user. A machine preset is a whole unified-memory machine and stands alone: its RAM is
        the host, its GPU budget follows the machine's rule (Apple: the Metal working set of
        `apple.py`; Ryzen AI Max: AMD's largest Variable Graphics Memory carve-out, 96 GB of 128).
Rule 3: a detected GPU without a driver-reported bandwidth takes the spec-sheet figure of the
        row whose reported names include its name; an Apple chip that ships with two memory
        buses (M3 Max, M4 Max) stays unknown, since sysctl does not say which.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gguf_budget.core.errors import RequestError
from gguf_budget.core.machine.apple import metal_working_set
from gguf_budget.core.machine.gpu import GpuInfo, GpuMemory, Vendor
from gguf_budget.core.machine.snapshot import HardwareSnapshot, SnapshotSource, what_if
from gguf_budget.core.ranges import GPU_COUNT

GiB = 1024**3
GB_S = 10**9
NVIDIA_30 = "https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/"
NVIDIA_40 = "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/"
APPLE_M2 = "https://www.apple.com/newsroom/2023/01/apple-unveils-m2-pro-and-m2-max-next-generation-chips-for-next-level-workflows/"
APPLE_M2_ULTRA = "https://www.apple.com/newsroom/2023/06/apple-introduces-m2-ultra/"
APPLE_M3 = "https://www.apple.com/newsroom/2023/10/apple-unveils-m3-m3-pro-and-m3-max-the-most-advanced-chips-for-a-personal-computer/"
APPLE_M3_ULTRA = "https://www.apple.com/newsroom/2025/03/apple-reveals-m3-ultra-taking-apple-silicon-to-a-new-extreme/"
APPLE_M4 = "https://www.apple.com/newsroom/2024/10/apple-introduces-m4-pro-and-m4-max/"


@dataclass(frozen=True, kw_only=True)
class Preset:
    """One row: a GPU (`unified` False) or a whole unified-memory machine (True); `carve_out` is the
    part of a machine's RAM set aside as the GPU's own memory (not host RAM)."""

    name: str
    vendor: Vendor
    memory: int
    bandwidth: int
    unified: bool
    source: str
    reported_as: tuple[str, ...] = ()
    carve_out: int = 0

    @property
    def gpu_memory(self) -> GpuMemory:
        return GpuMemory.UNIFIED if self.unified and not self.carve_out else GpuMemory.VRAM

    @property
    def gpu_budget(self) -> int:
        """What the GPU may use: all of a card; a machine's rule (Rule 2)."""
        if not self.unified:
            return self.memory
        return self.carve_out or metal_working_set(self.memory, None)

    @property
    def host_ram(self) -> int:
        """A machine's RAM the OS sees: all of it when unified, less a carve-out."""
        return self.memory - self.carve_out


def _gpu(name: str, vendor: Vendor, gib: int, gb_s: float, source: str, *reported: str) -> Preset:
    return Preset(name=name, vendor=vendor, memory=gib * GiB, bandwidth=int(gb_s * GB_S), unified=False, source=source,
                  reported_as=reported)


def _mac(name: str, gib: int, gb_s: float, source: str) -> Preset:
    return Preset(name=name, vendor=Vendor.APPLE, memory=gib * GiB, bandwidth=int(gb_s * GB_S), unified=True, source=source)


PRESETS: tuple[Preset, ...] = (
    _gpu("RTX 3060", Vendor.NVIDIA, 12, 360, NVIDIA_30 + "rtx-3060-3060ti/", "NVIDIA GeForce RTX 3060"),
    _gpu("RTX 3090", Vendor.NVIDIA, 24, 936, NVIDIA_30 + "rtx-3090-3090ti/", "NVIDIA GeForce RTX 3090"),
    _gpu("RTX 4060 Ti 16GB", Vendor.NVIDIA, 16, 288, NVIDIA_40 + "rtx-4060-4060ti/"),
    _gpu("RTX 4090", Vendor.NVIDIA, 24, 1008, NVIDIA_40 + "rtx-4090/", "NVIDIA GeForce RTX 4090"),
    _gpu("RTX 5090", Vendor.NVIDIA, 32, 1792, "https://www.nvidia.com/en-us/geforce/graphics-cards/50-series/rtx-5090/",
         "NVIDIA GeForce RTX 5090"),
    _gpu("A100 80GB", Vendor.NVIDIA, 80, 2039, "https://www.nvidia.com/en-us/data-center/a100/ (SXM)",
         "NVIDIA A100-SXM4-80GB"),
    _gpu("H100 80GB", Vendor.NVIDIA, 80, 3350, "https://www.nvidia.com/en-us/data-center/h100/ (SXM)",
         "NVIDIA H100 80GB HBM3"),
    _gpu("RX 7900 XTX", Vendor.AMD, 24, 960,
         "https://www.amd.com/en/products/graphics/desktops/radeon/7000-series/amd-radeon-rx-7900xtx.html",
         "AMD Radeon RX 7900 XTX", "Radeon RX 7900 XTX"),
    _gpu("Arc A770 16GB", Vendor.INTEL, 16, 560,
         "https://www.intel.com/content/www/us/en/products/sku/229151/intel-arc-a770-graphics-16gb/specifications.html",
         "Intel(R) Arc(TM) A770 Graphics"),
    _mac("M2 Pro 32GB", 32, 200, APPLE_M2),
    _mac("M2 Max 96GB", 96, 400, APPLE_M2),
    _mac("M2 Ultra 192GB", 192, 800, APPLE_M2_ULTRA),
    _mac("M3 Pro 36GB", 36, 150, APPLE_M3),
    _mac("M3 Max 128GB", 128, 400, APPLE_M3),
    _mac("M3 Ultra 512GB", 512, 819, APPLE_M3_ULTRA),
    _mac("M4 Pro 64GB", 64, 273, APPLE_M4),
    _mac("M4 Max 128GB", 128, 546, APPLE_M4),
    Preset(name="Ryzen AI Max+ 395 128GB", vendor=Vendor.AMD, memory=128 * GiB, bandwidth=256 * GB_S, unified=True,
           source="https://www.amd.com/en/products/processors/laptop/ryzen/ai-300-series/amd-ryzen-ai-max-plus-395.html "
           "(LPDDR5X-8000, 256-bit; Variable Graphics Memory up to 96 GB)", carve_out=96 * GiB),
)

# Apple chips by `machdep.cpu.brand_string`: one memory bus each, or None where two variants ship (Rule 3).
APPLE_CHIP_BANDWIDTH: dict[str, int | None] = {
    "Apple M1": 68_250_000_000, "Apple M1 Pro": 200 * GB_S, "Apple M1 Max": 400 * GB_S, "Apple M1 Ultra": 800 * GB_S,
    "Apple M2": 100 * GB_S, "Apple M2 Pro": 200 * GB_S, "Apple M2 Max": 400 * GB_S, "Apple M2 Ultra": 800 * GB_S,
    "Apple M3": 100 * GB_S, "Apple M3 Pro": 150 * GB_S, "Apple M3 Max": None, "Apple M3 Ultra": 819 * GB_S,
    "Apple M4": 120 * GB_S, "Apple M4 Pro": 273 * GB_S, "Apple M4 Max": None,
}


def preset_names() -> tuple[str, ...]:
    return tuple(p.name for p in PRESETS)


def find_preset(name: str) -> Preset:
    """The row called `name` (case and spacing ignored); a RequestError naming the choices otherwise."""
    key = " ".join(name.split()).lower()
    for preset in PRESETS:
        if preset.name.lower() == key:
            return preset
    raise RequestError(f"no preset {name.strip()!r}; choose one of: {', '.join(preset_names())}")


def parse_presets(text: str) -> tuple[Preset, ...]:
    """'RTX 4090,RTX 3060' → their rows; a machine preset must stand alone (Rule 2). RequestError otherwise."""
    names = [n for n in text.split(",") if n.strip()]
    if not names:
        raise RequestError("name a preset, e.g. 'RTX 4090' or 'M2 Max 96GB'")
    if len(names) > GPU_COUNT.high:
        raise RequestError(f"{len(names):,} presets named: a machine has at most {GPU_COUNT.high} GPUs")
    presets = tuple(find_preset(n) for n in names)
    if len(presets) > 1 and any(p.unified for p in presets):
        raise RequestError("a machine preset (Apple, Ryzen AI Max) is a whole machine: name it alone")
    return presets


def preset_gpus(presets: tuple[Preset, ...]) -> tuple[GpuInfo, ...]:
    """Hypothetical GPUs for the rows, all memory free (Rule 2)."""
    return tuple(GpuInfo(index=i, name=p.name, total=p.gpu_budget, free=p.gpu_budget, used=0, vendor=p.vendor,
                         memory=p.gpu_memory, integrated=p.unified, bandwidth=p.bandwidth,
                         bandwidth_source=f"spec sheet: {p.source}", reader="preset") for i, p in enumerate(presets))


def preset_machine(preset: Preset, captured_at: float = 0.0) -> HardwareSnapshot:
    """A whole machine from a machine preset: its RAM all available, its GPU as Rule 2 sizes it."""
    if not preset.unified:
        raise RequestError(f"{preset.name} is a GPU, not a machine: give the host RAM too")
    return HardwareSnapshot(captured_at=captured_at, host_total=preset.host_ram, host_available=preset.host_ram,
                            cgroup_limit=None, gpus=preset_gpus((preset,)), gpu_error=None,
                            source=SnapshotSource.HYPOTHETICAL)


def preset_dict(p: Preset) -> dict[str, object]:
    """One row as JSON (`hw --presets --json`)."""
    return {"name": p.name, "vendor": p.vendor.value, "memory": p.memory, "bandwidth": p.bandwidth,
            "machine": p.unified, "gpu_budget": p.gpu_budget, "gpu_memory": p.gpu_memory.value, "source": p.source}


def with_presets(text: str, host: HardwareSnapshot) -> HardwareSnapshot:
    """`host` with the GPUs `text` names ('RTX 3090,RTX 3060'); a machine preset is the whole machine (Rule 2)."""
    presets = parse_presets(text)
    if presets[0].unified:
        return preset_machine(presets[0], host.captured_at)
    return what_if(host, gpus=preset_gpus(presets))


def spec_bandwidth(gpu: GpuInfo) -> GpuInfo:
    """The GPU with the spec sheet's bandwidth filled in where its driver gave none (Rule 3)."""
    if gpu.bandwidth is not None:
        return gpu
    chip = gpu.name.removesuffix(" GPU")
    if gpu.vendor == Vendor.APPLE and APPLE_CHIP_BANDWIDTH.get(chip):
        return replace(gpu, bandwidth=APPLE_CHIP_BANDWIDTH[chip], bandwidth_source=f"spec sheet: {chip}")
    for p in PRESETS:
        if gpu.name in p.reported_as:
            return replace(gpu, bandwidth=p.bandwidth, bandwidth_source=f"spec sheet: {p.source}")
    return gpu
