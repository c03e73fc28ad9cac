"""The probe's readers for GPUs beyond NVML: DRM sysfs, amdsmi and macOS sysctl (impure).

Rule 1: readers only collect raw readings — file texts, library answers, command output —
        into the records the pure `drm.py` and `apple.py` parse; recorded readings take the
        same path, so what a test feeds is what a machine gives.
Rule 2: nothing raises: an unreadable file is a missing file, a failing library or command
        is no reading (amdsmi's failure falls back to sysfs).
Rule 3: `amdsmi` (AMD's ROCm SMI library) is used when importable, for AMD cards only; its
        answers fill the sysfs file names (`amdsmi_get_gpu_memory_total/usage` for VRAM and
        GTT, `amdsmi_get_gpu_asic_info` for ids and the market name,
        `amdsmi_get_gpu_vram_info` for the VRAM vendor and `vram_max_bandwidth` in GB/s).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any, Callable

from gguf_budget.core.errors import UnreadableFile
from gguf_budget.core.regular_file import FileKind, read_text

from gguf_budget.core.machine.apple import SYSCTL_NAMES, AppleReading, apple_reading
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.machine.drm import (
    DRM_FILES, GTT_TOTAL, GTT_USED, VRAM_TOTAL, VRAM_USED, VRAM_VENDOR, DrmCardReading, card_number,
)

DRM_ROOT = "/sys/class/drm"
AMD_VENDOR = 0x1002
SYSCTL_TIMEOUT_S = 5.0


def _text(path: Path) -> str | None:
    try:
        return read_text(path, FileKind.SYSTEM)[:4096]
    except UnreadableFile:
        return None


def read_drm(root: Path) -> tuple[DrmCardReading, ...]:
    """Every `card<N>` folder under `root`: the DRM_FILES it has, and its driver's name."""
    try:
        names = sorted(entry.name for entry in root.iterdir() if card_number(entry.name) is not None)
    except OSError:
        return ()
    readings = []
    for name in names:
        files = {rel: text for rel in DRM_FILES if (text := _text(root / name / rel)) is not None}
        try:
            driver: str | None = safe_text(os.path.basename(os.readlink(root / name / "device" / "driver")), 40)
        except OSError:
            driver = None
        readings.append(DrmCardReading(name, files, driver))
    return tuple(readings)


def _hex(value: Any) -> str:
    return f"0x{value:04x}" if isinstance(value, int) else str(value)


def _amdsmi_card(amdsmi: Any, handle: Any, n: int) -> DrmCardReading:
    kinds = amdsmi.AmdSmiMemoryType
    asic = amdsmi.amdsmi_get_gpu_asic_info(handle)
    vram = amdsmi.amdsmi_get_gpu_vram_info(handle)
    files = {
        "device/vendor": _hex(asic.get("vendor_id")), "device/device": _hex(asic.get("device_id")),
        "device/product_name": str(asic.get("market_name") or ""),
        VRAM_TOTAL: str(amdsmi.amdsmi_get_gpu_memory_total(handle, kinds.VRAM)),
        VRAM_USED: str(amdsmi.amdsmi_get_gpu_memory_usage(handle, kinds.VRAM)),
        GTT_TOTAL: str(amdsmi.amdsmi_get_gpu_memory_total(handle, kinds.GTT)),
        GTT_USED: str(amdsmi.amdsmi_get_gpu_memory_usage(handle, kinds.GTT)),
    }
    vendor = str(vram.get("vram_vendor") or "").strip()
    if vendor and vendor.upper() != "UNKNOWN":
        files[VRAM_VENDOR] = vendor
    gb_s = vram.get("vram_max_bandwidth")
    bandwidth = int(gb_s) * 10**9 if isinstance(gb_s, int) and gb_s > 0 else None
    return DrmCardReading(f"amdsmi{n}", files, "amdgpu", "amdsmi", bandwidth)


def _import_amdsmi() -> Any:
    try:
        import amdsmi
    except Exception:  # noqa: BLE001 — a missing or broken ROCm install means: use sysfs
        return None
    return amdsmi


def read_amdsmi(module: Any) -> tuple[DrmCardReading, ...] | None:
    """amdsmi's AMD GPUs as card readings; None when amdsmi is missing or fails (Rule 2)."""
    amdsmi = module if module is not None else _import_amdsmi()
    if amdsmi is None:
        return None
    try:
        amdsmi.amdsmi_init()
    except Exception:  # noqa: BLE001 — no driver, no permission: use sysfs
        return None
    try:
        return tuple(_amdsmi_card(amdsmi, h, n) for n, h in enumerate(amdsmi.amdsmi_get_processor_handles()))
    except Exception:  # noqa: BLE001 — an odd answer must not take the probe down; sysfs still answers
        return None
    finally:
        try:
            amdsmi.amdsmi_shut_down()
        except Exception:  # noqa: BLE001 — shutting down is best effort; the readings are taken
            pass


def read_cards(drm_root: Path, amdsmi: Any) -> tuple[DrmCardReading, ...]:
    """sysfs cards, with amdsmi's readings standing in for the AMD ones when it answers (Rule 3)."""
    cards = read_drm(drm_root)
    smi = read_amdsmi(amdsmi)
    if not smi:
        return cards
    return (*(c for c in cards if c.number("device/vendor", 16) != AMD_VENDOR), *smi)


def run_sysctl() -> str | None:
    """`sysctl NAME…` on this Mac; names it does not know are left out of its output."""
    try:
        done = subprocess.run(["sysctl", *SYSCTL_NAMES], capture_output=True, text=True, timeout=SYSCTL_TIMEOUT_S,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout


def read_apple(sysctl: Callable[[], str | None]) -> AppleReading | None:
    text = sysctl()
    return apple_reading(text) if text else None
