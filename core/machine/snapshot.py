"""What this machine has: a snapshot record, and the pure parsing of recorded readings.

Probing lives in `probe.py`; everything here is pure so tests can feed readings recorded on
real machines (psutil numbers, cgroup files, NVML answers; DRM sysfs in `drm.py`, macOS
sysctl in `apple.py`).

Rule 1: host RAM is psutil's `total` and `available`. `available` never includes swap, and
        swap is recorded only to say that it is not counted: paging to SSD is no RAM. On Linux
        psutil reads them from `/proc/meminfo` (MemTotal, MemAvailable, SwapTotal, in KiB);
        `meminfo_figures` reads the same three where psutil would take them as they stand, and
        says None where psutil estimates or corrects (no MemAvailable, 0, above the total), which
        the probe leaves to psutil.
Rule 2: a container's memory cgroup bounds both figures: total ≤ the tightest limit,
        available ≤ the least headroom (the readings and their rules are in `cgroup.py`).
Rule 3: GPUs are the NVIDIA devices NVML lists, in NVML index order, then the AMD and Intel
        cards of DRM sysfs (or amdsmi), then an Apple Silicon GPU. When NVML cannot answer
        (bindings or library missing, driver not loaded, no permission, zero devices)
        `gpu_error` says why, in words; NVIDIA cards sysfs still sees are listed with memory
        unknown. NVML's bandwidth is bus width × max memory clock × 2 (double data rate).
Rule 4: a hypothetical machine is a snapshot built from figures a person typed; its
        `source` says so, so no one mistakes it for a measurement. Leaving the GPUs out of a
        probed machine (`without_gpus`) types nothing: it stays probed, `gpu_error` says why.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable

from gguf_budget.core.errors import RequestError
from gguf_budget.core.machine.cgroup import CgroupReading, cgroup_ancestors, cgroup_bounds, parse_cgroup, parse_proc_self_cgroup
from gguf_budget.core.machine.gpu import GpuInfo, Vendor
from gguf_budget.core.ranges import GPU_COUNT, MEMORY
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.vocab import TextEnum

__all__ = [
    "CgroupReading", "GpuInfo", "HardwareSnapshot", "SnapshotSource", "cgroup_ancestors", "cgroup_bounds",
    "gpu_error_text", "gpu_from_nvml", "hypothetical_gpus", "hypothetical_machine", "nvml_bandwidth",
    "nvml_error_reason", "parse_cgroup", "parse_proc_self_cgroup", "snapshot_from_readings", "what_if", "without_gpus",
]


class SnapshotSource(TextEnum):
    """Where a snapshot's figures come from: this machine's probe, or a person's what-if."""

    PROBE = "probe"
    HYPOTHETICAL = "hypothetical"


HYPOTHETICAL_GPU_NAME = "hypothetical GPU"

# nvml.h NVML_ERROR_* codes (a stable ABI), in words a person can act on.
NVML_REASONS: dict[int, str] = {
    1: "NVML was not initialized",
    2: "NVML rejected a query (invalid argument)",
    3: "the NVIDIA driver does not support this query",
    4: "no permission to query the NVIDIA GPUs (NVML: insufficient permissions)",
    9: "the NVIDIA driver is not loaded",
    12: "the NVIDIA driver's NVML library (libnvidia-ml) is not installed",
    15: "an NVIDIA GPU has fallen off the bus or is inaccessible",
    18: "the NVIDIA driver and its NVML library have different versions (reboot after a driver update?)",
}
NO_BINDINGS = "the NVML Python bindings (nvidia-ml-py) are not installed"
NO_DEVICES = "the NVIDIA driver is loaded but reports no GPU"
MEMINFO_FIELDS = ("MemTotal", "MemAvailable", "SwapTotal")


@dataclass(frozen=True, kw_only=True)
class HardwareSnapshot:
    """The machine at `captured_at` (epoch seconds): host RAM after cgroup limits, and GPUs."""

    captured_at: float
    host_total: int
    host_available: int
    cgroup_limit: int | None
    gpus: tuple[GpuInfo, ...]
    gpu_error: str | None
    source: SnapshotSource
    swap_total: int | None = None
    host_error: str | None = None
    cpu_features: frozenset[str] | None = None
    """llama.cpp's names for the CPU's kernel features (`cpu_features`); None when unknown."""

    def __post_init__(self) -> None:
        if self.source not in tuple(SnapshotSource):
            raise RequestError(f"snapshot source must be one of {', '.join(SnapshotSource)}, not {self.source!r}")
        object.__setattr__(self, "source", SnapshotSource(self.source))
        if self.host_available < 0 or self.host_available > self.host_total:
            raise RequestError("host available RAM must lie between 0 and host total")

    def age(self, now: float) -> int:
        """Whole seconds since the probe at `now` (0 when the clock reads before it)."""
        return max(0, int(now - self.captured_at))


def nvml_error_reason(code: int | None, text: str) -> str:
    return NVML_REASONS.get(code, f"NVML error {code}: {safe_text(text)}") if code is not None else safe_text(text)


def nvml_bandwidth(bus_width_bits: int | None, max_memory_clock_mhz: int | None) -> int | None:
    """Peak bytes per second from NVML's bus width and max memory clock (Rule 3); None when either is missing."""
    if not bus_width_bits or not max_memory_clock_mhz:
        return None
    return bus_width_bits // 8 * max_memory_clock_mhz * 1_000_000 * 2


def gpu_from_nvml(index: int, name: str | bytes, total: int, free: int, used: int,
                  bus_width_bits: int | None = None, max_memory_clock_mhz: int | None = None) -> GpuInfo:
    """NVML's answer for one device; older bindings return the name as bytes."""
    text = name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name)
    total = max(int(total), 0)
    bandwidth = nvml_bandwidth(bus_width_bits, max_memory_clock_mhz)
    return GpuInfo(index=index, name=safe_text(text, 80), total=total, free=min(max(int(free), 0), total),
                   used=max(int(used), 0), vendor=Vendor.NVIDIA,
                   bandwidth=bandwidth, bandwidth_source="NVML: bus width × max memory clock" if bandwidth else None)


def meminfo_figures(text: str) -> tuple[int, int, int] | None:
    """Rule 1: `/proc/meminfo`'s total, available and swap bytes as psutil reports them, or None where psutil would
    not take them as they stand (an estimate, a correction or a field missing)."""
    kib: dict[str, int] = {}
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        number = rest.split()
        if name in MEMINFO_FIELDS and number and number[0].isdigit():
            kib[name] = int(number[0]) * 1024
    if len(kib) < len(MEMINFO_FIELDS):
        return None
    total, available, swap = (kib[name] for name in MEMINFO_FIELDS)
    return (total, available, swap) if 0 < available <= total else None


def gpu_error_text(device_count: int, failures: Iterable[str]) -> str | None:
    failed = list(failures)
    if device_count == 0:
        return NO_DEVICES
    return "; ".join(failed) or None


def snapshot_from_readings(
    captured_at: float,
    host_total: int,
    host_available: int,
    cgroups: Iterable[CgroupReading] = (),
    gpus: Iterable[GpuInfo] = (),
    gpu_error: str | None = None,
    swap_total: int | None = None,
    host_error: str | None = None,
) -> HardwareSnapshot:
    """Apply the cgroup bounds to the psutil figures and assemble the probe's snapshot."""
    limit, headroom = cgroup_bounds(cgroups)
    total = max(host_total, 0) if limit is None else min(max(host_total, 0), limit)
    available = min(max(host_available, 0), total, total if headroom is None else headroom)
    return HardwareSnapshot(captured_at=captured_at, host_total=total, host_available=available, cgroup_limit=limit,
                            gpus=tuple(gpus), gpu_error=gpu_error, source=SnapshotSource.PROBE, swap_total=swap_total,
                            host_error=host_error)


def hypothetical_gpus(gpu_count: int, gpu_total: int, gpu_free: int | None = None) -> tuple[GpuInfo, ...]:
    free = gpu_total if gpu_free is None else gpu_free
    if gpu_count:
        GPU_COUNT.check(gpu_count)
        MEMORY.check(gpu_total)
    if gpu_count < 0 or (gpu_count and gpu_total <= 0):
        raise RequestError("a hypothetical GPU needs a positive total memory")
    if not 0 <= free <= gpu_total:
        raise RequestError("hypothetical GPU free memory must lie between 0 and its total")
    return tuple(GpuInfo(index=i, name=HYPOTHETICAL_GPU_NAME, total=gpu_total, free=free, used=gpu_total - free,
                         reader="hypothetical")
                 for i in range(gpu_count))


def sized_gpus(totals: tuple[int, ...], frees: tuple[int, ...] | None = None) -> tuple[GpuInfo, ...]:
    """GPUs of the sizes given, one a size, in llama.cpp's device order (`--gpu-total 24G,32G`); `frees` one free
    figure for all, or one a GPU (None: all free)."""
    if not 1 <= len(totals) <= GPU_COUNT.high:
        raise RequestError(f"give 1 to {GPU_COUNT.high} GPU sizes")
    free = totals if frees is None else (frees * len(totals) if len(frees) == 1 else frees)
    if len(free) != len(totals):
        raise RequestError(f"{len(frees or ())} free sizes for {len(totals)} GPUs: give one, or one a GPU")
    return tuple(replace(hypothetical_gpus(1, t, f)[0], index=i) for i, (t, f) in enumerate(zip(totals, free, strict=True)))


def hypothetical_machine(
    host_available: int,
    host_total: int | None = None,
    gpu_count: int = 0,
    gpu_total: int = 0,
    gpu_free: int | None = None,
    captured_at: float = 0.0,
) -> HardwareSnapshot:
    """A machine described by a person: `gpu_count` identical GPUs, host total defaulting to available."""
    total = host_available if host_total is None else host_total
    MEMORY.check(host_available)
    MEMORY.check(total)
    return HardwareSnapshot(captured_at=captured_at, host_total=total, host_available=host_available, cgroup_limit=None,
                            gpus=hypothetical_gpus(gpu_count, gpu_total, gpu_free), gpu_error=None,
                            source=SnapshotSource.HYPOTHETICAL)


def what_if(
    snapshot: HardwareSnapshot,
    host_available: int | None = None,
    gpus: tuple[GpuInfo, ...] | None = None,
) -> HardwareSnapshot:
    """The snapshot with some figures replaced by a person's; unchanged when none are given."""
    if host_available is None and gpus is None:
        return snapshot
    out = replace(snapshot, source=SnapshotSource.HYPOTHETICAL)
    if host_available is not None:
        out = replace(out, host_total=max(snapshot.host_total, host_available), host_available=host_available,
                      cgroup_limit=None, host_error=None)
    if gpus is not None:
        out = replace(out, gpus=gpus, gpu_error=None)
    return out


def without_gpus(snapshot: HardwareSnapshot, reason: str) -> HardwareSnapshot:
    """The snapshot with its GPUs left out (Rule 4): its RAM figures keep their source."""
    return replace(snapshot, gpus=(), gpu_error=reason)
