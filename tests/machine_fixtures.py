"""Recorded GPU readings: DRM sysfs trees of Linux machines and `sysctl` outputs of Apple Silicon Macs.

Each tree maps paths under /sys/class/drm to the text the kernel gave (drivers are symlink
targets); `write_tree` puts one into a folder the probe reads exactly as it reads the real one.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

GiB = 1024**3
MiB = 1024**2

# Tree: {"files": {relative path: text}, "drivers": {card: driver module}}
AMD_DGPU = {  # Radeon RX 7900 XTX (Navi 31) on a 64 GiB desktop; card0 is the BMC-less board's only card
    "files": {
        "card0/device/vendor": "0x1002\n",
        "card0/device/device": "0x744c\n",
        "card0/device/mem_info_vram_total": "25753026560\n",
        "card0/device/mem_info_vram_used": "1147006976\n",
        "card0/device/mem_info_gtt_total": "33518764032\n",
        "card0/device/mem_info_gtt_used": "22134784\n",
        "card0/device/mem_info_vram_vendor": "samsung\n",
        "card0-DP-1/status": "connected\n",
        "renderD128/dev": "226:128\n",
    },
    "drivers": {"card0": "amdgpu"},
}

AMD_APU = {  # Ryzen 7 7840U (Phoenix, Radeon 780M): a 512 MiB BIOS carve-out, 15 GiB of GTT on 30 GiB of RAM
    "files": {
        "card1/device/vendor": "0x1002\n",
        "card1/device/device": "0x15bf\n",
        "card1/device/mem_info_vram_total": "536870912\n",
        "card1/device/mem_info_vram_used": "105062400\n",
        "card1/device/mem_info_gtt_total": "16106127360\n",
        "card1/device/mem_info_gtt_used": "48476160\n",
        "card1-eDP-1/status": "connected\n",
    },
    "drivers": {"card1": "amdgpu"},
}

INTEL_IGPU = {  # Core i7-1360P (Raptor Lake-P, Iris Xe, i915): no memory files at all
    "files": {
        "card0/device/vendor": "0x8086\n",
        "card0/device/device": "0xa7a0\n",
        "card0-eDP-1/status": "connected\n",
    },
    "drivers": {"card0": "i915"},
}

INTEL_ARC_XE = {  # Arc A770 16GB on the xe driver: VRAM size per tile, no usage
    "files": {
        "card0/device/vendor": "0x8086\n",
        "card0/device/device": "0x56a0\n",
        "card0/device/tile0/physical_vram_size_bytes": "17179869184\n",
    },
    "drivers": {"card0": "xe"},
}

MIXED_NVIDIA_AMD = {  # an RTX 4090 (card0, NVML's) beside a Radeon RX 6800 XT (card1); an ASPEED BMC display (card2)
    "files": {
        "card0/device/vendor": "0x10de\n",
        "card0/device/device": "0x2684\n",
        "card1/device/vendor": "0x1002\n",
        "card1/device/device": "0x73bf\n",
        "card1/device/product_name": "AMD Radeon RX 6800 XT\n",
        "card1/device/mem_info_vram_total": "17163091968\n",
        "card1/device/mem_info_vram_used": "463814656\n",
        "card1/device/mem_info_gtt_total": "33518764032\n",
        "card1/device/mem_info_gtt_used": "14680064\n",
        "card1/device/mem_info_vram_vendor": "hynix\n",
        "card2/device/vendor": "0x1a03\n",
        "card2/device/device": "0x2000\n",
    },
    "drivers": {"card0": "nvidia", "card1": "amdgpu", "card2": "ast"},
}

# NVML's answers for the RTX 4090 of the mixed machine: name, total, free, used; bus width, max memory clock
RTX_4090_NVML = ("NVIDIA GeForce RTX 4090", 25757220864, 24953847808, 803373056, 384, 10501)

# `sysctl hw.memsize machdep.cpu.brand_string hw.optional.arm64 iogpu.wired_limit_mb` as macOS prints it
M2_16 = "hw.memsize: 17179869184\nmachdep.cpu.brand_string: Apple M2\nhw.optional.arm64: 1\niogpu.wired_limit_mb: 0\n"
M2_16_WIRED = M2_16.replace("wired_limit_mb: 0", "wired_limit_mb: 12288")
M1_MAX_64 = ("hw.memsize: 68719476736\nmachdep.cpu.brand_string: Apple M1 Max\nhw.optional.arm64: 1\n"
             "iogpu.wired_limit_mb: 0\n")
M1_MAX_64_WIRED = M1_MAX_64.replace("wired_limit_mb: 0", "wired_limit_mb: 57344")
M2_ULTRA_192 = ("hw.memsize: 206158430208\nmachdep.cpu.brand_string: Apple M2 Ultra\nhw.optional.arm64: 1\n"
                "iogpu.wired_limit_mb: 0\n")
M2_ULTRA_192_WIRED = M2_ULTRA_192.replace("wired_limit_mb: 0", "wired_limit_mb: 188416")
M3_MAX_64_SONOMA_LESS = "hw.memsize: 68719476736\nmachdep.cpu.brand_string: Apple M3 Max\nhw.optional.arm64: 1\n"
INTEL_MAC = "hw.memsize: 34359738368\nmachdep.cpu.brand_string: Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz\n"


def write_tree(root: Path, tree: dict) -> Path:
    """Write a recorded DRM tree under `root` as sysfs lays it out (drivers as symlinks)."""
    for rel, text in tree["files"].items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    for card, driver in tree["drivers"].items():
        module = root / "_drivers" / driver
        module.mkdir(parents=True, exist_ok=True)
        os.symlink(module, root / card / "device" / "driver")
    return root


class FakeNVMLError(Exception):
    """pynvml's NVMLError carries the nvml.h code in `.value`."""

    def __init__(self, value: int):
        self.value = value
        super().__init__(f"NVML error code {value}")


def fake_nvml(devices=(), init_error=None, failing=()):
    """A pynvml-like module answering with recorded readings; `calls` records init/shutdown.

    A device is (name, total, free, used) or (name, total, free, used, bus width bits, max memory clock MHz);
    without the last two the bandwidth queries fail, as on old drivers."""
    calls: list[str] = []

    def init():
        calls.append("init")
        if init_error is not None:
            raise FakeNVMLError(init_error)

    def handle(index):
        if index in failing:
            raise FakeNVMLError(15)
        return index

    def bus(h, position):
        if len(devices[h]) < 6:
            raise FakeNVMLError(3)
        return devices[h][position]

    return SimpleNamespace(
        NVMLError=FakeNVMLError,
        calls=calls,
        nvmlInit=init,
        nvmlShutdown=lambda: calls.append("shutdown"),
        nvmlDeviceGetCount=lambda: len(devices),
        nvmlDeviceGetHandleByIndex=handle,
        nvmlDeviceGetName=lambda h: devices[h][0],
        nvmlDeviceGetMemoryInfo=lambda h: SimpleNamespace(total=devices[h][1], free=devices[h][2], used=devices[h][3]),
        nvmlDeviceGetMemoryBusWidth=lambda h: bus(h, 4),
        nvmlDeviceGetMaxClockInfo=lambda h, clock: bus(h, 5),
    )
