"""The one impure corner of the core: reads psutil (or /proc/meminfo), the memory cgroup files, the GPUs and the clock.

Rule 1: `probe_hardware` never raises. Each reader catches what its source can throw and
        turns it into a reason (`host_error`, `gpu_error`) on the snapshot.
Rule 2: readers only collect raw readings; the parsing and the arithmetic live in the pure
        `snapshot.py`, `cgroup.py`, `drm.py`, `apple.py` and `gpus.py`, so recorded readings
        are tested without this module. GPUs beyond NVML are read by `probe_gpus.py`: DRM sysfs
        (and amdsmi when importable) on every system, sysctl on macOS.
Rule 3: `nvml` is any pynvml-like module (default: `import pynvml`, from nvidia-ml-py), and
        `amdsmi` any amdsmi-like one (default: `import amdsmi`). Real and fake modules take the
        same code path, as do real and recorded sysfs trees (`drm_root`) and sysctl output
        (`sysctl`); tests fake nothing else.
Rule 4: cgroup files are looked up under each mount (v2 at the root or `unified/`, v1 at
        `memory/`) for every level from the process's own cgroup (`/proc/self/cgroup`) up to
        the mount root; levels without the files are skipped.
Rule 5: the default binding is imported only where it could answer: `import pynvml` builds ~1,000 ctypes
        declarations (~20 ms of every probe), and its first act, `nvmlInit`, loads the driver's library
        `libnvidia-ml.so.1` (outside Windows). So the probe loads that library first, as pynvml would; where it
        cannot be loaded the answer is pynvml's own (NVML error 12, not installed) and pynvml is never
        imported. Installed bindings are still told from missing ones first (`NO_BINDINGS`).
Rule 6: on Linux host memory is read from `/proc/meminfo` (`meminfo`), the file psutil reads, and psutil (~15 ms to
        import) only where `snapshot.meminfo_figures` leaves the figures to it; elsewhere psutil always.
Rule 7: a question about host RAM alone (a budget plan's default budget, the free RAM a streamed plan pages into)
        asks `probe_host`: the same host figures, no GPU read (no NVML, DRM sysfs or sysctl).
"""

from __future__ import annotations

import importlib.util
import logging
import sys
import time
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from gguf_budget.core.errors import UnreadableFile
from gguf_budget.core.regular_file import FileKind, read_text

from gguf_budget.core.machine.cgroup import CgroupReading, cgroup_ancestors, parse_cgroup, parse_proc_self_cgroup
from gguf_budget.core.machine.gpus import gpus_from_readings
from gguf_budget.core.machine.probe_gpus import DRM_ROOT, read_apple, read_cards, run_sysctl
from gguf_budget.core.machine.cpu_features import CPUINFO, read_cpu_features
from gguf_budget.core.machine.snapshot import (
    NO_BINDINGS,
    GpuInfo,
    HardwareSnapshot,
    gpu_error_text,
    gpu_from_nvml,
    meminfo_figures,
    nvml_error_reason,
    snapshot_from_readings,
)

CGROUP_ROOT = "/sys/fs/cgroup"
REPROBE_IDLE_S = 60
"""How often a window probes the machine again while idle: free memory moves as other programs run, and a probe
costs milliseconds."""
PROC_SELF_CGROUP = "/proc/self/cgroup"
MEMINFO = "/proc/meminfo"
GPUS_NOT_READ = "the GPUs were not read (host memory only)"
V2_FILES = ("memory.max", "memory.current", "memory.stat")
V1_FILES = ("memory.limit_in_bytes", "memory.usage_in_bytes", "memory.stat")
NVML_CLOCK_MEM = 2  # nvml.h nvmlClockType_t NVML_CLOCK_MEM
NVML_LIBRARY = "libnvidia-ml.so.1"
"""The library pynvml's `nvmlInit` loads outside Windows (`_LoadNvmlLibrary`), before any driver call."""
NVML_ERROR_LIBRARY_NOT_FOUND = 12  # nvml.h nvmlReturn_t

log = logging.getLogger(__name__)


def probe_hardware(
    nvml: ModuleType | Any | None = None,
    *,
    amdsmi: ModuleType | Any | None = None,
    drm_root: str | Path = DRM_ROOT,
    sysctl: Callable[[], str | None] | None = None,
    platform: str = sys.platform,
    cgroup_root: str | Path = CGROUP_ROOT,
    proc_self_cgroup: str | Path = PROC_SELF_CGROUP,
    cpuinfo: str | Path = CPUINFO,
    clock: Callable[[], float] = time.time,
    nvml_library: str = NVML_LIBRARY,
    meminfo: str | Path = MEMINFO,
) -> HardwareSnapshot:
    """Snapshot this machine now. Never raises: what could not be read is said on the snapshot.
    `nvml_library` is the driver library tried before the default binding is imported (Rule 5); `meminfo` the file
    host memory is read from on Linux (Rule 6)."""
    host, cgroups = _probe_host(platform, Path(cgroup_root), Path(proc_self_cgroup), clock, Path(meminfo))
    nvidia, nvml_error = _read_nvml(nvml, nvml_library, platform)
    apple = read_apple(sysctl or run_sysctl) if platform == "darwin" else None
    gpus, gpu_error = gpus_from_readings(nvidia, nvml_error, read_cards(Path(drm_root), amdsmi), apple,
                                         host.host_total, host.host_available)
    for reason in (host.host_error, gpu_error):
        if reason:
            log.info("probe: %s", reason)
    log.debug("probe: host %d of %d bytes available, %d cgroup level(s), %d GPU(s)",
              host.host_available, host.host_total, cgroups, len(gpus))
    return replace(host, gpus=gpus, gpu_error=gpu_error, cpu_features=read_cpu_features(cpuinfo))


def probe_host(
    *,
    platform: str = sys.platform,
    cgroup_root: str | Path = CGROUP_ROOT,
    proc_self_cgroup: str | Path = PROC_SELF_CGROUP,
    clock: Callable[[], float] = time.time,
    meminfo: str | Path = MEMINFO,
) -> HardwareSnapshot:
    """Rule 7: the host's memory now, as `probe_hardware` reads it, with no GPU read (`gpu_error` says so). Never
    raises."""
    host, _ = _probe_host(platform, Path(cgroup_root), Path(proc_self_cgroup), clock, Path(meminfo))
    if host.host_error:
        log.info("probe: %s", host.host_error)
    return replace(host, gpu_error=GPUS_NOT_READ)


def _probe_host(platform: str, cgroup_root: Path, proc_self_cgroup: Path, clock: Callable[[], float],
                meminfo: Path) -> tuple[HardwareSnapshot, int]:
    """The host part of a snapshot (GPUs not yet read) and how many cgroup levels bound it."""
    captured_at = clock()
    total, available, swap, host_error = _read_host(meminfo, platform)
    cgroups = _read_cgroups(cgroup_root, proc_self_cgroup)
    return snapshot_from_readings(captured_at, total, available, cgroups, (), None, swap, host_error), len(cgroups)


def _read_host(meminfo: Path, platform: str) -> tuple[int, int, int | None, str | None]:
    figures = meminfo_figures(_read_text(meminfo) or "") if platform.startswith("linux") else None
    if figures is not None:
        return (*figures, None)
    try:
        import psutil

        vm = psutil.virtual_memory()
        swap = psutil.swap_memory().total
        return int(vm.total), int(vm.available), int(swap), None
    except Exception as e:  # noqa: BLE001 — psutil raises OSError/RuntimeError on odd platforms; none may escape
        return 0, 0, None, f"host memory could not be read: {type(e).__name__}: {e}"


def _read_text(path: Path) -> str | None:
    try:
        return read_text(path, FileKind.SYSTEM)
    except UnreadableFile:
        return None


def _read_cgroups(root: Path, proc_self_cgroup: Path) -> tuple[CgroupReading, ...]:
    v2_path, v1_path = parse_proc_self_cgroup(_read_text(proc_self_cgroup) or "")
    mounts: list[tuple[Path, str, tuple[str, str, str]]] = []
    if v2_path is not None:
        mounts += [(root, v2_path, V2_FILES), (root / "unified", v2_path, V2_FILES)]
    if v1_path is not None:
        mounts.append((root / "memory", v1_path, V1_FILES))
    readings = []
    for mount, path, (limit_file, usage_file, stat_file) in mounts:
        for rel in cgroup_ancestors(path):
            level = mount / rel if rel else mount
            limit = _read_text(level / limit_file)
            if limit is not None:
                readings.append(parse_cgroup(limit, _read_text(level / usage_file), _read_text(level / stat_file)))
    return tuple(readings)


def _nvml_library_loads(library: str, platform: str) -> bool:
    """Rule 5: whether `nvmlInit` could find the driver's library; pynvml's own search on Windows."""
    if platform.startswith("win"):
        return True
    import ctypes

    try:
        ctypes.CDLL(library)
    except OSError:
        return False
    return True


def _read_nvml(nvml: Any, library: str, platform: str) -> tuple[tuple[GpuInfo, ...], str | None]:
    if nvml is None:
        if importlib.util.find_spec("pynvml") is None:
            return (), NO_BINDINGS
        if not _nvml_library_loads(library, platform):
            return (), nvml_error_reason(NVML_ERROR_LIBRARY_NOT_FOUND, "")
        try:
            import pynvml
        except ImportError:
            return (), NO_BINDINGS
        nvml = pynvml
    nvml_error = getattr(nvml, "NVMLError", None)
    errors: tuple[type[BaseException], ...] = (nvml_error,) if isinstance(nvml_error, type) else ()
    try:
        nvml.nvmlInit()
    except errors as e:
        return (), nvml_error_reason(getattr(e, "value", None), str(e))
    except Exception as e:  # noqa: BLE001 — a broken binding must not take the probe down
        return (), f"NVML failed to start: {type(e).__name__}: {e}"
    try:
        return _read_devices(nvml, errors)
    except Exception as e:  # noqa: BLE001 — an odd device reading must not take the probe down
        return (), f"NVML failed: {type(e).__name__}: {e}"
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception:  # noqa: BLE001 — shutting down is best effort; the readings are already taken
            pass


def _nvml_bus(nvml: Any, handle: Any) -> tuple[int | None, int | None]:
    """Bus width (bits) and max memory clock (MHz); (None, None) where the driver or binding cannot say."""
    try:
        return int(nvml.nvmlDeviceGetMemoryBusWidth(handle)), int(nvml.nvmlDeviceGetMaxClockInfo(handle, NVML_CLOCK_MEM))
    except Exception:  # noqa: BLE001 — bandwidth is optional; older drivers lack the query
        return None, None


def _read_devices(nvml: Any, errors: tuple[type[BaseException], ...]) -> tuple[tuple[GpuInfo, ...], str | None]:
    count = int(nvml.nvmlDeviceGetCount())
    gpus, failures = [], []
    for index in range(count):
        try:
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            mem = nvml.nvmlDeviceGetMemoryInfo(handle)
            gpus.append(gpu_from_nvml(index, nvml.nvmlDeviceGetName(handle), mem.total, mem.free, mem.used,
                                      *_nvml_bus(nvml, handle)))
        except errors as e:
            failures.append(f"GPU {index}: {nvml_error_reason(getattr(e, 'value', None), str(e))}")
    return tuple(gpus), gpu_error_text(count, failures)
