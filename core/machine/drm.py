"""AMD and Intel GPUs on Linux from DRM sysfs — pure parsing of recorded readings.

The probe reads each `/sys/class/drm/card<N>/` into a `DrmCardReading` (file name → text);
everything here is pure, so trees recorded on real machines are test fixtures, and real and
recorded readings take one code path. `amdsmi`, when importable, fills the same record.

Rule 1: cards are `card<N>` folders (connectors such as `card0-DP-1` are not), in N order,
        then amdsmi's devices in its order.
        `device/vendor` and `device/device` are hex PCI ids; memory files are decimal bytes.
        Only NVIDIA, AMD and Intel cards are GPUs here (a server's BMC display is not).
Rule 2: NVIDIA cards belong to NVML: skipped while NVML lists GPUs; when NVML could not
        answer they are listed with memory unknown and NVML's reason.
Rule 3: AMD (amdgpu): an APU has no VRAM chips of its own — amdgpu then hides
        `mem_info_vram_vendor` (gmc.vram_vendor = 0) — and its BIOS carve-out is smaller than
        its GTT; its budget is the GTT (free = gtt_total − gtt_used). Anything else is budgeted
        by VRAM (free = vram_total − vram_used), carve-outs of any size included.
Rule 4: Intel: local memory (xe `tile0/physical_vram_size_bytes`, i915 `lmem_total_bytes`)
        makes a discrete card; neither driver publishes its usage, so free is unknown. Without
        it, an iGPU budgeted by GTT as Mesa's ANV driver sizes its heap
        (`anv_compute_sys_heap_size`): ¾ of host RAM, ½ at 4 GiB or less; free = that heap,
        bounded by the host's available RAM.
Rule 5: a file that is missing or not a number is unknown (None), and the reason names it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping

from gguf_budget.core.frozen import FrozenMap
from gguf_budget.core.machine.gpu import PCI_VENDORS, VENDOR_NAMES, GpuInfo, GpuMemory, Vendor
from gguf_budget.core.safe_text import safe_text

GiB = 1024**3
CARD_NAME = re.compile(r"^(card|amdsmi)(\d+)$")
VRAM_TOTAL = "device/mem_info_vram_total"
VRAM_USED = "device/mem_info_vram_used"
GTT_TOTAL = "device/mem_info_gtt_total"
GTT_USED = "device/mem_info_gtt_used"
VRAM_VENDOR = "device/mem_info_vram_vendor"
LOCAL_MEMORY = ("device/tile0/physical_vram_size_bytes", "device/tile0/memory/physical_vram_size_bytes",
                "device/lmem_total_bytes", "lmem_total_bytes")
DRM_FILES = ("device/vendor", "device/device", "device/product_name", VRAM_TOTAL, VRAM_USED, GTT_TOTAL, GTT_USED,
             VRAM_VENDOR, *LOCAL_MEMORY)


@dataclass(frozen=True)
class DrmCardReading:
    """What the probe read for one card: `files` maps DRM_FILES names to their text; `driver` is its
    kernel module; `reader` says whether sysfs or amdsmi answered (amdsmi also knows the bandwidth)."""

    card: str
    files: Mapping[str, str] = field(default_factory=FrozenMap)
    driver: str | None = None
    reader: str = "sysfs"
    bandwidth: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "files", FrozenMap(self.files))  # a frozen record holds no dict (core.frozen)

    def number(self, name: str, base: int = 10) -> int | None:
        text = self.files.get(name, "").strip()
        try:
            value = int(text, base)
        except ValueError:
            return None
        return value if value >= 0 else None


def card_number(name: str) -> int | None:
    """'card1' → 1 (and amdsmi's 'amdsmi1' → 1); None for connectors and anything else."""
    m = CARD_NAME.match(name)
    return int(m.group(2)) if m else None


def _card_order(reading: DrmCardReading) -> tuple[bool, int]:
    return reading.card.startswith("amdsmi"), card_number(reading.card) or 0


def _name(reading: DrmCardReading, vendor: Vendor, pci_id: str) -> str:
    product = safe_text(reading.files.get("device/product_name", "").strip(), 80)
    return product or f"{VENDOR_NAMES[vendor]} GPU [{pci_id}]"


def _free(total: int | None, used: int | None) -> int | None:
    return None if total is None or used is None else max(total - min(used, total), 0)


def _missing(reading: DrmCardReading, names: tuple[str, ...]) -> str | None:
    gone = [n.rsplit("/", 1)[-1] for n in names if reading.number(n) is None]
    return f"{reading.driver or 'the driver'} does not publish {', '.join(gone)}" if gone else None


def _amd(r: DrmCardReading, index: int, name: str) -> GpuInfo:
    vram, gtt = r.number(VRAM_TOTAL), r.number(GTT_TOTAL)
    apu = VRAM_VENDOR not in r.files and vram is not None and gtt is not None and vram < gtt
    total_file, used_file = (GTT_TOTAL, GTT_USED) if apu else (VRAM_TOTAL, VRAM_USED)
    total, used = r.number(total_file), r.number(used_file)
    memory = GpuMemory.GTT if apu else GpuMemory.VRAM
    source = f"{r.reader}: vram_max_bandwidth" if r.bandwidth else None
    return GpuInfo(index=index, name=name, total=total, free=_free(total, used), used=used, vendor=Vendor.AMD,
                   memory=memory, integrated=apu, bandwidth=r.bandwidth, bandwidth_source=source,
                   reason=_missing(r, (total_file, used_file)), reader=r.reader)


def anv_heap(host_total: int) -> int:
    """Mesa ANV's system heap for an Intel iGPU: ½ of RAM at 4 GiB or less, else ¾ (Rule 4)."""
    return host_total // 2 if host_total <= 4 * GiB else host_total * 3 // 4


def _intel(r: DrmCardReading, index: int, name: str, host_total: int, host_available: int) -> GpuInfo:
    local = next((v for v in (r.number(n) for n in LOCAL_MEMORY) if v), None)
    if local is not None:
        why = f"{r.driver or 'the Intel driver'} publishes no VRAM usage: free memory unknown"
        return GpuInfo(index=index, name=name, total=local, free=None, used=None, vendor=Vendor.INTEL, reason=why,
                       reader=r.reader)
    heap = anv_heap(host_total)
    return GpuInfo(index=index, name=name, total=heap, free=min(heap, host_available), used=None, vendor=Vendor.INTEL,
                   memory=GpuMemory.GTT, integrated=True,
                   reason=f"{r.driver or 'the Intel driver'} publishes no GTT usage: free is the heap, "
                          "bounded by the host's available RAM",
                   reader=r.reader)


def gpus_from_drm(
    readings: tuple[DrmCardReading, ...],
    first_index: int,
    host_total: int,
    host_available: int,
    nvml_listed: bool,
    nvml_reason: str | None,
) -> tuple[GpuInfo, ...]:
    """The GPUs the recorded cards describe, numbered from `first_index` (Rules 1–5)."""
    ordered = sorted((r for r in readings if card_number(r.card) is not None), key=_card_order)
    out: list[GpuInfo] = []
    for r in ordered:
        vendor_id, device_id = r.number("device/vendor", 16), r.number("device/device", 16)
        vendor = PCI_VENDORS.get(vendor_id or -1)
        if vendor is None or (vendor == Vendor.NVIDIA and nvml_listed):
            continue
        index = first_index + len(out)
        name = _name(r, vendor, f"{vendor_id or 0:04x}:{device_id or 0:04x}")
        if vendor == Vendor.AMD:
            out.append(_amd(r, index, name))
        elif vendor == Vendor.INTEL:
            out.append(_intel(r, index, name, host_total, host_available))
        else:
            out.append(GpuInfo(index=index, name=name, total=None, free=None, used=None, vendor=vendor,
                               reason=f"memory unknown: {nvml_reason or 'NVML did not answer'}", reader=r.reader))
    return tuple(out)
