"""The library rescan of 1,000 unchanged small models: what a person pays each time the Library opens again.

1,000 small header-only GGUF files (written by `tests/gguf_factory.py`, then copied: each its own
file and inode) in one added folder, a persistent index in a scratch folder. Three scans, each
timed in CPU seconds of this process and its worker processes (the kernel's accounting):

    first scan             every header read, every model judged
    unchanged rescan       the same settings: no header read, nothing judged
    machine probed again   the machine's free RAM moved by a few MiB and its probe time changed (as a
                           re-probe moves them minute by minute): no header read, nothing judged
    window, new budget     the Library window's scan (`judge=False`) at a budget never judged: no header
                           read, nothing judged by the scan (the window judges the rows it shows)

Each line also says how many headers were read and how many models were judged (counted, not
timed). Budget: an unchanged rescan, and one after a re-probe, ≤ 0.3 s CPU for 1,000 models. The
load average is printed before and after: on a busy machine these are upper figures.

Run: `python benchmarks/bench_library_rescan.py [--files N]`.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import bench_shapes  # noqa: F401  (puts tests/ on sys.path)
from gguf_factory import ArchDesc, write_gguf

import gguf_budget.core.gguf.shards as shards_module
from gguf_budget.core.library.assess import MEMORY_STEP, LibrarySettings, assess, assessment_key
from gguf_budget.core.library.scan import scan
from gguf_budget.core.library.stores import StoreKind, StoreRoot
from gguf_budget.core.machine.probe import probe_hardware
from gguf_budget.core.plan.budget import Budget

GIB, MIB = 1 << 30, 1 << 20
BUDGET_S = 0.3


class Counted:
    """Headers read in this process and models judged: the work a rescan must not do."""

    def __init__(self) -> None:
        self.headers = 0
        self.judged = 0
        real = shards_module.read_header

        def read_header(*args: Any, **kwargs: Any) -> Any:
            self.headers += 1
            return real(*args, **kwargs)

        shards_module.read_header = read_header

    def judge(self, settings: LibrarySettings) -> Any:
        def judged(spec: Any) -> Any:
            self.judged += 1
            return assess(spec, settings)

        return judged


def _moved(available: int) -> int:
    """Free RAM a few MiB away, within the same `MEMORY_STEP` (as a re-probe a minute later usually reads it)."""
    step = available - available % MEMORY_STEP
    return step + (available - step + 5 * MIB) % MEMORY_STEP


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def build(top: Path, n: int) -> Path:
    folder = top / "models"
    folder.mkdir()
    source = write_gguf(top / "small.gguf", ArchDesc(), "header_only")[0]
    for i in range(n):
        sub = folder / f"d{i // 100}"
        sub.mkdir(exist_ok=True)
        shutil.copyfile(source, sub / f"model-{i:04d}.gguf")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        top = Path(scratch)
        roots = [StoreRoot(StoreKind.USER, build(top, args.files))]
        index = top / "cache" / "library-index.pickle"
        counted = Counted()
        machine = replace(probe_hardware(), captured_at=time.time())
        first = LibrarySettings(machine, Budget.of(4 * GIB))
        print(f"{args.files} small header-only models ({next(roots[0].path.rglob('*.gguf')).stat().st_size:,} bytes each); "
              f"{os.cpu_count()} CPUs; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        cases = [
            ("first scan", first, True),
            ("unchanged rescan", first, True),
            ("machine probed again", replace(first, machine=replace(machine, host_available=_moved(machine.host_available),
                                                                    captured_at=time.time() + 60)), True),
            ("window, new budget", replace(first, budget=Budget.of(3 * GIB)), False),
        ]
        for label, settings, judge in cases:
            counted.headers = counted.judged = 0
            cpu, start = cpu_seconds(), time.perf_counter()
            result = scan(roots, counted.judge(settings), assess_key=assessment_key(settings), index=index, judge=judge)
            took, cpu = time.perf_counter() - start, cpu_seconds() - cpu
            assert result.complete and len(result.entries) == args.files
            assert all(e.error is None and (e.assessment is not None) == judge for e in result.entries)
            mark = f"  {cpu / BUDGET_S:5.2f}× the {BUDGET_S} s budget" if label != "first scan" else ""
            print(f"{label:<22} {took:7.3f} s wall {cpu:7.3f} s CPU ({cpu / args.files * 1000:6.3f} ms a model); "
                  f"headers read here {counted.headers:5d}, judged {counted.judged:5d}{mark}")
        print(f"load average after {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
