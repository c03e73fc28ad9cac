"""How fast this machine reads each memory tier and multiplies matrices, and where each figure came from.

Pure: records, the defaults, and which figure a machine's tier takes. Measuring lives in
`bandwidth_probe.py`, keeping the figures between runs in `bandwidth_store.py`.

Rule 1: every figure says its source — `measured` (a probe on this machine, with its date),
        `typed` (a person entered it), `reported` (a GPU driver's bus width × memory clock),
        `cited` (a maker's spec sheet: a preset, or a detected GPU looked up by name) or
        `assumed` (the defaults below) — and a detail in words, so a speed estimate can always
        say what it rests on.
Rule 2: the defaults are round, labelled figures, not measurements: RAM 20 GiB/s (what a
        dual-channel DDR4/DDR5 desktop sustains), disk 2 GiB/s (a PCIe 3/4 NVMe SSD's
        sequential read), VRAM 400 GiB/s (a mid-range GDDR6 card), compute 100 GFLOP/s (a
        few desktop cores multiplying float32 matrices).
Rule 3: the page cache is read at PAGE_CACHE_FACTOR × the RAM bandwidth: a streamed layer is
        copied from the cache into the ring, a read and a write per byte (the layer-streaming
        runtime's measured table in docs/budget-plan.md: 0/22 pinned on a warm page cache decodes
        11.4 tok/s, 22/22 pinned 22.1 tok/s).
Rule 4: a machine's GPUs give the VRAM figure unless one was typed: the slowest GPU that
        states a bandwidth (layers run in sequence, so a token waits for the slowest), as its
        driver reports it or its spec sheet cites it (`presets.spec_bandwidth`, a preset's row).
Rule 5: a hypothetical unified-memory machine (an Apple or Ryzen AI Max preset) reads its RAM at
        the bandwidth its spec sheet cites for that memory, unless a RAM figure was typed; a
        detected machine keeps the figure measured here.
Rule 6: a GPU's backend and FP16 rate and the CPU's compute rate may be typed (`--backend`,
        `--gpu-tflops`, `--cpu-gflops`); a typed figure wins over the preset's or the probe's, as a
        typed bandwidth does (`core.speed.backend_speed.gpu_figures` reads the GPU's).
Rule 7: the GPU runs kept on this machine (`gpu_runs`, `core.speed.calibration.gpu_runs`) travel with the
        figures, so the GPU tier of the device they ran on is priced by them
        (`core.speed.backend_speed.gpu_figures`), never the CPU's calibration.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from gguf_budget.core.errors import RequestError
from gguf_budget.core.machine.backend import Backend
from gguf_budget.core.machine.gpu import GpuInfo
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.units import human_bytes
from gguf_budget.core.vocab import TextEnum

GiB = 1024**3
PAGE_CACHE_FACTOR = 0.5


class BandwidthSource(TextEnum):
    """Where a figure came from (Rule 1); the value is the word texts and JSON show."""

    MEASURED = "measured"
    TYPED = "typed"
    REPORTED = "reported"
    CITED = "cited"
    ASSUMED = "assumed"


def measured_date(at: float | None) -> str | None:
    """'2025-12-03' (UTC) for a measurement's time; None when there is none."""
    return None if at is None else time.strftime("%Y-%m-%d", time.gmtime(at))


@dataclass(frozen=True)
class Bandwidth:
    """Bytes per second one tier reads, with its source, a one-line detail and, when measured, when."""

    bytes_per_s: int
    source: BandwidthSource
    detail: str
    measured_at: float | None = None

    def __post_init__(self) -> None:
        if isinstance(self.bytes_per_s, bool) or not isinstance(self.bytes_per_s, int) or self.bytes_per_s < 1:
            raise RequestError(f"a bandwidth must be a positive whole number of bytes per second, got {self.bytes_per_s!r}")

    @property
    def text(self) -> str:
        """'20.00 GiB/s (assumed: …)', with the date of a measurement."""
        date = measured_date(self.measured_at)
        when = f" on {date}" if date else ""
        return f"{human_bytes(self.bytes_per_s)}/s ({self.source.value}{when}: {self.detail})"


@dataclass(frozen=True)
class ComputeRate:
    """Floating-point operations per second the machine's cores sustain in a matrix multiply."""

    flops_per_s: int
    source: BandwidthSource
    detail: str
    measured_at: float | None = None

    def __post_init__(self) -> None:
        if isinstance(self.flops_per_s, bool) or not isinstance(self.flops_per_s, int) or self.flops_per_s < 1:
            raise RequestError(f"a compute rate must be a positive whole number of FLOP/s, got {self.flops_per_s!r}")

    @property
    def text(self) -> str:
        """'120 GFLOP/s (measured on 2025-12-03: …)'."""
        date = measured_date(self.measured_at)
        when = f" on {date}" if date else ""
        return f"{self.flops_per_s / 1e9:.0f} GFLOP/s ({self.source.value}{when}: {self.detail})"


@dataclass(frozen=True)
class Calibration:
    """How llama.cpp's real runs on a machine relate to its probes (`core.speed.calibration`): a decode token
    takes its reads at the probe's RAM rate / `decode`, plus `decode_overhead_s` of fixed work (graph, threads,
    sampling) when it runs on the CPU; a prompt token its FLOPs at the probe's compute rate / `prefill`, plus
    `prefill_overhead_s`. `runs` on this machine, 0 for the defaults."""

    decode: float
    prefill: float
    runs: int = 0
    default_runs: int = 0
    decode_overhead_s: float = 0.0
    prefill_overhead_s: float = 0.0

    def __post_init__(self) -> None:
        if not (0 < self.decode <= 10 and 0 < self.prefill <= 10) or self.runs < 0:
            raise RequestError(f"a calibration's shares must lie in (0, 10], got {self.decode!r}, {self.prefill!r}")
        if not (0 <= self.decode_overhead_s <= 1 and 0 <= self.prefill_overhead_s <= 1):
            raise RequestError("a calibration's fixed time per token must lie in [0, 1] s")

    @property
    def text(self) -> str:
        """'calibrated on 3 runs on this machine' / 'default calibration from 13 real llama.cpp runs'."""
        if self.runs:
            return f"calibrated on {self.runs} run{'s' if self.runs != 1 else ''} on this machine"
        return f"default calibration from {self.default_runs} real llama.cpp runs"


DEFAULT_RAM = Bandwidth(20 * GiB, BandwidthSource.ASSUMED, "a dual-channel desktop's sustained read")
DEFAULT_DISK = Bandwidth(2 * GiB, BandwidthSource.ASSUMED, "an NVMe SSD's sequential read")
DEFAULT_VRAM = Bandwidth(400 * GiB, BandwidthSource.ASSUMED, "a mid-range GDDR6 card")
DEFAULT_COMPUTE = ComputeRate(100 * 10**9, BandwidthSource.ASSUMED, "a few desktop cores' float32 matrix multiply")
DEFAULT_DECODE_EFFICIENCY = 0.37
DEFAULT_PREFILL_EFFICIENCY = 0.42
DEFAULT_CALIBRATION_RUNS = 12
DEFAULT_DECODE_OVERHEAD_S = 0.0035
DEFAULT_PREFILL_OVERHEAD_S = 0.0
DEFAULT_CALIBRATION = Calibration(DEFAULT_DECODE_EFFICIENCY, DEFAULT_PREFILL_EFFICIENCY, 0, DEFAULT_CALIBRATION_RUNS,
                                  DEFAULT_DECODE_OVERHEAD_S, DEFAULT_PREFILL_OVERHEAD_S)
"""Derived from real llama.cpp runs (`core.speed.calibration`, Rule 3, shows how)."""


def typed_bandwidth(bytes_per_s: int) -> Bandwidth:
    return Bandwidth(bytes_per_s, BandwidthSource.TYPED, "entered by hand")


def page_cache_bandwidth(ram: Bandwidth) -> Bandwidth:
    """Rule 3: what a warm page cache delivers into the ring, from the RAM figure."""
    return replace(ram, bytes_per_s=max(int(ram.bytes_per_s * PAGE_CACHE_FACTOR), 1),
                   detail=f"page cache, {PAGE_CACHE_FACTOR:g} × RAM ({ram.detail})")


@dataclass(frozen=True, kw_only=True)
class GpuRun:
    """Rule 7: one quiet run on this machine with every layer on one GPU: the GPU's buffer name as llama.cpp prints
    it (`CUDA0`, `MTL0`), the bytes each decoded token read and the tokens/s it decoded."""

    device: str
    decode_bytes: int
    decode_tok_s: float


@dataclass(frozen=True, kw_only=True)
class Bandwidths:
    """The machine's speed figures: one bandwidth per tier (the estimate reads the stream tier from `disk`
    or the page cache), the compute rate prefill is priced at, and the calibration of both; a typed GPU backend
    and FP16 rate (Rule 6), None when not typed."""

    ram: Bandwidth = DEFAULT_RAM
    disk: Bandwidth = DEFAULT_DISK
    vram: Bandwidth = DEFAULT_VRAM
    compute: ComputeRate = DEFAULT_COMPUTE
    calibration: Calibration = DEFAULT_CALIBRATION
    backend: Backend | None = None
    gpu_compute: ComputeRate | None = None
    gpu_runs: tuple[GpuRun, ...] = ()


def typed_compute(flops_per_s: int) -> ComputeRate:
    return ComputeRate(flops_per_s, BandwidthSource.TYPED, "entered by hand")


def with_typed(bandwidths: Bandwidths, ram: int | None = None, disk: int | None = None,
               vram: int | None = None) -> Bandwidths:
    """The figures a person typed replace the others; None keeps what is there."""
    return replace(bandwidths, ram=bandwidths.ram if ram is None else typed_bandwidth(ram),
                   disk=bandwidths.disk if disk is None else typed_bandwidth(disk),
                   vram=bandwidths.vram if vram is None else typed_bandwidth(vram))


def with_typed_compute(bandwidths: Bandwidths, backend: Backend | None = None, gpu_flops: int | None = None,
                       cpu_flops: int | None = None) -> Bandwidths:
    """Rule 6: a typed backend and compute rates replace the others; None keeps what is there."""
    return replace(bandwidths, compute=bandwidths.compute if cpu_flops is None else typed_compute(cpu_flops),
                   backend=bandwidths.backend if backend is None else backend,
                   gpu_compute=bandwidths.gpu_compute if gpu_flops is None else typed_compute(gpu_flops))


def _gpu_bandwidth(gpu: GpuInfo) -> Bandwidth | None:
    if not gpu.bandwidth:
        return None
    said = gpu.bandwidth_source or "reported by its driver"
    source = BandwidthSource.CITED if said.startswith("spec sheet") else BandwidthSource.REPORTED
    return Bandwidth(gpu.bandwidth, source, f"{gpu.label}, {said}")


def for_machine(bandwidths: Bandwidths, machine: HardwareSnapshot | None) -> Bandwidths:
    """Rules 4–5: the figures a full load on `machine` reads at."""
    if machine is None:
        return bandwidths
    out = bandwidths
    stated = [b for b in (_gpu_bandwidth(g) for g in machine.gpus) if b is not None]
    if stated and out.vram.source is not BandwidthSource.TYPED:
        out = replace(out, vram=min(stated, key=lambda b: b.bytes_per_s))
    unified = [g for g in machine.gpus if g.integrated and g.reader == "preset" and g.bandwidth]
    if unified and out.ram.source is not BandwidthSource.TYPED:
        gpu = unified[0]
        out = replace(out, ram=Bandwidth(int(gpu.bandwidth or 1), BandwidthSource.CITED,
                                         f"{gpu.name}'s memory, {gpu.bandwidth_source or 'spec sheet'}"))
    return out
