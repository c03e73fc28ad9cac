"""The probe over recorded NVML answers (a fake pynvml module: the one faked boundary) and
real cgroup file trees written into a temporary folder."""

from __future__ import annotations

import ctypes
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import psutil
import pytest
from machine_fixtures import fake_nvml

from gguf_budget.core.machine.snapshot import NO_BINDINGS, NO_DEVICES, NVML_REASONS, meminfo_figures
from gguf_budget.core.machine.probe import NVML_LIBRARY, probe_hardware

GiB = 1024**3

# Recorded `nvmlDeviceGetName` / `nvmlDeviceGetMemoryInfo` answers.
RTX_4090 = ("NVIDIA GeForce RTX 4090", 25757220864, 24953847808, 803373056)
H100 = (b"NVIDIA H100 80GB HBM3", 85520809984, 84658683904, 862126080)


@pytest.fixture
def no_cgroup(tmp_path: Path, monkeypatch) -> dict:
    """Probe keyword arguments pointing at an empty cgroup tree (no limits), no DRM cards, no amdsmi, Linux."""
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    return {"cgroup_root": tmp_path / "cg", "proc_self_cgroup": tmp_path / "none", "clock": lambda: 1700000000.0,
            "drm_root": tmp_path / "drm", "platform": "linux"}


@pytest.mark.parametrize(
    ("code", "needle"),
    [(12, "NVML library (libnvidia-ml) is not installed"), (9, "driver is not loaded"), (4, "no permission")],
)
def test_nvml_unavailable_gives_a_reason_and_no_gpus(no_cgroup, code, needle):
    nvml = fake_nvml(init_error=code)
    s = probe_hardware(nvml, **no_cgroup)
    assert s.gpus == () and needle in s.gpu_error
    assert nvml.calls == ["init"]


def test_zero_gpus_is_said_plainly(no_cgroup):
    nvml = fake_nvml([])
    s = probe_hardware(nvml, **no_cgroup)
    assert (s.gpus, s.gpu_error) == ((), NO_DEVICES)
    assert nvml.calls == ["init", "shutdown"]


def test_one_gpu_is_read_with_its_memory(no_cgroup):
    s = probe_hardware(fake_nvml([RTX_4090]), **no_cgroup)
    assert [(g.index, g.name, g.total, g.free, g.used) for g in s.gpus] == [(0, *RTX_4090)]
    assert s.gpu_error is None and s.captured_at == 1700000000.0 and s.source == "probe"


def test_four_gpus_keep_nvml_order_and_bytes_names_are_decoded(no_cgroup):
    s = probe_hardware(fake_nvml([H100, RTX_4090, H100, RTX_4090]), **no_cgroup)
    assert [g.index for g in s.gpus] == [0, 1, 2, 3]
    assert [g.name for g in s.gpus] == ["NVIDIA H100 80GB HBM3", "NVIDIA GeForce RTX 4090"] * 2
    assert [g.total for g in s.gpus] == [H100[1], RTX_4090[1]] * 2


def test_a_gpu_that_cannot_be_read_is_named_and_the_others_kept(no_cgroup):
    s = probe_hardware(fake_nvml([H100, RTX_4090], failing=(0,)), **no_cgroup)
    assert [g.index for g in s.gpus] == [1]
    assert s.gpu_error.startswith("GPU 0: ") and "fallen off the bus" in s.gpu_error


def test_a_broken_binding_does_not_raise(no_cgroup):
    broken = SimpleNamespace(nvmlInit=lambda: None, nvmlShutdown=lambda: None)
    s = probe_hardware(broken, **no_cgroup)
    assert s.gpus == () and "NVML failed" in s.gpu_error


def test_missing_bindings_are_reported(monkeypatch, no_cgroup):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # `import pynvml` now raises ImportError
    s = probe_hardware(**no_cgroup)
    assert (s.gpus, s.gpu_error) == ((), NO_BINDINGS)


def _probe_in_a_fresh_interpreter(library: str) -> tuple[str, bool]:
    """The default binding's answer on this machine, and whether `pynvml` was imported to give it."""
    code = ("import sys\n"
            "from gguf_budget.core.machine.probe import probe_hardware\n"
            f"s = probe_hardware(nvml_library={library!r})\n"
            "print(s.gpu_error)\n"
            "print('pynvml' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    reason, imported = done.stdout.splitlines()
    return reason, imported == "True"


def _loads(library: str) -> bool:
    try:
        ctypes.CDLL(library)
    except OSError:
        return False
    return True


@pytest.mark.parametrize("library", [NVML_LIBRARY, "no-such-dir/libnvidia-ml.so.1", "libc.so.6"],
                         ids=["driver", "missing", "loadable"])
def test_pynvml_is_imported_only_when_the_driver_library_loads(library):
    """Rule 5: without the driver's library pynvml's answer is known before it is imported (error 12, the
    reason a `nvmlInit` gives); with it (the real driver here, or any loadable library) the binding is asked."""
    reason, imported = _probe_in_a_fresh_interpreter(library)
    assert imported == _loads(library)
    if not imported:
        assert reason == NVML_REASONS[12]


def test_host_figures_come_from_psutil(no_cgroup):
    s = probe_hardware(fake_nvml([]), **no_cgroup)
    assert s.host_total == psutil.virtual_memory().total and s.host_error is None
    assert s.swap_total == psutil.swap_memory().total
    assert 0 < s.host_available <= s.host_total and s.cgroup_limit is None


MEMINFO = ("MemTotal:       24683784 kB\nMemFree:         1630868 kB\nMemAvailable:   22903244 kB\n"
           "Buffers:          123456 kB\nSwapTotal:       2097148 kB\nSwapFree:        2097148 kB\n"
           "HugePages_Total:       0\nHugepagesize:       2048 kB\n")


@pytest.mark.parametrize(("text", "figures"), [
    (MEMINFO, (24683784 * 1024, 22903244 * 1024, 2097148 * 1024)),
    (MEMINFO.replace("MemAvailable:   22903244", "MemAvailable:          0"), None),
    (MEMINFO.replace("MemAvailable:   22903244", "MemAvailable:   99999999"), None),
    ("".join(line + "\n" for line in MEMINFO.splitlines() if not line.startswith("MemAvailable")), None),
    ("".join(line + "\n" for line in MEMINFO.splitlines() if not line.startswith("SwapTotal")), None),
    ("", None),
], ids=["as-is", "available-0", "available-over-total", "no-available", "no-swap-line", "empty"])
def test_meminfo_gives_psutils_figures_or_leaves_them_to_psutil(text, figures):
    """Snapshot Rule 1: the figures psutil takes as they stand; None where psutil estimates or corrects."""
    assert meminfo_figures(text) == figures


def test_linux_host_memory_is_read_from_meminfo(no_cgroup, tmp_path):
    """Probe Rule 6: a recorded /proc/meminfo is the host's memory; one psutil would correct is psutil's."""
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(MEMINFO)
    s = probe_hardware(fake_nvml([]), meminfo=meminfo, **no_cgroup)
    assert (s.host_total, s.host_available, s.swap_total) == meminfo_figures(MEMINFO)
    meminfo.write_text(MEMINFO.replace("MemAvailable:   22903244", "MemAvailable:          0"))
    s = probe_hardware(fake_nvml([]), meminfo=meminfo, **no_cgroup)
    assert s.host_total == psutil.virtual_memory().total and s.swap_total == psutil.swap_memory().total
    s = probe_hardware(fake_nvml([]), meminfo=tmp_path / "none", **{**no_cgroup, "platform": "darwin"}, sysctl=str)
    assert s.host_total == psutil.virtual_memory().total


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_cgroup_v2_limit_is_found_under_the_process_path(tmp_path):
    _write(tmp_path, {
        "proc": "0::/app.slice/job.scope\n",
        "cg/app.slice/job.scope/memory.max": "2147483648\n",
        "cg/app.slice/job.scope/memory.current": "536870912\n",
        "cg/app.slice/job.scope/memory.stat": "inactive_file 0\n",
        "cg/app.slice/memory.max": "max\n",
        "cg/app.slice/memory.current": "9999999999\n",
    })
    s = probe_hardware(fake_nvml([]), cgroup_root=tmp_path / "cg", proc_self_cgroup=tmp_path / "proc")
    assert (s.cgroup_limit, s.host_total) == (2 * GiB, min(2 * GiB, psutil.virtual_memory().total))
    assert s.host_available <= 2 * GiB - 512 * 1024**2


def test_cgroup_v1_parent_limit_binds_when_tighter(tmp_path):
    _write(tmp_path, {
        "proc": "4:memory:/process_api/abc\n0::/\n",
        "cg/memory/process_api/abc/memory.limit_in_bytes": "9223372036854771712\n",
        "cg/memory/process_api/abc/memory.usage_in_bytes": "2961408\n",
        "cg/memory/process_api/memory.limit_in_bytes": "1073741824\n",
        "cg/memory/process_api/memory.usage_in_bytes": "268435456\n",
        "cg/memory/memory.limit_in_bytes": "9223372036854771712\n",
    })
    s = probe_hardware(fake_nvml([]), cgroup_root=tmp_path / "cg", proc_self_cgroup=tmp_path / "proc")
    assert s.cgroup_limit == GiB and s.host_total == min(GiB, psutil.virtual_memory().total)
    assert s.host_available <= GiB - 256 * 1024**2


def test_container_with_its_own_cgroup_mounted_at_the_root(tmp_path):
    """Docker without a cgroup namespace: /proc/self/cgroup names a path the mount does not have."""
    _write(tmp_path, {
        "proc": "5:memory:/docker/0123abcd\n",
        "cg/memory/memory.limit_in_bytes": "536870912\n",
        "cg/memory/memory.usage_in_bytes": "0\n",
    })
    s = probe_hardware(fake_nvml([]), cgroup_root=tmp_path / "cg", proc_self_cgroup=tmp_path / "proc")
    assert s.cgroup_limit == 512 * 1024**2 and s.host_available <= 512 * 1024**2


def test_the_real_probe_on_this_machine_never_raises():
    s = probe_hardware()
    assert s.source == "probe" and s.host_total > 0
    assert s.gpus or s.gpu_error
