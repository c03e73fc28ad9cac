"""How long `gguf-budget tune` takes for large models on four GPUs, as whole processes: what a person waits for.

Budget: every goal answers in ≤ 2 s of CPU (user + sys of the child, from the kernel's accounting, which other
processes disturb less than wall time) for

    Llama-3.1-70B (the catalogue skeleton)      4 × 24 GiB
    Mixtral-8x22B-shaped, Q4_K (56 blocks)      4 × 16 GiB   (--n-cpu-moe and the -ot expert placement searched)
    Qwen3-235B-A22B-shaped, Q4_K (94 blocks)    4 × 24 GiB   (the same)

on a hypothetical machine with 256 GiB of host RAM (64 GiB for the 70B), `--no-measure`; max-speed at the default
floors, the other goals at ≥ 1.5 tok/s. The MoE shapes are written as sparse files (`bench_shapes`) in a scratch
folder. Each command runs `--runs` times (median quoted) after one warm-up, the commands taking turns.
`--compare PYTHON` runs the same commands with another checkout's interpreter (`PYTHON -m gguf_budget.gui.cli`) in
the same minutes, each beside this one: on a shared machine only figures taken together compare. The load average is
printed before and after. Exit 1 when a median is over the budget.

Run: `python benchmarks/bench_tune.py [--runs N] [--compare OTHER/.venv/bin/python]`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from bench_cli import APP_FOLDERS, _entry
from bench_shapes import MIXTRAL_8X22B, QWEN3_235B_A22B
from gguf_factory import write_gguf

BUDGET_S = 2.0
GOALS = ("max-speed", "max-ctx", "max-slots", "least-memory")


@dataclass
class Case:
    name: str
    args: list[str]
    cpu: dict[str, list[float]] = field(default_factory=dict)
    priced: dict[str, int] = field(default_factory=dict)


def cases(scratch: Path) -> list[Case]:
    models = []
    for name, desc, gpu in (("Mixtral-8x22B", MIXTRAL_8X22B, "16G"), ("Qwen3-235B-A22B", QWEN3_235B_A22B, "24G")):
        path = write_gguf(scratch / f"{name}.gguf", desc, "sparse")[0]
        models.append((name, [str(path), "--host-available", "256G", "--gpu-total", gpu]))
    models.insert(0, ("70B", ["--catalog", "llama-3.1-70b-instruct", "--host-available", "64G", "--gpu-total", "24G"]))
    return [Case(f"{name} {goal}", [*args, "--gpu-count", "4", "--no-measure", "--goal", goal,
                                    *([] if goal == "max-speed" else ["--min-tok-s", "1.5"]), "--json"])
            for name, args in models for goal in GOALS]


def run_once(case: Case, label: str, app: list[str], env: dict[str, str]) -> None:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([*app, "tune", *case.args], capture_output=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 3) or b"Traceback" in done.stderr:
        raise SystemExit(f"{case.name} failed ({done.returncode}): {done.stderr.decode(errors='replace')[-800:]}")
    case.cpu.setdefault(label, []).append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    case.priced[label] = json.loads(done.stdout)["priced"]


def report(all_cases: list[Case], labels: list[str], load: tuple[tuple[float, ...], ...], runs: int) -> str:
    lines = [f"gguf-budget tune, whole processes, median CPU s (user+sys of the child) of {runs}; "
             f"full loads priced in parentheses; budget {BUDGET_S:g} s",
             f"load average before {' '.join(f'{x:.2f}' for x in load[0])}; after "
             f"{' '.join(f'{x:.2f}' for x in load[1])}; {os.cpu_count()} CPUs",
             f"{'case':<30}" + "".join(f"{label:>18}" for label in labels) + f"{'ratio':>8}"]
    for case in all_cases:
        cells = "".join(f"{statistics.median(case.cpu[label]):10.2f} s ({case.priced[label]:3d})" for label in labels)
        lines.append(f"{case.name:<30}{cells}{statistics.median(case.cpu['this']) / BUDGET_S:7.2f}×")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="counted runs per command (default 3)")
    parser.add_argument("--compare", metavar="PYTHON", help="another checkout's interpreter, run beside this one")
    args = parser.parse_args()
    apps = {"this": _entry()}
    if args.compare:
        apps["other"] = [args.compare, "-m", "gguf_budget.gui.cli"]
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        env = {**os.environ, "NO_COLOR": "1", **{variable: str(scratch / variable) for variable in APP_FOLDERS}}
        all_cases = cases(scratch)
        before = os.getloadavg()
        for case in all_cases:
            for label, app in apps.items():
                run_once(case, label, app, env)  # warm-up: page cache, compiled bytecode
                case.cpu[label].clear()
        for _ in range(args.runs):
            for case in all_cases:
                for label, app in apps.items():
                    run_once(case, label, app, env)
        print(report(all_cases, list(apps), (before, os.getloadavg()), args.runs))
    return 1 if any(statistics.median(c.cpu["this"]) > BUDGET_S for c in all_cases) else 0


if __name__ == "__main__":
    sys.exit(main())
