"""Fuzz four surfaces a file brings in — GGUF headers, llama.cpp logs, settings files, evidence records — and
count what came out (issue 24).

The inputs are drawn from seeds by `tests/fuzz_io.py` (structure-aware: real headers, real logs, the
window's own settings file, real records, hostile where it matters). Worker processes run them in
batches, each worker under a memory limit (RLIMIT_AS) and each input under an alarm; every input ends
as ok, one_line (a project error of one line), traceback, hang or over_limit. A worker that dies (Qt
reading a settings file can crash the process) breaks its batch: each input of that batch is then run
alone in a child process, and one that kills its child is counted as a traceback (a crash). The last
three outcomes must be 0. A finding prints its seed: `--replay SURFACE:SEED` runs that one input again.

Run: QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/fuzz_io.py [--header N] [--log N]
     [--settings N] [--record N] [--workers N] [--memory 2G] [--seed 0]
"""

from __future__ import annotations

import argparse
import logging
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from fuzz_io import RUNS, SURFACES, Context  # noqa: E402
from fuzz_net_facts import OUTCOMES  # noqa: E402

BAD = ("traceback", "hang", "over_limit")
DEFAULTS = {"header": 10_000, "log": 10_000, "settings": 6_000, "record": 6_000}


def _worker(limit: int) -> None:
    """Each worker: its memory limit, and no log lines (a refused settings value logs one)."""
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    logging.disable(logging.CRITICAL)


def _batch(surface: str, seeds: list[int]) -> tuple[Counter[str], list[tuple[int, str, str]], float, int]:
    """Run `seeds` of one surface in this worker: the outcome counts, the findings, CPU seconds, peak RSS (KiB)."""
    counts: Counter[str] = Counter()
    findings: list[tuple[int, str, str]] = []
    started = time.process_time()
    with tempfile.TemporaryDirectory(prefix=f"fuzz-io-{surface}-") as tmp:
        context = Context.make(Path(tmp), (surface,))
        for seed in seeds:
            outcome = RUNS[surface](seed, context)
            counts[outcome.kind] += 1
            if outcome.kind in BAD:
                findings.append((seed, outcome.kind, outcome.detail))
    return counts, findings, time.process_time() - started, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _alone(surface: str, seed: int, memory: int) -> tuple[str, str]:
    """One input in a child process of its own (after a worker died): its outcome, or the signal that killed it."""
    done = subprocess.run([sys.executable, __file__, "--replay", f"{surface}:{seed}", "--memory", str(memory)],
                          capture_output=True, text=True, timeout=300)
    if done.returncode < 0:
        return "traceback", f"the process was killed by signal {-done.returncode}"
    last = (done.stdout.strip().splitlines() or ["traceback"])[-1]
    kind = last.split(" ", 1)[0]
    return (kind, last) if kind in OUTCOMES else ("traceback", done.stderr[-300:])


def main() -> int:
    ap = argparse.ArgumentParser()
    for surface in SURFACES:
        ap.add_argument(f"--{surface}", type=int, default=DEFAULTS[surface], help=f"{surface} inputs")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--memory", type=int, default=2 << 30, help="bytes of address space per worker")
    ap.add_argument("--seed", type=int, default=0, help="the first seed")
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--replay", metavar="SURFACE:SEED")
    args = ap.parse_args()
    if args.replay:
        surface, seed = args.replay.split(":")
        _worker(args.memory)
        counts, findings, _, _ = _batch(surface, [int(seed)])
        kind = next(iter(counts))
        print(f"{kind} {findings[0][2] if findings else ''}")
        return 0
    jobs = [(surface, list(range(start, min(start + args.batch, args.seed + getattr(args, surface)))))
            for surface in SURFACES for start in range(args.seed, args.seed + getattr(args, surface), args.batch)]
    totals = {surface: Counter[str]() for surface in SURFACES}
    findings: list[tuple[str, int, str, str]] = []
    busy = dict.fromkeys(SURFACES, 0.0)
    peak_kib = 0
    broken: list[tuple[str, list[int]]] = []
    started = time.perf_counter()
    pending = list(jobs)
    while pending:
        with ProcessPoolExecutor(args.workers, initializer=_worker, initargs=(args.memory,)) as pool:
            futures: list[tuple[str, list[int], Future]] = [(s, seeds, pool.submit(_batch, s, seeds)) for s, seeds in pending]
            pending = []
            for surface, seeds, future in futures:
                try:
                    counts, found, seconds, rss = future.result()
                except BrokenProcessPool:
                    broken.append((surface, seeds))
                    continue
                totals[surface].update(counts)
                findings += [(surface, *f) for f in found]
                busy[surface] += seconds
                peak_kib = max(peak_kib, rss)
        for surface, seeds in broken:
            for seed in seeds:  # a dead worker: each input of its batch alone, so the killer is named
                kind, detail = _alone(surface, seed, args.memory)
                totals[surface][kind] += 1
                if kind in BAD:
                    findings.append((surface, seed, kind, detail))
        broken = []
    wall = time.perf_counter() - started
    print(f"{'surface':9} {'inputs':>7} " + " ".join(f"{k:>10}" for k in OUTCOMES) + f" {'CPU s/input':>12}")
    for surface, counts in totals.items():
        n = sum(counts.values())
        print(f"{surface:9} {n:>7,} " + " ".join(f"{counts[k]:>10,}" for k in OUTCOMES)
              + f" {busy[surface] / max(n, 1):>12.4f}")
    total = sum(sum(c.values()) for c in totals.values())
    print(f"{total:,} inputs; wall {wall:.0f} s on {args.workers} workers; memory limit {args.memory >> 20} MiB per "
          f"worker, peak worker RSS {peak_kib >> 10} MiB; load average {os.getloadavg()[0]:.2f}")
    for surface, seed, kind, detail in findings[:50]:
        print(f"FINDING {surface}:{seed} {kind}: {detail}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
