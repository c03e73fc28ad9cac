"""Pure parsing of recorded readings: cgroup files, /proc/self/cgroup, NVML answers, snapshots."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gguf_budget.core.errors import RequestError
from gguf_budget.core.machine.gpu import Vendor
from gguf_budget.core.machine.snapshot import (
    NO_DEVICES,
    CgroupReading,
    GpuInfo,
    HardwareSnapshot,
    cgroup_ancestors,
    cgroup_bounds,
    gpu_error_text,
    gpu_from_nvml,
    hypothetical_machine,
    nvml_bandwidth,
    nvml_error_reason,
    parse_cgroup,
    parse_proc_self_cgroup,
    snapshot_from_readings,
    what_if,
)

GiB = 1024**3

# memory.stat excerpts as the kernel writes them (v2, then v1 with its hierarchical totals).
V2_STAT = "anon 800000000\nfile 273741824\nactive_file 73741824\ninactive_file 200000000\n"
V1_STAT = "cache 150000000\ninactive_file 5\ntotal_cache 150000000\ntotal_inactive_file 100000000\n"


@pytest.mark.parametrize(
    ("limit", "usage", "stat", "expected"),
    [
        ("4294967296\n", "1073741824\n", V2_STAT, CgroupReading(4294967296, 1073741824, 200000000)),
        ("max\n", "1073741824\n", V2_STAT, CgroupReading(None, 1073741824, 200000000)),
        ("2147483648\n", "1500000000\n", V1_STAT, CgroupReading(2147483648, 1500000000, 100000000)),
        ("9223372036854771712\n", "1407979520\n", None, CgroupReading(None, 1407979520, 0)),  # v1, 4 KiB pages
        ("9223372036854710272\n", "1\n", "", CgroupReading(None, 1, 0)),  # v1, 64 KiB pages
        ("garbage", None, None, CgroupReading(None, None, 0)),
    ],
)
def test_parse_cgroup_reads_v2_and_v1_files(limit, usage, stat, expected):
    assert parse_cgroup(limit, usage, stat) == expected


@pytest.mark.parametrize(
    ("reading", "headroom"),
    [
        (CgroupReading(4294967296, 1073741824, 200000000), 4294967296 - (1073741824 - 200000000)),
        (CgroupReading(2147483648, 1500000000, 100000000), 747483648),
        (CgroupReading(1000, 5000, 0), 0),
        (CgroupReading(1000, 100, 500), 1000),
        (CgroupReading(None, 100, 0), None),
    ],
)
def test_headroom_is_limit_minus_working_set(reading, headroom):
    assert reading.headroom == headroom


def test_the_tightest_level_bounds_the_process():
    leaf = CgroupReading(8 * GiB, 1 * GiB)
    parent = CgroupReading(6 * GiB, 5 * GiB)
    root = CgroupReading(None, 20 * GiB)
    assert cgroup_bounds([leaf, parent, root]) == (6 * GiB, 1 * GiB)
    assert cgroup_bounds([root]) == (None, None)
    assert cgroup_bounds([]) == (None, None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # recorded on the build machine: hybrid v1 + v2, memory controller on v1
        ("9:name=systemd:/\n8:pids:/\n4:memory:/process_api/024b16c1\n3:cpuset:/\n0::/\n",
         ("/", "/process_api/024b16c1")),
        ("0::/user.slice/user-1000.slice/session-2.scope\n", ("/user.slice/user-1000.slice/session-2.scope", None)),
        ("12:cpu,cpuacct:/docker/abc\n5:memory:/docker/abc\n", (None, "/docker/abc")),
        ("11:hugetlb,memory:/kubepods/pod1\n", (None, "/kubepods/pod1")),
        ("", (None, None)),
    ],
)
def test_proc_self_cgroup_names_the_v2_and_v1_memory_paths(text, expected):
    assert parse_proc_self_cgroup(text) == expected


def test_cgroup_ancestors_walk_from_leaf_to_root_and_never_climb_out():
    assert cgroup_ancestors("/a/b") == ("a/b", "a", "")
    assert cgroup_ancestors("/") == ("",)
    assert cgroup_ancestors("/../../etc") == ("etc", "")


def test_a_cgroup_limit_smaller_than_the_host_bounds_total_and_available():
    limit = CgroupReading(4 * GiB, 1 * GiB, 0)
    s = snapshot_from_readings(1700000000.0, 16 * GiB, 12 * GiB, [limit])
    assert (s.host_total, s.host_available, s.cgroup_limit, s.source) == (4 * GiB, 3 * GiB, 4 * GiB, "probe")


def test_a_cgroup_limit_larger_than_the_host_changes_nothing_but_is_reported():
    s = snapshot_from_readings(0.0, 16 * GiB, 12 * GiB, [CgroupReading(64 * GiB, 1 * GiB)])
    assert (s.host_total, s.host_available, s.cgroup_limit) == (16 * GiB, 12 * GiB, 64 * GiB)


def test_no_cgroup_limit_keeps_the_psutil_figures_and_swap_is_only_recorded():
    s = snapshot_from_readings(0.0, 16 * GiB, 12 * GiB, [CgroupReading(None, 3 * GiB)], swap_total=32 * GiB)
    assert (s.host_total, s.host_available, s.cgroup_limit, s.swap_total) == (16 * GiB, 12 * GiB, None, 32 * GiB)


@given(total=st.integers(0, 2**40), avail=st.integers(0, 2**40), limit=st.integers(0, 2**40) | st.none(),
       usage=st.integers(0, 2**40))
def test_snapshot_figures_never_exceed_host_or_limit(total, avail, limit, usage):
    s = snapshot_from_readings(0.0, total, min(avail, total), [CgroupReading(limit, usage)])
    assert 0 <= s.host_available <= s.host_total <= total
    if limit is not None:
        assert s.host_total <= limit and s.host_available <= max(limit - usage, 0)


@pytest.mark.parametrize(
    ("code", "needle"),
    [(12, "libnvidia-ml"), (9, "driver is not loaded"), (4, "no permission"), (18, "different versions")],
)
def test_nvml_error_codes_become_reasons_in_words(code, needle):
    assert needle in nvml_error_reason(code, "NVML Shared Library Not Found")


def test_an_unlisted_nvml_error_keeps_its_code_and_escaped_text():
    assert nvml_error_reason(999, "odd\x1b[2J") == "NVML error 999: odd\\x1b[2J"
    assert nvml_error_reason(None, "plain") == "plain"


def test_nvml_device_answers_become_gpu_records():
    # recorded: nvidia-ml-py 11 returned bytes names; H100 80GB HBM3 memory info
    gpu = gpu_from_nvml(0, b"NVIDIA H100 80GB HBM3", 85520809984, 84658683904, 862126080)
    assert gpu == GpuInfo(index=0, name="NVIDIA H100 80GB HBM3", total=85520809984, free=84658683904, used=862126080,
                          vendor=Vendor.NVIDIA)
    assert gpu_from_nvml(1, "GPU", 100, 150, 0).free == 100  # a driver reporting free > total is clamped


def test_nvml_bandwidth_is_bus_width_times_memory_clock_double_data_rate():
    # recorded: H100 SXM 5120-bit bus, max memory clock 2619 MHz → 3.35 TB/s as NVIDIA states
    h100 = gpu_from_nvml(0, "NVIDIA H100 80GB HBM3", 85520809984, 84658683904, 862126080, 5120, 2619)
    assert (h100.bandwidth, h100.bandwidth_source) == (3_352_320_000_000, "NVML: bus width × max memory clock")
    assert nvml_bandwidth(None, 2619) is None and nvml_bandwidth(384, 0) is None


def test_gpu_error_text_says_when_the_driver_sees_no_gpu():
    assert gpu_error_text(0, []) == NO_DEVICES
    assert gpu_error_text(2, []) is None
    assert gpu_error_text(2, ["GPU 1: lost"]) == "GPU 1: lost"


def test_a_hypothetical_machine_is_labelled_and_shaped_as_typed():
    s = hypothetical_machine(32 * GiB, gpu_count=2, gpu_total=24 * GiB, gpu_free=20 * GiB)
    assert s.source == "hypothetical" and s.host_total == s.host_available == 32 * GiB
    assert [(g.index, g.total, g.free, g.used) for g in s.gpus] == [(0, 24 * GiB, 20 * GiB, 4 * GiB),
                                                                  (1, 24 * GiB, 20 * GiB, 4 * GiB)]
    assert hypothetical_machine(8 * GiB, 16 * GiB).host_total == 16 * GiB
    assert hypothetical_machine(8 * GiB, gpu_count=1, gpu_total=GiB).gpus[0].free == GiB


@pytest.mark.parametrize(
    "kwargs",
    [dict(host_available=8, host_total=4), dict(host_available=-1), dict(host_available=8, gpu_count=1),
     dict(host_available=8, gpu_count=1, gpu_total=4, gpu_free=5)],
)
def test_an_impossible_hypothetical_machine_is_refused(kwargs):
    with pytest.raises(RequestError):
        hypothetical_machine(**kwargs)


def test_what_if_replaces_only_the_figures_given():
    probed = snapshot_from_readings(5.0, 16 * GiB, 12 * GiB, [CgroupReading(14 * GiB, GiB)],
                                    gpu_error="the NVIDIA driver is not loaded")
    assert what_if(probed) is probed
    more_ram = what_if(probed, host_available=40 * GiB)
    assert (more_ram.source, more_ram.host_available, more_ram.host_total) == ("hypothetical", 40 * GiB, 40 * GiB)
    assert more_ram.gpu_error == probed.gpu_error and more_ram.captured_at == 5.0
    gpu = hypothetical_machine(0, gpu_count=1, gpu_total=8 * GiB).gpus
    with_gpu = what_if(probed, gpus=gpu)
    assert (with_gpu.gpus, with_gpu.gpu_error, with_gpu.host_available) == (gpu, None, probed.host_available)


def test_records_refuse_inconsistent_figures():
    with pytest.raises(RequestError):
        GpuInfo(index=0, name="x", total=10, free=11, used=0)
    with pytest.raises(RequestError):
        GpuInfo(index=0, name="x", total=None, free=None, used=None, bandwidth=-1)
    assert GpuInfo(index=0, name="x", total=None, free=None, used=None).budget is None and GpuInfo(
        index=0, name="x", total=8, free=None, used=None,
    ).budget == 8
    with pytest.raises(RequestError):
        HardwareSnapshot(captured_at=0.0, host_total=10, host_available=11, cgroup_limit=None, gpus=(), gpu_error=None,
                         source="probe")
    with pytest.raises(RequestError):
        HardwareSnapshot(captured_at=0.0, host_total=10, host_available=5, cgroup_limit=None, gpus=(), gpu_error=None,
                         source="guess")
