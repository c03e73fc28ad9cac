"""The CPU features llama.cpp's CPU backend chooses kernels by, in llama.cpp's own names.

One code path for a probed machine and a recorded one: `/proc/cpuinfo` text (probed, or a
recorded copy) and llama.cpp's `system_info` line (from a log) both become the same set.

Rule 1: x86 `flags`: avx2 → AVX2, avx512f → AVX512. Arm `Features`: asimd → NEON,
        asimddp → DOTPROD, i8mm → MATMUL_INT8, sve → SVE. Other flags are not kept.
Rule 2: text with no flags line says nothing: None (unknown), never an empty set.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from gguf_budget.core.errors import UnreadableFile
from gguf_budget.core.regular_file import FileKind, read_text

CPUINFO = "/proc/cpuinfo"
FLAG_NAMES: Mapping[str, str] = MappingProxyType({
    "avx2": "AVX2", "avx512f": "AVX512",
    "asimd": "NEON", "asimddp": "DOTPROD", "i8mm": "MATMUL_INT8", "sve": "SVE",
})
LLAMA_CPP_NAMES = frozenset(FLAG_NAMES.values())


def cpu_features_from_cpuinfo(text: str) -> frozenset[str] | None:
    """Rule 1 over the first `flags` / `Features` line; None when there is none (Rule 2)."""
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("flags", "Features"):
            return frozenset(FLAG_NAMES[f] for f in value.split() if f in FLAG_NAMES)
    return None


def read_cpu_features(path: str | Path = CPUINFO) -> frozenset[str] | None:
    """This machine's features; None where /proc/cpuinfo cannot be read (not Linux, no permission)."""
    try:
        return cpu_features_from_cpuinfo(read_text(path, FileKind.SYSTEM))
    except UnreadableFile:
        return None
