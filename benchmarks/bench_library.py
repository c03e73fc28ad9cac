"""The library scan of 1,000 Llama-3-8B-shaped model files: first scan, unchanged rescan, one changed file.

The files are header-only Llama-3-8B-shaped GGUFs (128,256 tokens and 280,147 merges in the header,
~8 MB each, written by `tests/gguf_factory.py`): half in a Hugging Face cache layout (snapshot links
into blobs), half in an added folder, so the scan walks both layouts. By default they are hard links
of one file, so the tree costs ~8 MB of disk; each path is still read and parsed on its own
(`--copies` writes 1,000 real copies, ~8 GB). Each model is judged as the library judges it (full
load and budget plan on this machine), with a persistent index in a scratch folder.

Budgets: first scan ≤ 10 s, unchanged rescan ≤ 0.3 s, one changed file rescanned ≤ 0.35 s.
Also shown: a rescan after the machine was probed again (every kept model judged again, no header
read). The load average is printed: on a busy machine these are upper figures.

Run: `python benchmarks/bench_library.py [--files N] [--copies] [--workers N]`.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import time
from functools import partial
from pathlib import Path

from bench_shapes import LLAMA3_8B
from gguf_factory import write_gguf

from gguf_budget.core.fit.types import DEFAULT_HOST_RESERVE
from gguf_budget.core.library.assess import LibrarySettings, assess, assessment_key
from gguf_budget.core.library.index import load_index
from gguf_budget.core.library.scan import scan
from gguf_budget.core.library.stores import store_roots
from gguf_budget.core.machine.probe import probe_hardware

BUDGETS = {"first scan": 10.0, "unchanged rescan": 0.3, "one changed file": 0.35}


def build_tree(top: Path, n: int, copies: bool) -> tuple[Path, Path, list[Path]]:
    """(home with a Hugging Face cache, the added folder, every model path) for `n` models."""
    (top / "source").mkdir()
    source = write_gguf(top / "source" / "llama3-8b.gguf", LLAMA3_8B, "header_only")[0]
    place = shutil.copyfile if copies else os.link
    home, mine = top / "home", top / "mine"
    hub = home / ".cache" / "huggingface" / "hub"
    paths = []
    for i in range(n):
        if i % 2:
            repo = hub / f"models--owner--repo{i}"
            (repo / "blobs").mkdir(parents=True)
            (repo / "snapshots" / "rev").mkdir(parents=True)
            place(source, repo / "blobs" / "blob")
            os.symlink("../../blobs/blob", repo / "snapshots" / "rev" / "llama3-8b-Q4_K_M.gguf")
            paths.append(repo / "snapshots" / "rev" / "llama3-8b-Q4_K_M.gguf")
        else:
            folder = mine / f"d{i // 50}"
            folder.mkdir(parents=True, exist_ok=True)
            place(source, folder / f"{i}-llama3-8b.gguf")
            paths.append(folder / f"{i}-llama3-8b.gguf")
    return home, mine, paths


def settings() -> LibrarySettings:
    machine = probe_hardware()
    return LibrarySettings(machine, max(machine.host_available - DEFAULT_HOST_RESERVE, 1))


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the scan's worker processes)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(label: str, run) -> float:
    cpu = cpu_seconds()
    start = time.perf_counter()
    result = run()
    took = time.perf_counter() - start
    cpu = cpu_seconds() - cpu
    errors = sum(1 for e in result.entries if e.error)
    budget = BUDGETS.get(label)
    ratio = f"  {took / budget:5.2f}× the {budget:g} s budget" if budget else ""
    print(f"{label:<22} {took:8.3f} s wall {cpu:8.3f} s CPU ({cpu / len(result.entries) * 1000:6.2f} ms per file)"
          f"{ratio}")
    assert result.complete and errors == 0
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--copies", action="store_true", help="write real copies instead of hard links (~8 MB each)")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: the scan's own choice)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        top = Path(scratch)
        home, mine, paths = build_tree(top, args.files, args.copies)
        index = top / "cache" / "library-index.pickle"
        roots = store_roots(home, {}, [mine])
        judged_by = settings()
        print(f"{args.files} Llama-3-8B-shaped header-only files ({paths[0].stat().st_size / 2**20:.1f} MiB each, "
              f"{'copies' if args.copies else 'hard links'}); {os.cpu_count()} CPUs; "
              f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

        def run(chosen: LibrarySettings):
            return scan(roots, partial(assess, settings=chosen), assess_key=assessment_key(chosen), index=index,
                        workers=args.workers)

        timed("first scan", lambda: run(judged_by))
        print(f"{'':<22} index {index.stat().st_size / 2**20:.1f} MiB for {len(load_index(index))} files")
        timed("unchanged rescan", lambda: run(judged_by))
        changed = paths[len(paths) // 2]
        fresh = changed.with_name("fresh.tmp")
        shutil.copyfile(changed, fresh)
        os.replace(fresh, changed.resolve())
        timed("one changed file", lambda: run(judged_by))
        timed("machine probed again", lambda: run(settings()))
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak RSS of this process {peak:.0f} MiB; load average after "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
