"""Apple Silicon from `sysctl` — pure parsing of recorded output, and the Metal working-set model.

The probe runs `sysctl hw.memsize machdep.cpu.brand_string hw.optional.arm64
iogpu.wired_limit_mb` on macOS and hands its text here; recorded outputs are test fixtures.

Rule 1: `sysctl` prints `name: value` lines; an unknown name (older macOS has no
        `iogpu.wired_limit_mb`) is simply absent. Only arm64 Macs (`hw.optional.arm64: 1`)
        have unified memory; an Intel Mac's GPU is not probed here.
Rule 2: llama.cpp's Metal backend reports `recommendedMaxWorkingSetSize` as the GPU's memory
        (ggml-metal-device.m `ggml_metal_device_get_memory`). macOS sizes it as ⅔ of RAM on
        machines of 36 GiB or less and ¾ above (measured: 10.67 GiB of 16 GiB on an M4;
        documented by the community, e.g. https://stencel.io/posts/apple-silicon-limitations-with-usage-on-local-llm%20.html
        and https://www.thinkdifferent.blog/blog/the-macbook-pro-setting-that-doubles-your-ai-performance/).
        `iogpu.wired_limit_mb`, when set above 0, replaces it (0 means macOS's default); Metal's
        recommendation follows the override (github.com/AlexsJones/llmfit pull 754), capped at RAM.
Rule 3: host RAM and the GPU share that one pool: the GPU is `GpuMemory.UNIFIED`, and a fit
        counts each byte once (host need + GPU need ≤ the host's usable RAM). Metal's current
        allocation is not readable without Metal, so free memory is unknown and the budget is
        the working-set limit, bounded in the fit by the one pool.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from gguf_budget.core.machine.gpu import GpuInfo, GpuMemory, Vendor
from gguf_budget.core.safe_text import safe_text

GiB = 1024**3
MiB = 1024**2
SMALL_MAC = 36 * GiB
SYSCTL_NAMES = ("hw.memsize", "machdep.cpu.brand_string", "hw.optional.arm64", "iogpu.wired_limit_mb")


@dataclass(frozen=True)
class AppleReading:
    """What `sysctl` said: RAM bytes, the chip's name, Apple Silicon or not, and the wired limit (MiB, 0 = default)."""

    memsize: int | None
    chip: str | None
    arm64: bool
    wired_limit_mb: int | None


def parse_sysctl(text: str) -> Mapping[str, str]:
    """`name: value` lines (as `sysctl NAME…` prints them) → {name: value}."""
    out = {}
    for line in text.splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip() in SYSCTL_NAMES:
            out[name.strip()] = value.strip()
    return out


def _int(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() else None


def apple_reading(text: str) -> AppleReading:
    values = parse_sysctl(text)
    chip = values.get("machdep.cpu.brand_string")
    return AppleReading(_int(values.get("hw.memsize")), safe_text(chip, 80) if chip else None,
                        values.get("hw.optional.arm64") == "1", _int(values.get("iogpu.wired_limit_mb")))


def metal_working_set(memsize: int, wired_limit_mb: int | None) -> int:
    """Metal's recommendedMaxWorkingSetSize as modelled by Rule 2."""
    if wired_limit_mb:
        return min(wired_limit_mb * MiB, memsize)
    return memsize * 2 // 3 if memsize <= SMALL_MAC else memsize * 3 // 4


def apple_gpu(reading: AppleReading, index: int) -> GpuInfo | None:
    """The one GPU of an Apple Silicon Mac; None on an Intel Mac or when RAM could not be read."""
    if not reading.arm64 or not reading.memsize:
        return None
    limit = metal_working_set(reading.memsize, reading.wired_limit_mb)
    how = (f"iogpu.wired_limit_mb = {reading.wired_limit_mb}" if reading.wired_limit_mb
           else f"macOS default, {'⅔' if reading.memsize <= SMALL_MAC else '¾'} of RAM")
    return GpuInfo(index=index, name=f"{reading.chip or 'Apple Silicon'} GPU", total=limit, free=None, used=None,
                   vendor=Vendor.APPLE, memory=GpuMemory.UNIFIED, integrated=True,
                   reason=f"Metal working-set limit ({how}); Metal's current allocation is not readable, "
                          "so free memory is unknown", reader="sysctl")
