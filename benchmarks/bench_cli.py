"""How long the command line takes, as whole processes: what a person waits for after pressing Enter.

Each command runs `--runs` times (median quoted) after one warm-up, the commands taking turns so
a machine that slows down slows them all alike. Two figures per command: wall time, and CPU time
(user + sys of the child, from the kernel's accounting), which other processes disturb less.
Each is printed beside a bare interpreter (`python -c pass`) and as a ratio to its budget:

    --version, help        ≤ 150 ms wall, ≤ 120 ms CPU over the bare interpreter
    plan, fit (8B header)  ≤ 350 ms wall, ≤ 300 ms CPU over the bare interpreter
    inspect --json         ≤ 300 ms wall

The model is the bundled Llama-3.1-8B catalogue skeleton. `plan` and `fit` run as a person's
second call does: the warm-up run measures this machine's bandwidths once and keeps them (in a
scratch data folder, never the user's), the counted runs reuse them; `--no-measure` passes that
flag instead. The load average is printed before and after: on a busy machine quote the CPU column.

Run: `python benchmarks/bench_cli.py [--runs N] [--no-measure]`.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

MODEL = ["--catalog", "llama-3.1-8b-instruct"]
APP_FOLDERS = ("GGUF_BUDGET_DATA_DIR", "GGUF_BUDGET_CONFIG_DIR", "GGUF_BUDGET_CACHE_DIR")
BASELINE = "python -c pass"


@dataclass
class Case:
    name: str
    argv: list[str]
    wall_budget_ms: float | None
    cpu_over_bare_budget_ms: float | None
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def _entry() -> list[str]:
    """The console script a person runs, beside this interpreter; else the module."""
    script = shutil.which("gguf-budget", path=os.path.dirname(sys.executable))
    return [script] if script else [sys.executable, "-m", "gguf_budget.gui.cli"]


def cases(no_measure_flag: bool) -> list[Case]:
    app = _entry()
    no_measure = ["--no-measure"] if no_measure_flag else []
    return [
        Case(BASELINE, [sys.executable, "-c", "pass"], None, None),
        Case("--version", [*app, "--version"], 150, 120),
        Case("help", [*app, "help"], 150, 120),
        Case("plan 8B --budget 6G", [*app, "plan", *MODEL, "--budget", "6G", *no_measure], 350, 300),
        Case("fit 8B", [*app, "fit", *MODEL, *no_measure], 350, 300),
        Case("inspect 8B --json", [*app, "inspect", *MODEL, "--json"], 300, None),
        Case("bad argument", [*app, "plan", *MODEL, "--budget", "lots"], None, None),
    ]


def run_once(case: Case, env: dict[str, str]) -> None:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(case.argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 2, 3) or b"Traceback" in done.stderr:
        raise SystemExit(f"{case.name} failed ({done.returncode}): {done.stderr.decode(errors='replace')[-800:]}")
    case.wall.append(wall * 1000)
    case.cpu.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)


def _ratio(value: float, budget: float | None) -> str:
    return f"{value / budget:5.2f}×" if budget else "     "


def report(all_cases: list[Case], load_before: tuple[float, ...], load_after: tuple[float, ...], runs: int) -> str:
    bare_wall = statistics.median(all_cases[0].wall)
    bare_cpu = statistics.median(all_cases[0].cpu)
    lines = [f"gguf-budget whole-process timings, median of {runs} (CPU = user+sys of the child)",
             f"load average before {' '.join(f'{x:.2f}' for x in load_before)}; "
             f"after {' '.join(f'{x:.2f}' for x in load_after)}; {os.cpu_count()} CPUs",
             f"{'command':<22}{'wall ms':>9}{'× bare':>8}{'budget':>8}{'ratio':>8}   "
             f"{'CPU ms':>8}{'over bare':>10}{'budget':>8}{'ratio':>8}   {'wall min–max':>14}"]
    for case in all_cases:
        wall, cpu = statistics.median(case.wall), statistics.median(case.cpu)
        over = cpu - bare_cpu
        wall_budget = f"{case.wall_budget_ms:.0f}" if case.wall_budget_ms else "-"
        cpu_budget = f"{case.cpu_over_bare_budget_ms:.0f}" if case.cpu_over_bare_budget_ms else "-"
        lines.append(f"{case.name:<22}{wall:9.0f}{wall / bare_wall:7.1f}×{wall_budget:>8}{_ratio(wall, case.wall_budget_ms):>8}   "
                     f"{cpu:8.0f}{over:10.0f}{cpu_budget:>8}{_ratio(over, case.cpu_over_bare_budget_ms):>8}   "
                     f"{min(case.wall):6.0f}–{max(case.wall):<6.0f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7, help="counted runs per command (default 7, at least 5 to quote)")
    parser.add_argument("--no-measure", action="store_true", help="pass --no-measure to plan and fit")
    args = parser.parse_args()
    all_cases = cases(args.no_measure)
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "NO_COLOR": "1", **{variable: str(Path(scratch) / variable) for variable in APP_FOLDERS}}
        load_before = os.getloadavg()
        for case in all_cases:
            run_once(case, env)  # warm-up: page cache, compiled bytecode, the kept bandwidths
            case.wall.clear()
            case.cpu.clear()
        for _ in range(args.runs):
            for case in all_cases:
                run_once(case, env)
    print(report(all_cases, load_before, os.getloadavg(), args.runs))


if __name__ == "__main__":
    main()
