"""Hypothetical machines from a table of common GPUs and machines: memory and bandwidth, cited.

Rule 1: this table is the one source: `fit --preset NAME`, the machine editor and the
        bandwidth of detected GPUs (looked up by the name their driver reports) all read it.
        Every row cites the maker's spec page; memory is what the maker sells (GiB), bandwidth
        the peak memory bandwidth it states (bytes per second).
Rule 2: a GPU preset is one card (free = all of it, as a hypothetical machine is typed in);
        several may be combined (`"RTX 4090,RTX 3060"`, at most GPU_COUNT.high of them, as a
        typed machine), host RAM comes from the probe or the user. A machine preset is a whole unified-memory machine and stands alone: its RAM is
        the host, its GPU budget follows the machine's rule (Apple: the Metal working set of
        `apple.py`; Ryzen AI Max: AMD's largest Variable Graphics Memory carve-out, 96 GB of 128; DGX
        Spark: all of it, CUDA allocating from the one pool).
Rule 3: a detected GPU without a driver-reported bandwidth takes the spec-sheet figure of the
        row whose reported names include its name; an Apple chip that ships with two memory
        buses (M3 Max, M4 Max) stays unknown, since sysctl does not say which.
Rule 4: every row carries the llama.cpp backend its maker's GPUs usually run (`backend.Backend`)
        and its compute: a discrete GPU's dense FP16 matrix rate (`fp16_flops`: units × boost
        clock × FP16 FLOPs a unit does a clock, from the maker's pages and architecture papers,
        `compute_source` says which), an Apple GPU its cores and chip generation (the per-core
        rate is `core.speed.backend_speed`'s). Variants are rows of their own, named apart (H100
        SXM and PCIe, M4 Max 32- and 40-core); an older name stays an alias. `hbm` marks stacked
        memory (A100, H100): a token's reads reach a smaller share of it (`backend_speed` Rule 1).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gguf_budget.core.errors import RequestError
from gguf_budget.core.machine.apple import metal_working_set
from gguf_budget.core.machine.backend import Backend, vendor_backend
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
    backend: Backend = Backend.CUDA
    fp16_flops: int | None = None
    gpu_cores: int | None = None
    generation: str | None = None
    compute_source: str = ""
    aliases: tuple[str, ...] = ()
    hbm: bool = False

    @property
    def gpu_memory(self) -> GpuMemory:
        return GpuMemory.UNIFIED if self.unified and not self.carve_out else GpuMemory.VRAM

    @property
    def gpu_budget(self) -> int:
        """What the GPU may use: all of a card; a machine's rule (Rule 2)."""
        if not self.unified:
            return self.memory
        if self.carve_out or self.vendor is not Vendor.APPLE:
            return self.carve_out or self.memory
        return metal_working_set(self.memory, None)

    @property
    def host_ram(self) -> int:
        """A machine's RAM the OS sees: all of it when unified, less a carve-out."""
        return self.memory - self.carve_out


Units = tuple[int, float, int]
"""(units, boost clock in GHz, dense FP16 FLOPs a unit does a clock): Rule 4's compute."""
SM_GA10X = 1024  # GA10x, AD10x, GB20x, TU10x SM: 4 tensor cores × 128 FP16 FMA a clock (FP16 accumulate)
SM_GA100 = 2048  # GA100 and GA10B (Jetson Orin) SM: 4 tensor cores × 256 FP16 FMA
SM_GH100 = 2048  # GH100 SM as llama.cpp uses it: its mma.sync kernels run at GA100's rate a clock (wgmma's half)
CU_RDNA2 = 256  # RDNA 2 CU: 64 lanes × packed FP16 FMA (no matrix units)
CU_RDNA3 = 512  # RDNA 3 CU: WMMA FP16
CU_RDNA4 = 1024  # RDNA 4 CU: WMMA FP16
XE_CORE = 2048  # Xe-HPG / Xe2 core: 16 XMX engines × 64 FP16 FMA
NVIDIA_AMPERE = "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf"
NVIDIA_ADA = "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf"
NVIDIA_BLACKWELL = "https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/nvidia-rtx-blackwell-gpu-architecture.pdf"
NVIDIA_A100 = "https://images.nvidia.com/aem-dam/en-zz/Solutions/data-center/nvidia-ampere-architecture-whitepaper.pdf"
NVIDIA_H100 = "https://www.nvidia.com/en-us/data-center/h100/"
NVIDIA_PRO = "https://www.nvidia.com/en-us/design-visualization/"
AMD_RADEON = "https://www.amd.com/en/products/graphics/desktops/radeon.html"
INTEL_ARC = "https://www.intel.com/content/www/us/en/products/details/discrete-gpus/arc.html"
APPLE_SPECS = "https://support.apple.com/specs"


def _gpu(name: str, vendor: Vendor, gib: int, gb_s: float, source: str, *reported: str, units: Units,
         paper: str, aliases: tuple[str, ...] = (), hbm: bool = False) -> Preset:
    count, ghz, per_clock = units
    return Preset(name=name, vendor=vendor, memory=gib * GiB, bandwidth=int(gb_s * GB_S), unified=False, source=source,
                  reported_as=reported, backend=vendor_backend(vendor), fp16_flops=int(count * ghz * 1e9 * per_clock),
                  compute_source=f"{count} units × {ghz:g} GHz × {per_clock} FP16 FLOPs a clock ({paper})",
                  aliases=aliases, hbm=hbm)


def _mac(name: str, gib: int, gb_s: float, source: str, cores: int, aliases: tuple[str, ...] = ()) -> Preset:
    generation = name.split()[0]
    return Preset(name=name, vendor=Vendor.APPLE, memory=gib * GiB, bandwidth=int(gb_s * GB_S), unified=True,
                  source=source, backend=Backend.METAL, gpu_cores=cores, generation=generation,
                  compute_source=f"{cores} GPU cores of the {generation} generation ({APPLE_SPECS})", aliases=aliases)


N, A, I = Vendor.NVIDIA, Vendor.AMD, Vendor.INTEL
PRESETS: tuple[Preset, ...] = (
    _gpu("RTX 2070", N, 8, 448, "https://www.nvidia.com/en-us/geforce/graphics-cards/rtx-2070/", "NVIDIA GeForce RTX 2070",
         units=(36, 1.62, SM_GA10X), paper="https://images.nvidia.com/aem-dam/en-zz/Solutions/design-visualization/"
         "technologies/turing-architecture/NVIDIA-Turing-Architecture-Whitepaper.pdf"),
    _gpu("RTX 3060", N, 12, 360, NVIDIA_30 + "rtx-3060-3060ti/", "NVIDIA GeForce RTX 3060", units=(28, 1.777, SM_GA10X),
         paper=NVIDIA_AMPERE, aliases=("RTX 3060 12GB",)),
    _gpu("RTX 3070", N, 8, 448, NVIDIA_30 + "rtx-3070-3070ti/", "NVIDIA GeForce RTX 3070", units=(46, 1.725, SM_GA10X),
         paper=NVIDIA_AMPERE),
    _gpu("RTX 3080 10GB", N, 10, 760, NVIDIA_30 + "rtx-3080/", "NVIDIA GeForce RTX 3080", units=(68, 1.71, SM_GA10X),
         paper=NVIDIA_AMPERE),
    _gpu("RTX 3080 Ti", N, 12, 912, NVIDIA_30 + "rtx-3080/", "NVIDIA GeForce RTX 3080 Ti", units=(80, 1.665, SM_GA10X),
         paper=NVIDIA_AMPERE),
    _gpu("RTX 3090", N, 24, 936, NVIDIA_30 + "rtx-3090-3090ti/", "NVIDIA GeForce RTX 3090", units=(82, 1.695, SM_GA10X),
         paper=NVIDIA_AMPERE),
    _gpu("RTX 4060 Ti 16GB", N, 16, 288, NVIDIA_40 + "rtx-4060-4060ti/", units=(34, 2.535, SM_GA10X), paper=NVIDIA_ADA),
    _gpu("RTX 4070 Ti", N, 12, 504, NVIDIA_40 + "rtx-4070-family/", "NVIDIA GeForce RTX 4070 Ti", units=(60, 2.61, SM_GA10X),
         paper=NVIDIA_ADA),
    _gpu("RTX 4080", N, 16, 716.8, NVIDIA_40 + "rtx-4080-family/", "NVIDIA GeForce RTX 4080", units=(76, 2.505, SM_GA10X),
         paper=NVIDIA_ADA),
    _gpu("RTX 4090", N, 24, 1008, NVIDIA_40 + "rtx-4090/", "NVIDIA GeForce RTX 4090", units=(128, 2.52, SM_GA10X),
         paper=NVIDIA_ADA),
    _gpu("RTX 5080", N, 16, 960, "https://www.nvidia.com/en-us/geforce/graphics-cards/50-series/rtx-5080/",
         "NVIDIA GeForce RTX 5080", units=(84, 2.617, SM_GA10X), paper=NVIDIA_BLACKWELL),
    _gpu("RTX 5090", N, 32, 1792, "https://www.nvidia.com/en-us/geforce/graphics-cards/50-series/rtx-5090/",
         "NVIDIA GeForce RTX 5090", units=(170, 2.407, SM_GA10X), paper=NVIDIA_BLACKWELL),
    _gpu("RTX 4000 Ada", N, 20, 360, NVIDIA_PRO + "rtx-4000/", "NVIDIA RTX 4000 Ada Generation", units=(48, 2.175, SM_GA10X),
         paper=NVIDIA_ADA),
    _gpu("RTX 5000 Ada", N, 32, 576, NVIDIA_PRO + "rtx-5000/", "NVIDIA RTX 5000 Ada Generation", units=(100, 2.55, SM_GA10X),
         paper=NVIDIA_ADA),
    _gpu("RTX 6000 Ada", N, 48, 960, NVIDIA_PRO + "rtx-6000/", "NVIDIA RTX 6000 Ada Generation", units=(142, 2.505, SM_GA10X),
         paper=NVIDIA_ADA),
    _gpu("RTX A6000", N, 48, 768, NVIDIA_PRO + "rtx-a6000/", "NVIDIA RTX A6000", units=(84, 1.8, SM_GA10X),
         paper=NVIDIA_AMPERE),
    _gpu("RTX PRO 6000 Blackwell", N, 96, 1792, NVIDIA_PRO + "rtx-pro-6000/",
         "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", units=(188, 2.617, SM_GA10X), paper=NVIDIA_BLACKWELL),
    _gpu("A40", N, 48, 696, "https://www.nvidia.com/en-us/data-center/a40/", "NVIDIA A40", units=(84, 1.74, SM_GA10X),
         paper=NVIDIA_AMPERE),
    _gpu("L40S", N, 48, 864, "https://www.nvidia.com/en-us/data-center/l40s/", "NVIDIA L40S", units=(142, 2.52, SM_GA10X),
         paper=NVIDIA_ADA),
    _gpu("A100 SXM 80GB", N, 80, 2039, "https://www.nvidia.com/en-us/data-center/a100/ (SXM)", "NVIDIA A100-SXM4-80GB",
         units=(108, 1.41, SM_GA100), paper=NVIDIA_A100, aliases=("A100 80GB",), hbm=True),
    _gpu("A100 PCIe 80GB", N, 80, 1935, "https://www.nvidia.com/en-us/data-center/a100/ (PCIe)", "NVIDIA A100 80GB PCIe",
         units=(108, 1.41, SM_GA100), paper=NVIDIA_A100, hbm=True),
    _gpu("H100 SXM 80GB", N, 80, 3350, NVIDIA_H100 + " (SXM)", "NVIDIA H100 80GB HBM3", units=(132, 1.83, SM_GH100),
         paper=NVIDIA_H100, aliases=("H100 80GB",), hbm=True),
    _gpu("H100 PCIe 80GB", N, 80, 2000, NVIDIA_H100 + " (PCIe)", "NVIDIA H100 PCIe", units=(114, 1.62, SM_GH100),
         paper=NVIDIA_H100, hbm=True),
    _gpu("Jetson AGX Orin 64GB", N, 64, 204.8, "https://www.nvidia.com/en-us/autonomous-machines/embedded-systems/jetson-orin/",
         "Orin", units=(16, 1.3, SM_GA100), paper="Jetson AGX Orin series technical brief"),
    _gpu("RX 6800 XT", A, 16, 512, AMD_RADEON, "AMD Radeon RX 6800 XT", units=(72, 2.25, CU_RDNA2), paper=AMD_RADEON),
    _gpu("RX 7900 XTX", A, 24, 960,
         "https://www.amd.com/en/products/graphics/desktops/radeon/7000-series/amd-radeon-rx-7900xtx.html",
         "AMD Radeon RX 7900 XTX", "Radeon RX 7900 XTX", units=(96, 2.5, CU_RDNA3), paper=AMD_RADEON),
    _gpu("RX 9070 XT", A, 16, 640, AMD_RADEON, "AMD Radeon RX 9070 XT", units=(64, 2.97, CU_RDNA4), paper=AMD_RADEON),
    _gpu("RX 9070", A, 16, 640, AMD_RADEON, "AMD Radeon RX 9070", units=(56, 2.52, CU_RDNA4), paper=AMD_RADEON),
    _gpu("Radeon AI PRO R9700", A, 32, 640, AMD_RADEON, "AMD Radeon AI PRO R9700", units=(64, 2.92, CU_RDNA4),
         paper=AMD_RADEON),
    _gpu("Arc A770 16GB", I, 16, 560,
         "https://www.intel.com/content/www/us/en/products/sku/229151/intel-arc-a770-graphics-16gb/specifications.html",
         "Intel(R) Arc(TM) A770 Graphics", units=(32, 2.1, XE_CORE), paper=INTEL_ARC),
    _gpu("Arc B580", I, 12, 456, INTEL_ARC, "Intel(R) Arc(TM) B580 Graphics", units=(20, 2.67, XE_CORE), paper=INTEL_ARC),
    _mac("M1 8GB", 8, 68.25, APPLE_SPECS, 7),
    _mac("M1 8-core 16GB", 16, 68.25, APPLE_SPECS, 8),
    _mac("M1 Pro 14-core 16GB", 16, 200, APPLE_SPECS, 14),
    _mac("M1 Pro 16-core 32GB", 32, 200, APPLE_SPECS, 16),
    _mac("M1 Max 24-core 32GB", 32, 400, APPLE_SPECS, 24),
    _mac("M1 Max 32-core 64GB", 64, 400, APPLE_SPECS, 32),
    _mac("M1 Ultra 48-core 64GB", 64, 800, APPLE_SPECS, 48),
    _mac("M1 Ultra 64-core 128GB", 128, 800, APPLE_SPECS, 64),
    _mac("M2 8-core 8GB", 8, 100, APPLE_SPECS, 8),
    _mac("M2 10-core 16GB", 16, 100, APPLE_SPECS, 10),
    _mac("M2 Pro 16-core 16GB", 16, 200, APPLE_M2, 16),
    _mac("M2 Pro 32GB", 32, 200, APPLE_M2, 19),
    _mac("M2 Max 30-core 32GB", 32, 400, APPLE_M2, 30),
    _mac("M2 Max 96GB", 96, 400, APPLE_M2, 38),
    _mac("M2 Ultra 60-core 64GB", 64, 800, APPLE_M2_ULTRA, 60),
    _mac("M2 Ultra 76-core 192GB", 192, 800, APPLE_M2_ULTRA, 76, ("M2 Ultra 192GB",)),
    _mac("M3 10-core 8GB", 8, 100, APPLE_M3, 10),
    _mac("M3 Pro 14-core 18GB", 18, 150, APPLE_M3, 14),
    _mac("M3 Pro 36GB", 36, 150, APPLE_M3, 18),
    _mac("M3 Max 30-core 36GB", 36, 300, APPLE_M3, 30),
    _mac("M3 Max 40-core 64GB", 64, 400, APPLE_M3, 40),
    _mac("M3 Max 128GB", 128, 400, APPLE_M3, 40),
    _mac("M3 Ultra 60-core 96GB", 96, 819, APPLE_M3_ULTRA, 60),
    _mac("M3 Ultra 80-core 512GB", 512, 819, APPLE_M3_ULTRA, 80, ("M3 Ultra 512GB",)),
    _mac("M4 10-core 16GB", 16, 120, APPLE_SPECS, 10),
    _mac("M4 Pro 16-core 24GB", 24, 273, APPLE_M4, 16),
    _mac("M4 Pro 20-core 64GB", 64, 273, APPLE_M4, 20, ("M4 Pro 64GB",)),
    _mac("M4 Max 32-core 36GB", 36, 410, APPLE_M4, 32),
    _mac("M4 Max 40-core 128GB", 128, 546, APPLE_M4, 40, ("M4 Max 128GB",)),
    _mac("M5 Max 40-core 128GB", 128, 614, APPLE_SPECS, 40),
    Preset(name="DGX Spark GB10 128GB", vendor=Vendor.NVIDIA, memory=128 * GiB, bandwidth=273 * GB_S, unified=True,
           source="https://www.nvidia.com/en-us/products/workstations/dgx-spark/ (LPDDR5x, 256-bit, 273 GB/s)",
           backend=Backend.CUDA, fp16_flops=125 * 10**12,
           compute_source="1 PFLOP FP4 with sparsity ÷ 2 (dense) ÷ 4 (FP16) (the product page)"),
    Preset(name="Ryzen AI Max+ 395 128GB", vendor=Vendor.AMD, memory=128 * GiB, bandwidth=256 * GB_S, unified=True,
           source="https://www.amd.com/en/products/processors/laptop/ryzen/ai-300-series/amd-ryzen-ai-max-plus-395.html "
           "(LPDDR5X-8000, 256-bit; Variable Graphics Memory up to 96 GB)", carve_out=96 * GiB, backend=Backend.ROCM,
           fp16_flops=int(40 * 2.9e9 * CU_RDNA3), compute_source=f"40 units × 2.9 GHz × {CU_RDNA3} FP16 FLOPs a clock"),
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
        if key in (n.lower() for n in (preset.name, *preset.aliases)):
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
            "machine": p.unified, "gpu_budget": p.gpu_budget, "gpu_memory": p.gpu_memory.value, "source": p.source,
            "backend": p.backend.value, "fp16_flops": p.fp16_flops, "gpu_cores": p.gpu_cores, "generation": p.generation,
            "compute_source": p.compute_source}


def with_presets(text: str, host: HardwareSnapshot) -> HardwareSnapshot:
    """`host` with the GPUs `text` names ('RTX 3090,RTX 3060'); a machine preset is the whole machine (Rule 2)."""
    presets = parse_presets(text)
    if presets[0].unified:
        return preset_machine(presets[0], host.captured_at)
    return what_if(host, gpus=preset_gpus(presets))


def preset_of(gpu: GpuInfo) -> Preset | None:
    """The row a GPU is: a preset's own GPU by its name, a detected one by the name its driver reports."""
    for p in PRESETS:
        if gpu.name == p.name or gpu.name in p.reported_as:
            return p
    return None


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
