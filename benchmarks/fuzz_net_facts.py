"""Fuzz two hostile surfaces — HTTP answers and header facts — and count what came out (issue 24).

The inputs are drawn from seeds by `tests/fuzz_net_facts.py` (structure-aware: real GGUF bytes,
real HTTP framing, hostile where it matters). Worker processes run them, each under a memory
limit (RLIMIT_AS) and a per-input alarm; every input ends as ok, one_line (a project error of one
line), traceback, hang or over_limit (memory, requests or counted work past the limits). The last
three must be 0; s/input is a worker's wall time per input. A finding prints its seed: `--replay SURFACE:SEED` runs that one input again.

Run: .venv/bin/python benchmarks/fuzz_net_facts.py [--http 20000] [--facts 20000] [--workers N]
     [--memory 2G] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fuzz_net_facts import OUTCOMES, FuzzServer, run_facts, run_http  # noqa: E402

BAD = ("traceback", "hang", "over_limit", "harness_error")


def _limit_memory(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _batch(surface: str, seeds: list[int]) -> tuple[Counter[str], list[tuple[int, str, str]], int, float]:
    """Run `seeds` of one surface in this worker: the outcome counts, the findings, the most requests."""
    counts: Counter[str] = Counter()
    findings: list[tuple[int, str, str]] = []
    most = 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"fuzz-{surface}-") as tmp:
        folder = Path(tmp)
        server = FuzzServer() if surface == "http" else None
        if server is not None:
            os.environ["HF_ENDPOINT"], os.environ["HF_TOKEN"] = server.endpoint, "hf_fuzz_token"
        for seed in seeds:
            try:
                outcome = run_http(seed, server, folder) if server is not None else run_facts(seed, folder)
            except Exception as e:  # noqa: BLE001 - the harness itself failed on this seed: say so, go on
                counts["harness_error"] += 1
                findings.append((seed, "harness_error", f"{type(e).__name__}: {e}"[:300]))
                continue
            counts[outcome.kind] += 1
            most = max(most, outcome.requests)
            if outcome.kind in BAD:
                findings.append((seed, outcome.kind, outcome.detail))
    return counts, findings, most, time.perf_counter() - started


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--http", type=int, default=20000, help="HTTP inputs")
    ap.add_argument("--facts", type=int, default=20000, help="header-facts inputs")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--memory", type=int, default=2 << 30, help="bytes of address space per worker")
    ap.add_argument("--seed", type=int, default=0, help="the first seed")
    ap.add_argument("--batch", type=int, default=250)
    ap.add_argument("--replay", metavar="SURFACE:SEED")
    args = ap.parse_args()
    if args.replay:
        surface, seed = args.replay.split(":")
        counts, findings, _, _ = _batch(surface, [int(seed)])
        print(dict(counts), findings)
        return 0
    jobs = [(surface, list(range(start, min(start + args.batch, args.seed + n))))
            for surface, n in (("http", args.http), ("facts", args.facts))
            for start in range(args.seed, args.seed + n, args.batch)]
    totals = {surface: Counter[str]() for surface in ("http", "facts")}
    findings: list[tuple[str, int, str, str]] = []
    most, busy = 0, {"http": 0.0, "facts": 0.0}
    started = time.perf_counter()
    with ProcessPoolExecutor(args.workers, initializer=_limit_memory, initargs=(args.memory,)) as pool:
        futures = [(surface, pool.submit(_batch, surface, seeds)) for surface, seeds in jobs]
        for done, (surface, future) in enumerate(futures, 1):
            counts, found, requests, seconds = future.result()
            totals[surface].update(counts)
            findings += [(surface, *f) for f in found]
            most, busy[surface] = max(most, requests if surface == "http" else most), busy[surface] + seconds
            print(f"batch {done}/{len(futures)} {surface}: {dict(counts)}", flush=True)
    wall = time.perf_counter() - started
    print(f"{'surface':8} {'inputs':>7} " + " ".join(f"{k:>10}" for k in OUTCOMES) + f" {'s/input':>12}")
    for surface, counts in totals.items():
        n = sum(counts.values())
        if counts["harness_error"]:
            print(f"{surface}: {counts['harness_error']} inputs the harness itself could not make")
        print(f"{surface:8} {n:>7,} " + " ".join(f"{counts[k]:>10,}" for k in OUTCOMES)
              + f" {busy[surface] / max(n, 1):>12.4f}")
    print(f"most requests for one HTTP input: {most}; wall {wall:.0f} s on {args.workers} workers, "
          f"memory limit {args.memory >> 20} MiB per worker")
    for surface, seed, kind, detail in findings[:50]:
        print(f"FINDING {surface}:{seed} {kind}: {detail}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
