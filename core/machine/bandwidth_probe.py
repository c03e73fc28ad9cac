"""Measure this machine as llama.cpp uses it: RAM read by all its threads, a matrix multiply, the model's disk.

Short, bounded, and never raising: each probe returns a figure (source `measured`, dated) or a
reason in words why it has none, so a caller falls back to a typed or assumed figure.

Rule 1: threads: as many as llama.cpp starts by default, its physical cores
        (common/common.cpp `common_cpu_get_num_math` → `common_cpu_get_num_physical_cores`),
        at most the CPUs this process may run on.
Rule 2: RAM: a read of one array of `ram_probe_bytes()` (well past any CPU cache), split
        into one slice per thread; each thread reduces its slice (`numpy.bitwise_or.reduce`
        over 64-bit words: one read per byte, no write, and numpy releases the GIL in the loop,
        so the threads read at once). Bandwidth = bytes / the slowest thread's pass; the best of
        RAM_PASSES passes (a busy neighbour only ever makes a pass slower). The array is
        touched once before timing, so page faults are not counted.
Rule 3: compute: a float32 matrix multiply of COMPUTE_N × COMPUTE_N matrices (2·n³ FLOPs,
        numpy's BLAS on all cores), the best of COMPUTE_PASSES; prefill is priced on this rate.
Rule 4: disk: a sequential read of the model file itself, from the middle of its data, after
        asking the kernel to drop the file's cached pages (`posix_fadvise DONTNEED`), until
        DISK_PROBE_SECONDS pass or DISK_PROBE_BYTES are read. A file with no data there
        (header-only or sparse: fewer allocated blocks than half its size, or `SEEK_DATA`
        finds none) has nothing to measure; neither has a platform without `posix_fadvise`
        (the read would come from the cache).
Rule 5: a RAM or compute figure's detail names the load average while it was measured: a busy
        machine reads slower, and the person can see when to measure again; the kept record
        (`bandwidth_store`) holds it against the CPUs this process may use (`core.machine.load`).
"""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import psutil

from gguf_budget.core.machine.bandwidth import Bandwidth, BandwidthSource, ComputeRate
from gguf_budget.core.machine.load import load_average, usable_cpus
from gguf_budget.core.units import human_bytes

MiB = 1024 * 1024
RAM_PROBE_BYTES = 512 * MiB
RAM_PROBE_MIN = 64 * MiB
RAM_PASSES = 7
COMPUTE_N = 1024
COMPUTE_PASSES = 5
DISK_PROBE_BYTES = 512 * MiB
DISK_PROBE_SECONDS = 0.3
DISK_CHUNK = 4 * MiB

Clock = Callable[[], float]


def _load() -> str:
    """Rule 5: ', load average 0.4' (nothing where the platform has no load average)."""
    load = load_average()
    return "" if load is None else f", load average {load:.1f}"


def llama_threads() -> int:
    """Rule 1: the threads llama.cpp would decode with on this machine."""
    physical = psutil.cpu_count(logical=False) or os.cpu_count() or 1
    return max(1, min(physical, usable_cpus()))


def ram_probe_bytes() -> int:
    """Rule 2's array: RAM_PROBE_BYTES, or a quarter of the available RAM when that is less (at least RAM_PROBE_MIN)."""
    available = psutil.virtual_memory().available
    return max(RAM_PROBE_MIN, min(RAM_PROBE_BYTES, available // 4 // MiB * MiB))


def _timed_pass(slices: Sequence[Any], reduce: Callable[[Any], Any], clock: Clock) -> float:
    """One pass: every thread reduces its slice; seconds from the common start to the last thread's end."""
    start = threading.Barrier(len(slices) + 1)
    workers = [threading.Thread(target=lambda s=s: (start.wait(), reduce(s)), daemon=True) for s in slices]
    for w in workers:
        w.start()
    start.wait()
    began = clock()
    for w in workers:
        w.join()
    return clock() - began


def measure_ram(threads: int | None = None, size: int | None = None, passes: int = RAM_PASSES,
                clock: Clock = time.perf_counter, now: Clock = time.time) -> Bandwidth | str:
    """Rule 2: a timed multi-threaded read of RAM, or why there is none."""
    n = threads or llama_threads()
    try:
        import numpy as np

        nbytes = size if size is not None else ram_probe_bytes()
        words = np.ones(nbytes // 8, dtype=np.uint64)
        slices = np.array_split(words, n)
        reduce = np.bitwise_or.reduce
        _timed_pass(slices, reduce, clock)  # every page is already touched by `ones`; this warms the threads
        best = min(_timed_pass(slices, reduce, clock) for _ in range(passes))
        read = words.nbytes
        del words, slices
    except Exception as e:  # noqa: BLE001 — out of memory or a broken numpy: no figure, never a crash
        return f"RAM probe failed: {type(e).__name__}: {e}"
    return Bandwidth(int(read / max(best, 1e-9)), BandwidthSource.MEASURED,
                     f"{n}-thread read of {human_bytes(read)}, best of {passes}{_load()}", now())


def measure_compute(n: int = COMPUTE_N, passes: int = COMPUTE_PASSES, clock: Clock = time.perf_counter,
                    now: Clock = time.time) -> ComputeRate | str:
    """Rule 3: a timed float32 matrix multiply, or why there is none."""
    try:
        import numpy as np

        a = np.full((n, n), 0.5, dtype=np.float32)
        b = np.full((n, n), 0.25, dtype=np.float32)
        out = a @ b  # warm the BLAS threads
        best = float("inf")
        for _ in range(passes):
            began = clock()
            np.matmul(a, b, out=out)
            best = min(best, clock() - began)
    except Exception as e:  # noqa: BLE001 — a broken numpy or BLAS: no figure, never a crash
        return f"compute probe failed: {type(e).__name__}: {e}"
    return ComputeRate(int(2 * n**3 / max(best, 1e-9)), BandwidthSource.MEASURED,
                       f"float32 {n}×{n} matrix multiply, best of {passes}{_load()}", now())


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


def measure_disk(path: str | Path, clock: Clock = time.perf_counter, seconds: float = DISK_PROBE_SECONDS,
                 limit: int = DISK_PROBE_BYTES, now: Clock = time.time) -> Bandwidth | str:
    """Rule 4: an uncached sequential read of `path`, or why there is none."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None:
        return "this platform cannot drop a file's cached pages, so a read would not measure the disk"
    name = Path(path).name
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        return f"cannot open {name}: {e.strerror or e}"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return f"{name} is not a regular file"
        size = info.st_size
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
                     f"uncached read of {human_bytes(read)} of {name} in {elapsed:.2f} s", now())
