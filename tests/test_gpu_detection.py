"""GPUs beyond NVIDIA: recorded DRM sysfs trees and `sysctl` outputs, each giving its expected snapshot —
through the real probe (trees written to a folder, sysctl text handed in) and through the pure parser
over the same readings: one code path for real and recorded."""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest
from machine_fixtures import (
    AMD_APU, AMD_DGPU, INTEL_ARC_XE, INTEL_IGPU, INTEL_MAC, M1_MAX_64, M1_MAX_64_WIRED, M2_16, M2_16_WIRED,
    M2_ULTRA_192, M2_ULTRA_192_WIRED, M3_MAX_64_SONOMA_LESS, MIXED_NVIDIA_AMD, RTX_4090_NVML, fake_nvml, write_tree,
)

from gguf_budget.core.machine.apple import apple_gpu, apple_reading, metal_working_set
from gguf_budget.core.machine.drm import DrmCardReading, anv_heap
from gguf_budget.core.machine.presets import spec_bandwidth
from gguf_budget.core.machine.gpu import GpuInfo, GpuMemory, Vendor
from gguf_budget.core.machine.gpus import NO_GPU, gpus_from_readings
from gguf_budget.core.machine.probe import probe_hardware
from gguf_budget.core.machine.snapshot import NVML_REASONS

GiB = 1024**3
GB_S = 10**9


@pytest.fixture
def probe(tmp_path, monkeypatch):
    """Probe with a recorded DRM tree (or none), recorded NVML answers and sysctl text; amdsmi absent."""
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    monkeypatch.setitem(sys.modules, "pynvml", None)

    def run(tree=None, nvml=None, sysctl=None):
        root = write_tree(tmp_path / "drm", tree) if tree else tmp_path / "no-drm"
        return probe_hardware(nvml, drm_root=root, platform="darwin" if sysctl else "linux", sysctl=lambda: sysctl,
                              cgroup_root=tmp_path / "cg", proc_self_cgroup=tmp_path / "none")

    return run


def readings(tree: dict) -> tuple[DrmCardReading, ...]:
    """The same recorded tree as the pure parser takes it, without touching a file system."""
    cards: dict[str, dict[str, str]] = {}
    for rel, text in tree["files"].items():
        card, _, name = rel.partition("/")
        cards.setdefault(card, {})[name] = text
    return tuple(DrmCardReading(card, files, tree["drivers"].get(card)) for card, files in cards.items())


def amd_dgpu(_total, _available):
    return (GpuInfo(index=0, name="AMD GPU [1002:744c]", total=25753026560, free=25753026560 - 1147006976,
                    used=1147006976, vendor=Vendor.AMD, memory=GpuMemory.VRAM, integrated=False, reader="sysfs"),)


def amd_apu(_total, _available):
    # no VRAM vendor and a 512 MiB carve-out below 15 GiB of GTT: an APU, budgeted by its GTT
    return (GpuInfo(index=0, name="AMD GPU [1002:15bf]", total=16106127360, free=16106127360 - 48476160, used=48476160,
                    vendor=Vendor.AMD, memory=GpuMemory.GTT, integrated=True, reader="sysfs"),)


def intel_igpu(total, available):
    heap = total * 3 // 4 if total > 4 * GiB else total // 2
    return (GpuInfo(index=0, name="Intel GPU [8086:a7a0]", total=heap, free=min(heap, available), used=None,
                    vendor=Vendor.INTEL, memory=GpuMemory.GTT, integrated=True,
                    reason="i915 publishes no GTT usage: free is the heap, bounded by the host's available RAM",
                    reader="sysfs"),)


def intel_arc(_total, _available):
    return (GpuInfo(index=0, name="Intel GPU [8086:56a0]", total=16 * GiB, free=None, used=None, vendor=Vendor.INTEL,
                    reason="xe publishes no VRAM usage: free memory unknown", reader="sysfs"),)


RX_6800_XT = spec_bandwidth(GpuInfo(index=1, name="AMD Radeon RX 6800 XT", total=17163091968,
                                   free=17163091968 - 463814656, used=463814656, vendor=Vendor.AMD, reader="sysfs"))
"""The driver publishes no bandwidth for it; the preset table's spec sheet does (512 GB/s)."""


def mixed(_total, _available):
    name, total, free, used, _, _ = RTX_4090_NVML
    # NVML's bandwidth: 384-bit bus / 8 × 10,501 MHz × 2 = 1,008.096 GB/s
    rtx = GpuInfo(index=0, name=name, total=total, free=free, used=used, vendor=Vendor.NVIDIA, bandwidth=1_008_096_000_000,
                  bandwidth_source="NVML: bus width × max memory clock")
    return (rtx, RX_6800_XT)


def mixed_without_nvml(_total, _available):
    lost = GpuInfo(index=0, name="NVIDIA GPU [10de:2684]", total=None, free=None, used=None, vendor=Vendor.NVIDIA,
                   reason=f"memory unknown: {NVML_REASONS[9]}", reader="sysfs")
    return (lost, RX_6800_XT)


@pytest.mark.parametrize(
    ("tree", "nvml", "expected", "error"),
    [
        (AMD_DGPU, None, amd_dgpu, None),
        (AMD_APU, None, amd_apu, None),
        (INTEL_IGPU, None, intel_igpu, None),
        (INTEL_ARC_XE, None, intel_arc, None),
        (MIXED_NVIDIA_AMD, fake_nvml([RTX_4090_NVML]), mixed, None),
        (MIXED_NVIDIA_AMD, fake_nvml(init_error=9), mixed_without_nvml, NVML_REASONS[9]),
    ],
    ids=["amd-dgpu", "amd-apu", "intel-igpu", "intel-arc-xe", "nvidia+amd", "nvidia+amd-without-nvml"],
)
def test_recorded_sysfs_trees_give_their_snapshots(probe, tree, nvml, expected, error):
    s = probe(tree, nvml)
    assert (s.gpus, s.gpu_error) == (expected(s.host_total, s.host_available), error)
    nvidia = tuple(g for g in s.gpus if g.reader == "nvml")
    pure = gpus_from_readings(nvidia, error, readings(tree), None, s.host_total, s.host_available)
    assert pure == (s.gpus, s.gpu_error)  # the parser alone, over the same readings: the same snapshot


def test_an_amd_or_intel_machine_without_nvidias_library_has_no_gpu_error(probe):
    s = probe(AMD_DGPU)
    assert s.gpus and s.gpu_error is None


def test_the_intel_heap_is_half_of_small_machines_and_three_quarters_of_large_ones():
    assert (anv_heap(4 * GiB), anv_heap(16 * GiB)) == (2 * GiB, 12 * GiB)


def mac(name, total, bandwidth):
    return GpuInfo(index=0, name=f"{name} GPU", total=total, free=None, used=None, vendor=Vendor.APPLE,
                   memory=GpuMemory.UNIFIED, integrated=True, bandwidth=bandwidth,
                   bandwidth_source=f"spec sheet: {name}" if bandwidth else None, reader="sysctl")


@pytest.mark.parametrize(
    ("text", "expected", "how"),
    [
        # ⅔ of RAM up to 36 GiB, ¾ above; iogpu.wired_limit_mb (MiB) replaces it when set
        (M2_16, mac("Apple M2", 17179869184 * 2 // 3, 100 * GB_S), "macOS default, ⅔ of RAM"),
        (M2_16_WIRED, mac("Apple M2", 12 * GiB, 100 * GB_S), "iogpu.wired_limit_mb = 12288"),
        (M1_MAX_64, mac("Apple M1 Max", 48 * GiB, 400 * GB_S), "macOS default, ¾ of RAM"),
        (M1_MAX_64_WIRED, mac("Apple M1 Max", 56 * GiB, 400 * GB_S), "iogpu.wired_limit_mb = 57344"),
        (M2_ULTRA_192, mac("Apple M2 Ultra", 144 * GiB, 800 * GB_S), "macOS default, ¾ of RAM"),
        (M2_ULTRA_192_WIRED, mac("Apple M2 Ultra", 184 * GiB, 800 * GB_S), "iogpu.wired_limit_mb = 188416"),
        # macOS before Sonoma has no iogpu.wired_limit_mb; an M3 Max ships with a 300 or a 400 GB/s bus
        (M3_MAX_64_SONOMA_LESS, mac("Apple M3 Max", 48 * GiB, None), "macOS default, ¾ of RAM"),
    ],
    ids=["m2-16", "m2-16-wired", "m1max-64", "m1max-64-wired", "m2ultra-192", "m2ultra-192-wired", "m3max-no-key"],
)
def test_recorded_sysctl_outputs_give_their_snapshots(probe, text, expected, how):
    s = probe(sysctl=text)
    assert len(s.gpus) == 1 and s.gpu_error is None
    gpu = s.gpus[0]
    assert replace(gpu, reason=None) == expected
    assert gpu.reason.startswith(f"Metal working-set limit ({how})") and gpu.shares_host_memory
    assert gpus_from_readings((), None, (), apple_reading(text), s.host_total, s.host_available) == (s.gpus, None)


def test_an_intel_mac_has_no_unified_gpu(probe):
    s = probe(sysctl=INTEL_MAC)
    assert s.gpus == () and s.gpu_error.startswith("the NVML Python bindings")
    assert apple_gpu(apple_reading(INTEL_MAC), 0) is None


def test_no_gpu_anywhere_says_where_it_looked():
    assert gpus_from_readings((), None, (), None, 8 * GiB, 4 * GiB) == ((), NO_GPU)


def test_the_wired_limit_never_exceeds_ram():
    assert metal_working_set(16 * GiB, 10**9) == 16 * GiB


class FakeAmdSmi:
    """An amdsmi-like module answering for one Radeon RX 7900 XTX (recorded amd-smi figures)."""

    class AmdSmiMemoryType:
        VRAM, VIS_VRAM, GTT = 0, 1, 2

    def __init__(self, fail_init: bool = False):
        self.fail_init, self.calls = fail_init, []

    def amdsmi_init(self):
        self.calls.append("init")
        if self.fail_init:
            raise RuntimeError("AMDSMI_STATUS_DRIVER_NOT_LOADED")

    def amdsmi_shut_down(self):
        self.calls.append("shut_down")

    def amdsmi_get_processor_handles(self):
        return ["gpu-0"]

    def amdsmi_get_gpu_asic_info(self, handle):
        return {"market_name": "AMD Radeon RX 7900 XTX", "vendor_id": 0x1002, "device_id": "0x744c"}

    def amdsmi_get_gpu_vram_info(self, handle):
        return {"vram_type": "GDDR6", "vram_vendor": "SAMSUNG", "vram_size": 24560, "vram_bit_width": 384,
                "vram_max_bandwidth": 960}

    def amdsmi_get_gpu_memory_total(self, handle, kind):
        return {0: 25753026560, 2: 33518764032}[kind]

    def amdsmi_get_gpu_memory_usage(self, handle, kind):
        return {0: 1147006976, 2: 22134784}[kind]


def test_amdsmi_answers_for_amd_cards_when_importable(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    smi = FakeAmdSmi()
    s = probe_hardware(amdsmi=smi, drm_root=write_tree(tmp_path / "drm", AMD_DGPU), platform="linux",
                       cgroup_root=tmp_path / "cg", proc_self_cgroup=tmp_path / "none")
    assert s.gpus == (GpuInfo(index=0, name="AMD Radeon RX 7900 XTX", total=25753026560, free=25753026560 - 1147006976,
                              used=1147006976, vendor=Vendor.AMD, bandwidth=960 * GB_S,
                              bandwidth_source="amdsmi: vram_max_bandwidth", reader="amdsmi"),)
    assert smi.calls == ["init", "shut_down"]


def test_a_failing_amdsmi_falls_back_to_sysfs(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    s = probe_hardware(amdsmi=FakeAmdSmi(fail_init=True), drm_root=write_tree(tmp_path / "drm", AMD_DGPU),
                       platform="linux", cgroup_root=tmp_path / "cg", proc_self_cgroup=tmp_path / "none")
    assert s.gpus == amd_dgpu(0, 0)
