"""All of a machine's GPUs from the readings of one probe — pure, so recorded readings test it.

Rule 1: order and indexes: NVML's NVIDIA GPUs, then the DRM cards (AMD and Intel, and NVIDIA
        cards only while NVML could not list them; `drm.py`), then an Apple Silicon GPU
        (`apple.py`).
Rule 2: NVML's complaint is the snapshot's `gpu_error` only where it matters: when no GPU was
        found at all, when NVML failed on some of its devices, or when sysfs sees an NVIDIA
        card NVML could not read. An AMD or Apple machine without NVIDIA's library is fine.
Rule 3: a GPU whose driver gave no bandwidth takes the spec sheet's (`presets.spec_bandwidth`).
Rule 4: `is_driver_detail` tells why-a-probe-found-none in the drivers' terms (NVML's reasons,
        the bindings, "none found") from a reason a person gave (`--no-gpu`): screens say the
        first as "No GPU found" and keep the detail for `hw`; the second they say as it is.
"""

from __future__ import annotations

from gguf_budget.core.machine.apple import AppleReading, apple_gpu
from gguf_budget.core.machine.drm import DrmCardReading, gpus_from_drm
from gguf_budget.core.machine.gpu import GpuInfo, Vendor
from gguf_budget.core.machine.presets import spec_bandwidth
from gguf_budget.core.machine.snapshot import NO_BINDINGS, NO_DEVICES, NVML_REASONS

NO_GPU = "no GPU found (NVIDIA via NVML, AMD and Intel via DRM sysfs or amdsmi, Apple via sysctl)"
_DRIVER_DETAILS = frozenset({*NVML_REASONS.values(), NO_BINDINGS, NO_DEVICES, NO_GPU})


def is_driver_detail(reason: str | None) -> bool:
    """Rule 4: True for a probe's reason in the drivers' terms (or none at all)."""
    return reason is None or reason in _DRIVER_DETAILS or reason.startswith("NVML error")


def gpus_from_readings(
    nvidia: tuple[GpuInfo, ...],
    nvml_error: str | None,
    cards: tuple[DrmCardReading, ...],
    apple: AppleReading | None,
    host_total: int,
    host_available: int,
) -> tuple[tuple[GpuInfo, ...], str | None]:
    """(GPUs in Rule 1's order, the error worth showing) from NVML's, sysfs's and sysctl's readings."""
    first = max((g.index for g in nvidia), default=-1) + 1  # NVML keeps its own indexes, gaps included
    drm = gpus_from_drm(cards, first, host_total, host_available, bool(nvidia), nvml_error)
    mac = apple_gpu(apple, first + len(drm)) if apple is not None else None
    gpus = tuple(spec_bandwidth(g) for g in (*nvidia, *drm, *((mac,) if mac else ())))
    unread_nvidia = any(g.vendor == Vendor.NVIDIA for g in drm)
    if not gpus:
        return gpus, nvml_error or NO_GPU
    return gpus, nvml_error if (nvidia or unread_nvidia) else None
