"""A container's memory limit, read from the cgroup files — pure parsing of recorded text.

Rule 1: cgroup v2 `memory.max` ("max" = no limit) and `memory.current`; cgroup v1
        `memory.limit_in_bytes` (2**60 or more is v1's "no limit": PAGE_COUNTER_MAX pages) and
        `memory.usage_in_bytes`.
Rule 2: usage counts reclaimable page cache, so the inactive file pages of `memory.stat`
        (`total_inactive_file` in v1, `inactive_file` in v2) are subtracted, as the kubelet's
        working set does: headroom = limit − (usage − inactive file).
Rule 3: limits nest: every level from the process's cgroup (`/proc/self/cgroup`) up to the
        mount root bounds the process, so the tightest limit and the least headroom win.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

V1_NO_LIMIT = 2**60


@dataclass(frozen=True)
class CgroupReading:
    """One cgroup level: its limit (None = unlimited), usage and reclaimable file cache."""

    limit: int | None
    usage: int | None
    reclaimable: int = 0

    @property
    def headroom(self) -> int | None:
        if self.limit is None:
            return None
        working_set = max((self.usage or 0) - self.reclaimable, 0)
        return max(self.limit - working_set, 0)


def _number(text: str | None) -> int | None:
    value = (text or "").strip()
    return int(value) if value.isdigit() else None


def parse_cgroup(limit_text: str | None, usage_text: str | None, stat_text: str | None = None) -> CgroupReading:
    """v2 `memory.max`/`memory.current` or v1 `memory.limit_in_bytes`/`memory.usage_in_bytes` (+ `memory.stat`)."""
    limit = _number(limit_text)
    if limit is not None and limit >= V1_NO_LIMIT:
        limit = None
    stat = dict(_stat_pairs(stat_text or ""))
    reclaimable = stat.get("total_inactive_file", stat.get("inactive_file", 0))
    return CgroupReading(limit, _number(usage_text), reclaimable)


def _stat_pairs(text: str) -> Iterable[tuple[str, int]]:
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if value.strip().isdigit():
            yield key, int(value)


def parse_proc_self_cgroup(text: str) -> tuple[str | None, str | None]:
    """`/proc/self/cgroup` → (v2 path, v1 memory-controller path)."""
    v2 = v1 = None
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            v2 = parts[2]
        elif "memory" in parts[1].split(","):
            v1 = parts[2]
    return v2, v1


def cgroup_ancestors(path: str) -> tuple[str, ...]:
    """'/a/b' → ('a/b', 'a', ''): relative paths from the leaf up to the mount root."""
    parts = [p for p in path.split("/") if p and p != ".."]
    return tuple("/".join(parts[:n]) for n in range(len(parts), -1, -1))


def cgroup_bounds(readings: Iterable[CgroupReading]) -> tuple[int | None, int | None]:
    """(tightest limit, least headroom) over every level; (None, None) when nothing is limited."""
    limited = [r for r in readings if r.limit is not None]
    if not limited:
        return None, None
    return min(r.limit for r in limited if r.limit is not None), min(r.headroom or 0 for r in limited)
