"""Measure the tiers' bandwidths on this machine: short, bounded, and never raising.

Rule 1: each probe returns a `Bandwidth` (source `measured`) or a reason in words why it has
        none; no exception escapes, so a caller falls back to a typed or assumed figure.
Rule 2: RAM: a STREAM-style copy between two RAM_PROBE_BYTES arrays (larger than any CPU cache),
        repeated until RAM_PROBE_SECONDS have passed since the probe began (allocation
        included; at least one copy is timed); bandwidth = 2 × bytes copied / time (each
        copied byte is read once and written once). One thread, so it understates what a
        multi-threaded decoder reaches.
Rule 3: disk: a sequential read of the model file itself, from the middle of its data, after
        asking the kernel to drop the file's cached pages (`posix_fadvise DONTNEED`), until
        DISK_PROBE_SECONDS pass or DISK_PROBE_BYTES are read. A file with no data there
        (header-only or sparse: fewer allocated blocks than half its size, or `SEEK_DATA`
        finds none) has nothing to measure; neither has a platform without `posix_fadvise`
        (the read would come from the cache).
Rule 4: VRAM: NVML's memory bus width and max memory clock of every NVIDIA GPU, parsed by
        `bandwidth.vram_from_nvml`; the slowest GPU stands for all (layers run in sequence,
        so a token waits for the slowest). `nvml` is injectable, as in `probe.py`.
Rule 5: `probe_bandwidths` runs the tiers asked for: a measured figure replaces the base's, a missing one
        keeps the base's figure (assumed, or typed) and its reason is returned beside it.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from gguf_budget.core.machine.bandwidth import Bandwidth, Bandwidths, BandwidthSource, vram_from_nvml
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.units import human_bytes

MiB = 1024 * 1024
RAM_PROBE_BYTES = 64 * MiB
RAM_PROBE_SECONDS = 0.4
DISK_PROBE_BYTES = 512 * MiB
DISK_PROBE_SECONDS = 0.3
DISK_CHUNK = 4 * MiB
NVML_CLOCK_MEM = 2  # nvml.h nvmlClockType_t NVML_CLOCK_MEM


def measure_ram(clock: Callable[[], float] = time.perf_counter,
                seconds: float = RAM_PROBE_SECONDS, size: int = RAM_PROBE_BYTES) -> Bandwidth | str:
    """Rule 2: a timed copy in RAM, or why there is none."""
    try:
        import numpy as np

        deadline = clock() + seconds
        src = np.ones(size, dtype=np.uint8)
        dst = np.empty_like(src)
        np.copyto(dst, src)  # touch every page before timing
        copies, start = 0, clock()
        while copies == 0 or clock() < deadline:
            np.copyto(dst, src)
            copies += 1
        elapsed = max(clock() - start, 1e-9)
        rate = int(2 * size * copies / elapsed)
    except Exception as e:  # noqa: BLE001 — out of memory or a broken numpy: no figure, never a crash
        return f"RAM probe failed: {type(e).__name__}: {e}"
    return Bandwidth(rate, BandwidthSource.MEASURED,
                     f"copy of {human_bytes(size)} × {copies} in {elapsed:.2f} s, one thread")


def _data_offset(fd: int, size: int) -> int | None:
    """Where the middle of the file's data starts, or None when the file holds no data there."""
    blocks = getattr(os.fstat(fd), "st_blocks", None)
    if blocks is not None and blocks * 512 < size // 2:
        return None
    middle = size // 2
    seek_data = getattr(os, "SEEK_DATA", None)
    if seek_data is None:
        return middle
    try:
        return os.lseek(fd, middle, seek_data)
    except OSError:  # ENXIO: no data after `middle`
        return None


def measure_disk(path: str | Path, clock: Callable[[], float] = time.perf_counter,
                 seconds: float = DISK_PROBE_SECONDS, limit: int = DISK_PROBE_BYTES) -> Bandwidth | str:
    """Rule 3: an uncached sequential read of `path`, or why there is none."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None:
        return "this platform cannot drop a file's cached pages, so a read would not measure the disk"
    name = Path(path).name
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as e:
        return f"cannot open {name}: {e.strerror or e}"
    try:
        size = os.fstat(fd).st_size
        offset = _data_offset(fd, size)
        if offset is None or size - offset < DISK_CHUNK:
            return f"{name} has no weights to read (header-only or sparse)"
        advise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.lseek(fd, offset, os.SEEK_SET)
        read, start = 0, clock()
        while read < min(limit, size - offset) and ((elapsed := clock() - start) < seconds or read == 0):
            chunk = os.read(fd, DISK_CHUNK)
            if not chunk:
                break
            read += len(chunk)
        elapsed = max(clock() - start, 1e-9)
        advise(fd, offset, read, os.POSIX_FADV_DONTNEED)
    except OSError as e:
        return f"reading {name} failed: {e.strerror or e}"
    finally:
        os.close(fd)
    return Bandwidth(int(read / elapsed), BandwidthSource.MEASURED,
                     f"uncached read of {human_bytes(read)} of {name} in {elapsed:.2f} s")


def read_vram(nvml: ModuleType | Any | None = None) -> Bandwidth | str:
    """Rule 4: the slowest NVIDIA GPU's bandwidth from NVML, or why there is none."""
    if nvml is None:
        try:
            import pynvml
        except ImportError:
            return "the NVML Python bindings (nvidia-ml-py) are not installed"
        nvml = pynvml
    try:
        nvml.nvmlInit()
    except Exception as e:  # noqa: BLE001 — NVMLError or a broken binding: no figure
        return f"NVML did not start: {e}"
    try:
        return _slowest_gpu(nvml)
    except Exception as e:  # noqa: BLE001 — an odd device reading must not take the probe down
        return f"NVML could not tell the memory bus: {e}"
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception:  # noqa: BLE001 — shutting down is best effort; the readings are taken
            pass


def _slowest_gpu(nvml: Any) -> Bandwidth | str:
    figures = []
    for index in range(int(nvml.nvmlDeviceGetCount())):
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        name = nvml.nvmlDeviceGetName(handle)
        name = name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name)
        bus = int(nvml.nvmlDeviceGetMemoryBusWidth(handle))
        clock = int(nvml.nvmlDeviceGetMaxClockInfo(handle, NVML_CLOCK_MEM))
        figure = vram_from_nvml(bus, clock, f"GPU {index} {safe_text(name, 60)}")
        if figure is not None:
            figures.append(figure)
    if not figures:
        return "no NVIDIA GPU reported its memory bus"
    return min(figures, key=lambda b: b.bytes_per_s)


TIERS = ("ram", "disk", "vram")


def probe_bandwidths(model_path: str | Path | None, base: Bandwidths | None = None,
                     nvml: ModuleType | Any | None = None,
                     tiers: tuple[str, ...] = TIERS) -> tuple[Bandwidths, tuple[str, ...]]:
    """Rule 5: measure `tiers` (RAM, the model file's disk, the GPUs); (figures, reasons for those not measured)."""
    probes: dict[str, Callable[[], Bandwidth | str]] = {
        "ram": measure_ram,
        "disk": lambda: measure_disk(model_path) if model_path is not None else "no model file to read",
        "vram": lambda: read_vram(nvml),
    }
    readings = {tier: probes[tier]() for tier in tiers}
    measured = {k: v for k, v in readings.items() if isinstance(v, Bandwidth)}
    reasons = tuple(f"{k.upper()} not measured: {v}" for k, v in readings.items() if isinstance(v, str))
    return replace(base or Bandwidths(), **measured), reasons
