"""`tune`'s choice against the best of a measured sweep of the same knobs, with the real llama.cpp (issue #40).

Two runnable zero-weight llamas (`tests/runnable_model.py`: 2 and 8 layers) on this machine, CPU only. For each
model and ctx, every combination of the knobs `tune` searches that llama-completion takes — `-ctk/-ctv` f16 and q8_0
(with `-fa on`, which a quantized V cache needs) × `-ub` 256, 512 and 1024 — is run (`-n 512`, one thread, the median
of five rounds, each running every combination once): its decode tokens/s (llama.cpp's `eval time`) and its peak RSS (the child's own rusage). For the goals
`max-speed` and `least-memory` at that ctx, `tune` (on a hypothetical 8 GiB CPU-only machine) chooses one
combination; its measured objective is compared with the sweep's best. `-np` and `--cache-ram` are llama-server's
alone and stay at their defaults; `max-ctx` and `max-slots` are not measured here (a CPU-only run has no memory
ceiling to meet). A case passes when the chosen one is within 10 % of the best. Exit 1 if any case misses.

Run: .venv/bin/python benchmarks/tune_vs_sweep.py [--llama-bin DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import bench_shapes  # noqa: F401  (puts tests/ on sys.path)
from runnable_model import write_runnable_model

from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.explorer.tune import UBATCHES, Constraints, Goal, Knobs, tune
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.model.kv import KVType
from gguf_budget.core.model.loader import load_model

GiB = 1024**3
EVAL = re.compile(r"^.*\beval time = .*?([\d.]+) tokens per second", re.MULTILINE)
DEFAULT_BIN = Path.home() / ".cache/gguf-budget-ci/llama.cpp-0c1e570/bin"
CTXS = (1024, 4096)
LAYERS = (2, 8)
REPEATS = 5


def _flags(kv: KVType, ubatch: int) -> list[str]:
    quantized = ["-fa", "on"] if kv is not KVType.F16 else []
    return ["-ctk", kv.value, "-ctv", kv.value, *quantized, "-ub", str(ubatch)]


def _once(argv: list[str], tries: int = 3) -> tuple[str, int]:
    """One run: its log, and its own peak RSS in bytes (`os.wait4`'s rusage of that child alone). llama.cpp's
    logger writes from its own thread and now and then exits before the timings reach the log: such a run is
    run again (up to `tries` times)."""
    for _ in range(tries):
        with tempfile.TemporaryFile("w+", errors="replace") as log:
            child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
            log.seek(0)
            text = log.read()
        if child.returncode == 0 and EVAL.search(text):
            return text, usage.ru_maxrss * 1024
    raise SystemExit(f"no decode timing from {' '.join(argv)} (exit {child.returncode}):\n{text[-2000:]}")


def _sweep(binary: Path, model: Path, ctx: int) -> dict[tuple[KVType, int], tuple[float, int]]:
    """Every combination's (decode tok/s, peak RSS bytes), the medians of REPEATS rounds; each round runs every
    combination once, so a swing in the machine's load falls on all of them alike."""
    combos = [(kv, ub) for kv in (KVType.F16, KVType.Q8_0) for ub in UBATCHES]
    runs: dict[tuple[KVType, int], list[tuple[float, int]]] = {c: [] for c in combos}
    for _ in range(REPEATS):
        for kv, ub in combos:
            text, peak = _once([str(binary), "-m", str(model), "-c", str(ctx), *_flags(kv, ub), "-n", "512", "-p",
                                "hello", "-no-cnv", "--temp", "0", "-t", "1", "--no-warmup", "--ignore-eos"])
            runs[(kv, ub)].append((float(EVAL.findall(text)[-1]), peak))
    return {c: (statistics.median(r[0] for r in rs), int(statistics.median(r[1] for r in rs))) for c, rs in runs.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--llama-bin", type=Path, default=Path(os.environ.get("GGUF_BUDGET_LLAMA_BIN", DEFAULT_BIN)))
    args = ap.parse_args()
    folder = args.llama_bin if args.llama_bin.is_dir() else args.llama_bin.parent
    binary = folder / "llama-completion"
    machine = replace(hypothetical_machine(8 * GiB), cpu_features=frozenset())
    rows, misses = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for layers in LAYERS:
            path = write_runnable_model(Path(tmp) / f"tiny{layers}.gguf", layers)
            model = load_model(path)
            state = ExplorerState(model=model, machine=machine)
            for ctx in CTXS:
                sweep = _sweep(binary, path, ctx)
                for goal, index, better in ((Goal.MAX_SPEED, 0, max), (Goal.LEAST_MEMORY, 1, min)):
                    best = tune(model, state, goal, Constraints(min_ctx=ctx)).best
                    assert best is not None
                    knobs: Knobs = best.knobs
                    chosen = sweep[(knobs.kv, knobs.ubatch)][index]
                    top_key = better(sweep, key=lambda k: sweep[k][index])
                    top = sweep[top_key][index]
                    gap = (top - chosen) / top if goal is Goal.MAX_SPEED else (chosen - top) / top
                    misses += gap > 0.10
                    unit = (lambda v: f"{v:.0f} tok/s") if index == 0 else (lambda v: f"{v / 2**20:.1f} MiB")
                    rows.append(f"| tiny {layers}L | {ctx} | {goal.value} | {knobs.kv.value} ub {knobs.ubatch} | "
                                f"{unit(chosen)} | {top_key[0].value} ub {top_key[1]} | {unit(top)} | {gap * 100:+.1f} % |")
    print("| model | ctx | goal | tune chose | measured | sweep's best | measured | shortfall |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print(f"{len(rows) - misses}/{len(rows)} cases within 10 % of the sweep's best")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
