"""`tune`'s choice against the best of a measured sweep of the same knobs, with the real llama.cpp (issue #40).

Models: the two real small models (smollm2-135m Q4_1, gemma3-270m Q4_K_M; `--models DIR`) and one zero-weight larger
shape (`mid8` of tests/runnable_model.py — 8 blocks of 1024, a 32,000-token vocabulary, Q8_0 — with a 32,768-token
context). The machine is CPU only; each case's is hypothetical: RAM of the case's ceiling, of which the host reserve
is the program's own resident memory as the peak-RSS band prices it (`runtime_memory.process_bytes`: the program's
constant and 149 bytes per vocabulary token — 26 MiB for llama-server with smollm2, 56 MiB with gemma3) — the
verdict prices the model's buffers and leaves the program's code, stacks and allocator to the reserve (6 GiB by
default on a real machine).

Goals, each case priced by `tune` and measured with the command it prints, against every combination of the sweep:
- max-speed / least-memory (llama-completion, ctx 4096): `-ctk/-ctv` f16, q8_0 × `-fa` on, off (f16) × `-ub` 256,
  512, 1024; decode tok/s as tokens per CPU second of the decode (`_speed_case`: wall time on a shared machine
  swings by a third between identical runs), the best of REPEATS interleaved rounds, and peak RSS (rusage). The runtime priced is llama-completion's, which has no prompt cache or checkpoints.
- max-ctx (llama-server, a RAM ceiling): `-c` on a grid × `-ctk/-ctv` × `-ub` 256, 512, with `--cache-ram 0`; the
  sweep's best is the largest ctx whose measured peak RSS (VmHWM after one request) is within the ceiling and
  whose decode (tokens per CPU second, `_server`) meets the floor. tune's command is run as printed (its own ctx, cache, ubatch).
- max-slots (llama-server, a RAM ceiling, `--min-ctx` per slot): `-np N -c N·min_ctx` × `-ctk/-ctv`, with
  `--cache-ram 0`; RSS read after every slot has served one request (`id_slot`).
A case passes when the chosen command's measured objective is within 10 % of the sweep's best (a chosen command
whose measured RSS is over the ceiling, or whose decode is under the floor, scores 0). Every llama.cpp run holds
an exclusive flock on LOCK (so runs never overlap other benchmarks') and runs at nice 10, one thread.
Exit 1 if any case misses.

Run: .venv/bin/python benchmarks/tune_vs_sweep.py [--llama-bin DIR] [--models DIR] [--only NAME] [--goals G,G]
"""

from __future__ import annotations

import argparse
import fcntl
import http.client
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import bench_shapes  # noqa: F401  (puts tests/ on sys.path)
from gguf_factory import write_gguf
from runnable_model import multi_device_descs

from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.explorer.tune import Constraints, Goal, TuneAnswer, tune
from gguf_budget.core.fit.runtime_memory import process_bytes
from gguf_budget.core.fit.runtime_types import Runtime
from gguf_budget.core.fit.server.types import ServerSettings
from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.llama_words.programs import for_program
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.model.loader import load_model
from gguf_budget.core.model.spec import ModelSpec

MiB = 1024**2
EVAL = re.compile(r"^.*\beval time = .*?([\d.]+) tokens per second", re.MULTILINE)
DEFAULT_BIN = Path.home() / ".cache/gguf-budget-ci/llama.cpp-0c1e570/bin"
LOCK = Path(os.environ.get("GGUF_BUDGET_LLAMA_LOCK", "/work/llama.lock"))
REPEATS = 3
SHORT, DECODED = 8, 128
SERVED = 32
SPEED_CTX = 4096
RUN = ["-t", "1", "--temp", "0"]
SWEEPS: dict[object, dict[str, list[tuple[float, int]]]] = {}
"""The speed sweeps measured so far, by model and ctx: max-speed and least-memory share one."""
COMBOS = (("f16", None), ("f16", "off"), ("q8_0", None))  # (-ctk/-ctv, -fa): auto is on for llama.cpp's programs


@dataclass(frozen=True)
class Case:
    model: str
    goal: Goal
    ceiling_mib: int = 8192
    min_ctx: int = SPEED_CTX
    min_tok_s: float = 0.0
    grid: tuple[int, ...] = ()
    """max-ctx: the ctx values swept; max-slots: the slot counts."""


CASES = (
    Case("smollm2", Goal.MAX_SPEED), Case("smollm2", Goal.LEAST_MEMORY),
    Case("smollm2", Goal.MAX_CTX, 205, 1024, 5.0, tuple(range(2048, 8193, 512))),
    Case("smollm2", Goal.MAX_CTX, 230, 1024, 5.0, tuple(range(2048, 8193, 1024))),
    Case("smollm2", Goal.MAX_CTX, 280, 1024, 5.0, tuple(range(2048, 8193, 1024))),
    Case("smollm2", Goal.MAX_SLOTS, 330, 2048, 0.0, tuple(range(1, 10))),
    Case("gemma3", Goal.MAX_SPEED), Case("gemma3", Goal.LEAST_MEMORY),
    Case("gemma3", Goal.MAX_CTX, 340, 1024, 5.0, tuple(range(8192, 32769, 4096))),
    Case("gemma3", Goal.MAX_SLOTS, 400, 8192, 0.0, tuple(range(1, 10))),
    Case("mid8", Goal.MAX_CTX, 300, 1024, 0.0, tuple(range(8192, 32769, 2048))),
)


@contextmanager
def _locked() -> Iterator[None]:
    """One llama.cpp run at a time on this machine (every benchmark takes the same lock)."""
    with LOCK.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _nice() -> None:
    os.nice(10)


def _completion(argv: list[str], tries: int = 3) -> tuple[float, int]:
    """One llama-completion run: its CPU seconds (user + system, `os.wait4`'s rusage of that child alone) and its
    own peak RSS. Its logger thread now and then exits before the timings reach the log: such a run is run again."""
    for _ in range(tries):
        with tempfile.TemporaryFile("w+", errors="replace") as log, _locked():
            child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, preexec_fn=_nice)
            _, status, usage = os.wait4(child.pid, 0)
            log.seek(0)
            text = log.read()
        if os.waitstatus_to_exitcode(status) == 0 and EVAL.search(text):
            return usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024
    raise SystemExit(f"no decode timing from {shlex.join(argv)}:\n{text[-2000:]}")


def _post(port: int, body: dict[str, object]) -> dict[str, object]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    conn.request("POST", "/completion", json.dumps(body), {"Content-Type": "application/json"})
    answer = json.loads(conn.getresponse().read())
    conn.close()
    return answer  # type: ignore[no-any-return]


def _cpu_seconds(pid: int) -> float:
    """The process's user + system CPU seconds so far (/proc/PID/stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _server(argv: list[str], slots: int) -> tuple[float, int]:
    """llama-server as asked: every slot serves one short request (SERVED tokens); its decode speed as tokens per
    CPU second of the slowest request (as `_speed_case`'s: wall time swings with others' load) and the process's
    peak RSS (VmHWM) after them."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryFile("w+", errors="replace") as log, _locked():
        child = subprocess.Popen([*argv, "--port", str(port), "--no-warmup"], stdin=subprocess.DEVNULL, stdout=log,
                                 stderr=log, preexec_fn=_nice)
        try:
            for _ in range(600):
                time.sleep(0.2)
                if child.poll() is not None:
                    log.seek(0)
                    raise SystemExit(f"llama-server exited: {shlex.join(argv)}\n{log.read()[-2000:]}")
                try:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                    conn.request("GET", "/health")
                    if conn.getresponse().status == 200:
                        break
                except OSError:
                    continue
            speed = float("inf")
            for slot in range(slots):
                before = _cpu_seconds(child.pid)
                _post(port, {"prompt": "hello", "n_predict": SERVED, "id_slot": slot, "temperature": 0,
                             "ignore_eos": True, "cache_prompt": False})
                speed = min(speed, SERVED / max(_cpu_seconds(child.pid) - before, 1e-3))
            status = Path(f"/proc/{child.pid}/status").read_text()
            peak = int(re.search(r"VmHWM:\s+(\d+) kB", status)[1]) * 1024  # type: ignore[index]
        finally:
            child.terminate()
            child.wait()
    return speed, peak


def _state(model: ModelSpec, case: Case) -> ExplorerState:
    """The case's machine: RAM of its ceiling, the program's own resident memory held back as the host reserve."""
    machine = replace(hypothetical_machine(case.ceiling_mib * MiB), cpu_features=None)
    runtime = Runtime.LLAMA_COMPLETION if case.goal in (Goal.MAX_SPEED, Goal.LEAST_MEMORY) else Runtime.LLAMA_SERVER
    server = ServerSettings(cache_ram_mib=0, ctx_checkpoints=0) if runtime is Runtime.LLAMA_COMPLETION else ServerSettings()
    return ExplorerState(model=model, machine=machine, reserves=Reserves(host=process_bytes(model, runtime)), runtime=runtime, server=server)


def _chosen(binary: Path, answer: TuneAnswer, runtime: Runtime) -> list[str]:
    """The command tune printed, for `runtime`, run from `binary`'s folder."""
    assert answer.best is not None and answer.best.load.fit.command is not None
    argv = shlex.split(for_program(answer.best.load.fit.command.argv, runtime).text)
    return [str(binary / argv[0]), *argv[1:], *RUN]


def _flags(kv: str, fa: str | None, ub: int) -> list[str]:
    return ["-ctk", kv, "-ctv", kv, *(["-fa", fa] if fa else []), "-ub", str(ub)]


def _speed_case(binary: Path, path: Path, case: Case, answer: TuneAnswer) -> tuple[str, float, str, float, str]:
    """max-speed / least-memory: every combination and the chosen command, REPEATS interleaved rounds. Decode speed
    is DECODED tokens over the CPU seconds they add (a run of SHORT + DECODED tokens less one of SHORT, one thread):
    on a shared machine wall time swings by a third between identical runs, CPU time much less. The least per
    combination is kept (the run least slowed by others' use of the caches), and the least peak RSS."""
    runs = SWEEPS.setdefault((path, case.min_ctx), {})
    tail = ["-p", "hello", "-no-cnv", "--no-warmup", "--ignore-eos", *RUN]
    argvs = {f"{kv}{' fa ' + fa if fa else ''} ub {ub}": [str(binary / "llama-completion"), "-m", str(path), "-c",
                                                          str(case.min_ctx), *_flags(kv, fa, ub), *tail]
             for kv, fa in COMBOS for ub in (256, 512, 1024)}
    chosen = [*_chosen(binary, answer, Runtime.LLAMA_COMPLETION), *tail]
    argvs["tune"] = chosen
    if runs:  # the sweep was measured for the other goal: only this goal's chosen command is run again
        argvs, runs["tune"] = {"tune": chosen}, []
    for _ in range(REPEATS):
        for name, argv in argvs.items():
            short, peak = _completion([*argv, "-n", str(SHORT)])
            long, _ = _completion([*argv, "-n", str(SHORT + DECODED)])
            runs.setdefault(name, []).append((DECODED / max(long - short, 1e-3), peak))
    index = 0 if case.goal is Goal.MAX_SPEED else 1
    figure = {n: (max if index == 0 else min)(r[index] for r in rs) for n, rs in runs.items()}
    sweep = {n: v for n, v in figure.items() if n != "tune"}
    top = (max if case.goal is Goal.MAX_SPEED else min)(sweep, key=sweep.__getitem__)
    gap = (sweep[top] - figure["tune"]) / sweep[top] if index == 0 else (figure["tune"] - sweep[top]) / sweep[top]
    unit = (lambda v: f"{v:.1f} tok/s") if index == 0 else (lambda v: f"{v / MiB:.1f} MiB")
    print("   sweep:", "; ".join(f"{n} {unit(v)}" for n, v in figure.items()), file=sys.stderr)
    return unit(figure["tune"]), gap, top, sweep[top], unit(sweep[top])


def _ceiling_case(binary: Path, path: Path, case: Case, answer: TuneAnswer) -> tuple[str, float, str, float, str]:
    """max-ctx / max-slots: the sweep's largest ctx (slots) within the ceiling and the floor, against the chosen."""
    assert answer.best is not None
    server = [str(binary / "llama-server"), "-m", str(path), "--cache-ram", "0", *RUN]
    slots = case.goal is Goal.MAX_SLOTS

    def fits(speed: float, peak: int) -> bool:
        return peak <= case.ceiling_mib * MiB and speed >= case.min_tok_s

    best, label = 0, "none"
    for kv in ("f16", "q8_0"):
        for ub in ((512,) if slots else (256, 512)):
            for n in case.grid:
                ctx, np = (n * case.min_ctx, n) if slots else (n, 1)
                speed, peak = _server([*server, "-c", str(ctx), "-np", str(np), *_flags(kv, None, ub)], np)
                if not fits(speed, peak):
                    break  # RSS grows with ctx and slots: the rest of this row is over the ceiling too
                if n > best:
                    best, label = n, f"{kv} ub {ub} {'-np' if slots else '-c'} {n}"
    chosen = answer.best.slots if slots else answer.best.ctx
    speed, peak = _server(_chosen(binary, answer, Runtime.LLAMA_SERVER), answer.best.slots)
    ok = fits(speed, peak)
    measured = f"{chosen if ok else 0} ({peak / MiB:.0f} MiB, {speed:.0f} tok/s)"
    best = max(best, chosen if ok else 0)
    return measured, (best - (chosen if ok else 0)) / best if best else 1.0, label, best, f"{best}"


def _models(folder: Path, tmp: Path) -> dict[str, Path]:
    mid8 = replace(multi_device_descs()["mid8"], context_length=32768)
    return {"smollm2": folder / "smollm2-135m-instruct-q4_1.gguf", "gemma3": folder / "gemma3-270m-q4_k_m.gguf",
            "mid8": write_gguf(tmp / "mid8.gguf", mid8)[0]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--llama-bin", type=Path, default=Path(os.environ.get("GGUF_BUDGET_LLAMA_BIN", DEFAULT_BIN)))
    ap.add_argument("--models", type=Path, default=Path("/work/models"))
    ap.add_argument("--only", default=None, help="run only the cases of this model")
    ap.add_argument("--goals", default=None, help="run only these goals (comma-separated)")
    args = ap.parse_args()
    binary = args.llama_bin if args.llama_bin.is_dir() else args.llama_bin.parent
    rows, misses = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        paths = _models(args.models, Path(tmp))
        for case in CASES:
            if args.only and case.model != args.only or args.goals and case.goal.value not in args.goals.split(","):
                continue
            model = load_model(paths[case.model])
            answer = tune(model, _state(model, case), case.goal, Constraints(min_ctx=case.min_ctx,
                                                                             min_tok_s=case.min_tok_s))
            assert answer.best is not None, answer.binding
            run = _speed_case if case.goal in (Goal.MAX_SPEED, Goal.LEAST_MEMORY) else _ceiling_case
            measured, gap, top, _, top_text = run(binary, paths[case.model], case, answer)
            misses += gap > 0.10
            asked = (f"≤ {case.ceiling_mib} MiB, ≥ {case.min_tok_s:g} tok/s, {case.min_ctx}/slot"
                     if case.goal in (Goal.MAX_CTX, Goal.MAX_SLOTS) else f"ctx {case.min_ctx}")
            chose = ", ".join(answer.best.knobs.words()) + (f", -c {answer.best.ctx}" if case.goal is Goal.MAX_CTX else
                                                            f", -np {answer.best.slots}" if case.goal is Goal.MAX_SLOTS
                                                            else "")
            rows.append(f"| {case.model} | {case.goal.value} | {asked} | {chose} | {measured} | {top} | {top_text} | "
                        f"{gap * 100:+.1f} % |")
            print(rows[-1], flush=True)
    print("| model | goal | asked | tune chose | measured | sweep's best | measured | shortfall |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print(f"{len(rows) - misses}/{len(rows)} cases within 10 % of the sweep's best")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
