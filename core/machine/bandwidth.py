"""How fast each memory tier reads: a bandwidth, and where the figure came from (DESIGN §3.5).

Pure: records, the defaults, and the parsing of recorded readings. Measuring lives in
`bandwidth_probe.py`, so recorded readings can be tested without it.

Rule 1: every figure says its source — `measured` (a probe on this machine), `typed` (a
        person entered it) or `assumed` (the defaults below) — and a detail in words, so a
        speed estimate can always say what it rests on.
Rule 2: the defaults are round, labelled figures, not measurements: RAM 20 GiB/s (what a
        dual-channel DDR4/DDR5 desktop sustains on one stream), disk 2 GiB/s (a PCIe 3/4 NVMe
        SSD's sequential read), VRAM 400 GiB/s (a mid-range GDDR6 card).
Rule 3: VRAM from NVML: bus width (bits) / 8 × max memory clock (MHz) × 10^6 × 2 — NVML
        reports the memory clock at half the data rate for GDDR and HBM alike (RTX 3090:
        384-bit × 9751 MHz → 936 GB/s; A100-40GB: 5120-bit × 1215 MHz → 1555 GB/s, the
        published figures). A reading of 0 or less is no reading.
Rule 4: the page cache is read at PAGE_CACHE_FACTOR × the RAM bandwidth: a streamed layer is
        copied from the cache into the ring, a read and a write per byte (the seed's table:
        0/22 pinned on a warm page cache decodes 11.4 tok/s, 22/22 pinned 22.1 tok/s).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from gguf_budget.core.errors import RequestError
from gguf_budget.core.units import human_bytes

GiB = 1024**3
PAGE_CACHE_FACTOR = 0.5
NVML_DATA_RATE = 2


class BandwidthSource(str, Enum):
    MEASURED = "measured"
    TYPED = "typed"
    ASSUMED = "assumed"


@dataclass(frozen=True)
class Bandwidth:
    """Bytes per second one tier reads, with its source and a one-line detail."""

    bytes_per_s: int
    source: BandwidthSource
    detail: str

    def __post_init__(self) -> None:
        if isinstance(self.bytes_per_s, bool) or not isinstance(self.bytes_per_s, int) or self.bytes_per_s < 1:
            raise RequestError(f"a bandwidth must be a positive whole number of bytes per second, got {self.bytes_per_s!r}")

    @property
    def text(self) -> str:
        """'20.00 GiB/s (assumed: …)'."""
        return f"{human_bytes(self.bytes_per_s)}/s ({self.source.value}: {self.detail})"


DEFAULT_RAM = Bandwidth(20 * GiB, BandwidthSource.ASSUMED, "a dual-channel desktop's sustained read")
DEFAULT_DISK = Bandwidth(2 * GiB, BandwidthSource.ASSUMED, "an NVMe SSD's sequential read")
DEFAULT_VRAM = Bandwidth(400 * GiB, BandwidthSource.ASSUMED, "a mid-range GDDR6 card")


def typed_bandwidth(bytes_per_s: int) -> Bandwidth:
    return Bandwidth(bytes_per_s, BandwidthSource.TYPED, "entered by hand")


def page_cache_bandwidth(ram: Bandwidth) -> Bandwidth:
    """Rule 4: what a warm page cache delivers into the ring, from the RAM figure."""
    return replace(ram, bytes_per_s=max(int(ram.bytes_per_s * PAGE_CACHE_FACTOR), 1),
                   detail=f"page cache, {PAGE_CACHE_FACTOR:g} × RAM ({ram.detail})")


def vram_from_nvml(bus_width_bits: int, max_memory_clock_mhz: int, name: str = "GPU") -> Bandwidth | None:
    """Rule 3: NVML's bus width and max memory clock as a bandwidth; None when either is no reading."""
    if bus_width_bits <= 0 or max_memory_clock_mhz <= 0:
        return None
    rate = bus_width_bits // 8 * max_memory_clock_mhz * 1_000_000 * NVML_DATA_RATE
    return Bandwidth(rate, BandwidthSource.MEASURED,
                     f"NVML, {name}: {bus_width_bits}-bit bus × {max_memory_clock_mhz} MHz × {NVML_DATA_RATE}")


@dataclass(frozen=True)
class Bandwidths:
    """One figure per tier; the speed estimate reads the stream tier from `disk` or the page cache."""

    ram: Bandwidth = DEFAULT_RAM
    disk: Bandwidth = DEFAULT_DISK
    vram: Bandwidth = DEFAULT_VRAM


def with_typed(bandwidths: Bandwidths, ram: int | None = None, disk: int | None = None,
               vram: int | None = None) -> Bandwidths:
    """The figures a person typed replace the others; None keeps what is there."""
    typed = {name: typed_bandwidth(v) for name, v in (("ram", ram), ("disk", disk), ("vram", vram)) if v is not None}
    return replace(bandwidths, **typed)
