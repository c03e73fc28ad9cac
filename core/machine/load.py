"""How busy this machine is: the load average and the CPUs it is held against.

Rule 1: the load average is the kernel's one-minute figure (`os.getloadavg`); None where the
        platform has none (Windows), and then nothing is judged busy by it.
Rule 2: the cores a load is held against are the CPUs this process may run on (its affinity),
        else the CPU count: a load average above them means something else wanted the CPUs
        while a measurement ran.
"""

from __future__ import annotations

import os

MAX_LOAD = 1e6
MAX_CORES = 1 << 16
"""The largest load average and core count a kept record may hold: a number past them is damage."""


def load_average() -> float | None:
    """Rule 1."""
    getloadavg = getattr(os, "getloadavg", None)
    try:
        return None if getloadavg is None else float(getloadavg()[0])
    except OSError:
        return None


def usable_cpus() -> int:
    """Rule 2."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1
