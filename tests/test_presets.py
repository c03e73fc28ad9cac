"""The preset table: the issue's GPUs and machines, each cited, and what a preset machine looks like."""

from __future__ import annotations

import pytest

from gguf_budget.core.errors import RequestError
from gguf_budget.core.machine.gpu import GpuInfo, GpuMemory, Vendor
from gguf_budget.core.machine.presets import (
    PRESETS, find_preset, parse_presets, preset_gpus, preset_machine, spec_bandwidth,
)

GiB = 1024**3
GB_S = 10**9


@pytest.mark.parametrize(
    ("name", "memory", "bandwidth"),
    [
        ("RTX 3060", 12, 360), ("RTX 4060 Ti 16GB", 16, 288), ("RTX 4090", 24, 1008), ("RTX 5090", 32, 1792),
        ("A100 80GB", 80, 2039), ("H100 80GB", 80, 3350), ("RX 7900 XTX", 24, 960), ("Arc A770 16GB", 16, 560),
        ("M2 Pro 32GB", 32, 200), ("M2 Max 96GB", 96, 400), ("M2 Ultra 192GB", 192, 800), ("M3 Max 128GB", 128, 400),
        ("M3 Ultra 512GB", 512, 819), ("M4 Pro 64GB", 64, 273), ("M4 Max 128GB", 128, 546),
        ("Ryzen AI Max+ 395 128GB", 128, 256),
    ],
)
def test_the_table_holds_the_common_gpus_and_machines(name, memory, bandwidth):
    p = find_preset(name)
    assert (p.memory, p.bandwidth) == (memory * GiB, bandwidth * GB_S)
    assert p.source.startswith("https://")


def test_names_are_found_whatever_their_case_and_spacing():
    assert find_preset("  rtx   4090 ").name == "RTX 4090"
    with pytest.raises(RequestError, match="choose one of: RTX 2070, RTX 3060"):
        find_preset("GTX 1080")
    assert len({p.name.lower() for p in PRESETS}) == len(PRESETS)


def test_gpu_presets_are_whole_free_cards():
    a, b = preset_gpus(parse_presets("RTX 3090, RTX 3060"))
    assert (a.index, a.total, a.free, a.vendor, a.memory, a.bandwidth) == (0, 24 * GiB, 24 * GiB, Vendor.NVIDIA,
                                                                           GpuMemory.VRAM, 936 * GB_S)
    assert (b.index, b.total) == (1, 12 * GiB) and b.reader == "preset"


def test_machine_presets_follow_their_machines_rules():
    mac = preset_machine(find_preset("M2 Ultra 192GB"))
    assert (mac.host_total, mac.gpus[0].total, mac.gpus[0].memory) == (192 * GiB, 144 * GiB, GpuMemory.UNIFIED)
    small = preset_machine(find_preset("M2 Pro 32GB"))
    assert small.gpus[0].total == 32 * GiB * 2 // 3  # ⅔ at 36 GiB or less
    ryzen = preset_machine(find_preset("Ryzen AI Max+ 395 128GB"))  # 96 GB carve-out: VRAM, not host RAM
    assert (ryzen.host_total, ryzen.gpus[0].total, ryzen.gpus[0].memory, ryzen.gpus[0].integrated) == (
        32 * GiB, 96 * GiB, GpuMemory.VRAM, True)
    with pytest.raises(RequestError, match="is a GPU, not a machine"):
        preset_machine(find_preset("RTX 4090"))
    with pytest.raises(RequestError, match="name it alone"):
        parse_presets("M4 Max 128GB,RTX 4090")
    with pytest.raises(RequestError, match="name a preset"):
        parse_presets(" , ")


def test_detected_gpus_take_the_spec_sheet_bandwidth_by_the_name_their_driver_reports():
    found = spec_bandwidth(GpuInfo(index=0, name="NVIDIA GeForce RTX 3060", total=12 * GiB, free=12 * GiB, used=0,
                                   vendor=Vendor.NVIDIA))
    assert found.bandwidth == 360 * GB_S and found.bandwidth_source.startswith("spec sheet: https://www.nvidia.com")
    measured = GpuInfo(index=0, name="NVIDIA GeForce RTX 3060", total=12 * GiB, free=12 * GiB, used=0,
                       vendor=Vendor.NVIDIA, bandwidth=1)
    assert spec_bandwidth(measured) is measured  # the driver's figure wins
    unknown = GpuInfo(index=0, name="AMD GPU [1002:744c]", total=24 * GiB, free=24 * GiB, used=0, vendor=Vendor.AMD)
    assert spec_bandwidth(unknown).bandwidth is None
