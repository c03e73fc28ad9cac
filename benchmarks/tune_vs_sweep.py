"""`tune`'s choice against the best of a measured sweep of the same knobs, with the real llama.cpp (issue #40).

Models: the two real small models (smollm2-135m Q4_1, gemma3-270m Q4_K_M; `--models DIR`) and one zero-weight larger
shape (`mid8` of tests/runnable_model.py — 8 blocks of 1024, a 32,000-token vocabulary, Q8_0 — with a 32,768-token
context). The machine is CPU only; each case's is hypothetical: RAM of the case's ceiling, of which the host reserve
is the program's own resident memory — the verdict prices the model's buffers and leaves the program's code, stacks,
allocator and scratch to the reserve (6 GiB by default on a real machine). For llama-server it is measured once per
model on the session at settings no case asks (`_own_memory`: peak RSS less the buffers and checkpoints llama.cpp's
log reports and the sampler and KV cells' metadata the verdict prices); for llama-completion it is the peak-RSS band's (`_reserve`: `runtime_memory.process_bytes` and the CPU
backend's work buffer at one thread).

Goals, each case priced by `tune` and measured with the command it prints, against every combination of the sweep:
- max-speed / least-memory (llama-completion, ctx 4096): `-ctk/-ctv` f16, q8_0 × `-fa` on, off (f16) × `-ub` 256,
  512, 1024; decode tok/s as tokens per CPU second of the decode (`_speed_case`: wall time on a shared machine
  swings by a third between identical runs), the best of REPEATS interleaved rounds, and peak RSS (rusage). The
  runtime priced is llama-completion's, which keeps no prompt cache or checkpoints (`holdings.program_settings`).
- max-ctx (llama-server, a RAM ceiling): `-c` on a grid × `-ctk/-ctv` × `-ub` 256, 512, with `--cache-ram 0`; the
  sweep's best is the largest ctx whose measured memory is within the ceiling and whose decode (tokens per CPU
  second, `_server`) meets the floor, each row bisected over the grid (memory only grows with ctx). tune's command is
  run as printed (its own ctx, cache, ubatch).
- max-slots (llama-server, a RAM ceiling, `--min-ctx` per slot): `-np N -c N·min_ctx` × `-ctk/-ctv`, with
  `--cache-ram 0`, bisected the same way.
The server's memory is what its session holds: tune is told the session (`_session`: a 600-token prompt and 32
generated in every slot — longer than gemma3's sliding window, so each leaves llama-server's context checkpoints) and
the sweep runs it; the figure is the peak RSS after it (VmHWM) with each compute buffer counted whole (`_untouched`:
the buffer is reserved for a full ubatch at the full context, which a session that fills the context touches; the
untouched part is read from /proc/PID/smaps, each buffer in a mapping of its own by the preloaded `apart.c`), so a
ctx that fits only while empty does not count as fitting.
A case passes when the chosen command's measured objective is within 10 % of the sweep's best (a chosen command
whose measured RSS is over the ceiling, or whose decode is under the floor, scores 0). Every llama.cpp run holds
an exclusive flock on LOCK (so runs never overlap other benchmarks') and runs at nice 10, one thread.
Exit 1 if any case misses.

Needs a C compiler (`cc`) for `apart.c`.
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
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.runtime_memory import kv_cell_bytes, process_bytes, sampler_bytes
from gguf_budget.core.fit.runtime_types import EngineSettings, Runtime
from gguf_budget.core.fit.server.session_spec import SessionSpec
from gguf_budget.core.fit.server.types import ServerSettings
from gguf_budget.core.fit.types import FitRequest, Reserves
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
SESSION_PROMPT, SESSION_GENERATED = 600, 32
"""Each request of the server's session: a prompt longer than gemma3's 512-token sliding window, so that it leaves
llama-server's two context checkpoints, the second of a whole window, as a chat turn does."""
BOS_FREE, TOKEN_SPAN = 1000, 20000
PAGE, ROUNDING = 4096, 5243  # the log's MiB have two decimals
MIN_MAPPED = 1 << 20
APART = Path(__file__).with_name("apart.c")
"""Preloaded into llama-server: every buffer of MIN_MAPPED or more that ggml allocates (posix_memalign) in a mapping
of its own between two PROT_NONE pages — the kernel merges adjacent anonymous mappings, and glibc may put one in the
heap — so /proc/PID/smaps shows each apart; smaller compute buffers are not looked for."""
SPEED_CTX = 4096
OWN_CTX = 4096
"""`_own_memory`'s calibration context."""
RUN = ["-t", "1", "--temp", "0"]
SWEEPS: dict[object, dict[str, list[tuple[float, int]]]] = {}
"""The speed sweeps measured so far, by model and ctx: max-speed and least-memory share one."""
REUSE: Path | None = None
REUSED: dict[str, tuple[float, ...]] = {}
"""llama-server measurements by command and session, kept in REUSE (`--reuse`) so a second run of the table measures
only what changed (the sweep's points do not depend on tune)."""
SHIM = Path("apart.so")
"""`APART` built, once per run (`main`)."""
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
    Case("smollm2", Goal.MAX_CTX, 205, 1024, 5.0, tuple(range(1024, 8193, 256))),
    Case("smollm2", Goal.MAX_CTX, 230, 1024, 5.0, tuple(range(1024, 8193, 256))),
    Case("smollm2", Goal.MAX_CTX, 280, 1024, 5.0, tuple(range(1024, 8193, 256))),
    Case("smollm2", Goal.MAX_SLOTS, 330, 2048, 0.0, tuple(range(1, 10))),
    Case("gemma3", Goal.MAX_SPEED), Case("gemma3", Goal.LEAST_MEMORY),
    Case("gemma3", Goal.MAX_CTX, 370, 1024, 5.0, tuple(range(1024, 32769, 1024))),
    Case("gemma3", Goal.MAX_SLOTS, 400, 8192, 0.0, tuple(range(1, 10))),
    Case("mid8", Goal.MAX_CTX, 300, 1024, 0.0, tuple(range(2048, 32769, 1024))),
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


def _untouched(pid: int, log: str) -> int:
    """What llama.cpp's compute buffers reserve and the requests have not yet touched: for each buffer the log prints
    ("… compute buffer size = X MiB"), the one anonymous mapping of that size (`APART`; to a page, and the log's
    rounding) in /proc/PID/smaps, its Size − Rss. The buffer is reserved for a full ubatch at the full context, so a
    session that fills the context touches it whole: filling one costs minutes a point at one thread (gemma3 prefills
    41 tokens a second here), so the sweep counts what the filled context would touch instead."""
    sizes = [round(float(m[1]) * MiB) for m in re.finditer(r"compute buffer size = +([\d.]+) MiB", log)]
    maps, current = [], None
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = re.match(r"^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(\S*)$", line)
        if head:
            current = [head[1], 0, 0]
            maps.append(current)
        elif current is not None and line.startswith(("Size:", "Rss:")):
            current[1 if line.startswith("Size:") else 2] = int(line.split()[1]) * 1024
    untouched = 0
    for size in sizes:
        match = [m for m in maps if not m[0] and size - ROUNDING - PAGE <= m[1] <= size + ROUNDING + PAGE]
        if size >= MIN_MAPPED and len(match) != 1:
            raise SystemExit(f"no single mapping of the {size / MiB:.2f} MiB compute buffer in /proc/{pid}/smaps")
        untouched += match[0][1] - match[0][2] if match else 0
    return untouched


def _build_shim(folder: Path) -> Path:
    """`APART` compiled for this machine."""
    out = folder / "apart.so"
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(out), str(APART), "-lpthread"], check=True)
    return out


def _ids(n: int, salt: int) -> list[int]:
    """A prompt of n token ids no two requests share (their slots keep nothing of each other's)."""
    return [BOS_FREE + (salt * 7919 + i * 31) % TOKEN_SPAN for i in range(n)]


def _server(argv: list[str], slots: int, requests: int) -> tuple[float, int]:
    """The decode speed and the memory of `_served`."""
    return _served(argv, slots, requests)[:2]


def _served(argv: list[str], slots: int, requests: int, own: bool = False) -> tuple[float, int, int]:
    """`_measured_server`, or what it measured for the same command and session in an earlier run (`--reuse`; one
    kept without the program's own memory is measured again when `own` is asked)."""
    key = re.sub(rf"{re.escape(tempfile.gettempdir())}/\w+/", "", f"{shlex.join(argv)} | {requests} requests of "
                 f"{SESSION_PROMPT}+{SESSION_GENERATED}")  # mid8 is written to a new folder each run
    if key not in REUSED or own and len(REUSED[key]) < 3:
        REUSED[key] = _measured_server(argv, slots, requests)
        if REUSE is not None:
            REUSE.write_text(json.dumps(REUSED, indent=0))
    speed, peak, *mine = REUSED[key]
    return speed, int(peak), int(mine[0]) if mine else 0


def _measured_server(argv: list[str], slots: int, requests: int) -> tuple[float, int, int]:
    """llama-server as asked: one short request on slot 0 for the decode speed (tokens per CPU second, as
    `_speed_case`'s: wall time swings with others' load), then the session (`SESSION`): `requests` prompts of
    SESSION_PROMPT tokens, each to the next slot in turn. The figure is the process's peak RSS (VmHWM) after them,
    with each compute buffer counted whole (`_untouched`); beside it, what of that is the program's own (`_buffers`
    taken off)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryFile("w+", errors="replace") as log, _locked():
        child = subprocess.Popen([*argv, "--port", str(port), "--no-warmup", "-lv", "4"], stdin=subprocess.DEVNULL,
                                 stdout=log, stderr=log, preexec_fn=_nice, env={**os.environ, "LD_PRELOAD": str(SHIM)})
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
            before = _cpu_seconds(child.pid)
            _post(port, {"prompt": "hello", "n_predict": SERVED, "id_slot": 0, "temperature": 0, "ignore_eos": True,
                         "cache_prompt": False})
            speed = SERVED / max(_cpu_seconds(child.pid) - before, 1e-3)
            for i in range(requests):
                answer = _post(port, {"prompt": _ids(SESSION_PROMPT, i), "n_predict": SESSION_GENERATED,
                                      "id_slot": i % slots, "temperature": 0, "ignore_eos": True,
                                      "cache_prompt": True})
                if "error" in answer or not answer.get("tokens_evaluated"):
                    raise SystemExit(f"request {i} of {shlex.join(argv)}: {str(answer)[:300]}")
            status = Path(f"/proc/{child.pid}/status").read_text()
            peak = int(re.search(r"VmHWM:\s+(\d+) kB", status)[1]) * 1024  # type: ignore[index]
            log.seek(0)
            text = log.read()
            peak += _untouched(child.pid, text)
        finally:
            child.terminate()
            child.wait()
    return speed, peak, peak - _buffers(text)


def _buffers(log: str) -> int:
    """What llama.cpp's log says it holds in buffers the verdict prices — the mapped model, KV, output and compute
    buffers (a repacked copy is left to the reserve, as the verdict leaves it) — and the context checkpoints it made."""
    held = sum(float(m[1]) for m in re.finditer(r"(?:CPU_Mapped model|KV|output|compute) buffer size = +([\d.]+) MiB",
                                                log))
    held += sum(float(m[1]) for m in re.finditer(r"created context checkpoint .*size = ([\d.]+) MiB", log))
    return round(held * MiB)


def _session(case: Case) -> SessionSpec:
    """What the server serves, told to `tune` and run by `_server`: max-ctx one request, max-slots one a slot up to the
    grid's most (with fewer slots the later ones replace an earlier slot's, as the session's replay says)."""
    return SessionSpec.parse(f"{max(case.grid) if case.goal is Goal.MAX_SLOTS else 1}x"
                             f"({SESSION_PROMPT}+{SESSION_GENERATED})")


def _state(model: ModelSpec, case: Case, own: int | None = None) -> ExplorerState:
    """The case's machine: RAM of its ceiling, the program's own resident memory held back as the host reserve (`own`
    where measured, else `_reserve`); the server's session the one the benchmark runs."""
    machine = replace(hypothetical_machine(case.ceiling_mib * MiB), cpu_features=None)
    runtime = Runtime.LLAMA_COMPLETION if case.goal in (Goal.MAX_SPEED, Goal.LEAST_MEMORY) else Runtime.LLAMA_SERVER
    server = ServerSettings(session=_session(case)) if runtime is Runtime.LLAMA_SERVER else ServerSettings()
    reserve = own if own is not None else _reserve(model, case, runtime)
    return ExplorerState(model=model, machine=machine, reserves=Reserves(host=reserve), runtime=runtime, server=server)


def _own_memory(binary: Path, path: Path, model: ModelSpec) -> int:
    """llama-server's own resident memory while it serves the session: its peak RSS less the buffers and checkpoints
    llama.cpp's log reports (`_buffers`) and less what the verdict prices beside them (`_priced_beside`), measured once
    per model at `-c 4096`, one slot, no prompt cache — a setting no case asks — with f16 and `-ub 512` and with q8_0
    and `-ub 256`, the larger kept (it moves by about a MiB with the settings: gemma3 78.8 to 80.2 MiB before the
    sampler and cells were priced). The band's process figure is fitted on idle servers; a server that has served a
    request holds more (smollm2 36 MiB against 26, gemma3 80 against 56; mid8 24 against 24)."""
    return max(_served([str(binary / "llama-server"), "-m", str(path), "--cache-ram", "0", *RUN, "-c", str(OWN_CTX),
                        "-np", "1", *_flags(kv, None, ub)], 1, 1, own=True)[2] - _priced_beside(model, ub)
               for kv, ub in (("f16", 512), ("q8_0", 256)))


def _priced_beside(model: ModelSpec, ubatch: int) -> int:
    """What the verdict now prices of the calibration run's own memory, so it is not held back twice: its one slot's
    sampler and its KV cells' metadata (`runtime_memory` Rules 11–12)."""
    engine = EngineSettings(runtime=Runtime.LLAMA_SERVER, ubatch=ubatch)
    return sampler_bytes(model, engine) + kv_cell_bytes(model, OWN_CTX, engine)


def _reserve(model: ModelSpec, case: Case, runtime: Runtime) -> int:
    """The host reserve: what the peak-RSS band prices of the program's own memory, which the verdict leaves to the
    reserve (`runtime_types.VERDICT_BASIS`) — the process, and the CPU backend's work buffer at one thread (the
    largest over the ubatches searched, at the context floor: with flash attention its tiles do not grow with ctx)."""
    machine = hypothetical_machine(64 * 1024 * MiB)
    work = 0
    for ub in (256, 512, 1024):
        fit = estimate_fit(model, machine, FitRequest(ctx=case.min_ctx, engine=EngineSettings(runtime=runtime,
                                                                                              ubatch=ub, threads=1)))
        work = max(work, fit.memory.full.work if fit.memory.full is not None else 0)
    return process_bytes(model, runtime) + work


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
    """max-ctx / max-slots: the sweep's largest ctx (slots) within the ceiling and the floor, against the chosen. Peak
    RSS and the floor's decode only fall as ctx and slots grow, so each row (KV type × ubatch) is bisected over the
    grid, from the best found so far (a row that cannot beat it costs one run)."""
    assert answer.best is not None
    server = [str(binary / "llama-server"), "-m", str(path), "--cache-ram", "0", *RUN]
    slots = case.goal is Goal.MAX_SLOTS
    session = len(_session(case).requests())

    def fits(speed: float, peak: int) -> bool:
        return peak <= case.ceiling_mib * MiB and speed >= case.min_tok_s

    def measured(kv: str, ub: int, n: int) -> bool:
        ctx, np = (n * case.min_ctx, n) if slots else (n, 1)
        speed, peak = _server([*server, "-c", str(ctx), "-np", str(np), *_flags(kv, None, ub)], np, min(np, session))
        print(f"   {kv} ub {ub} {'-np' if slots else '-c'} {n}: {peak / MiB:.1f} MiB, {speed:.1f} tok/s",
              file=sys.stderr, flush=True)
        return fits(speed, peak)

    best, label = -1, "none"
    for kv in ("f16", "q8_0"):
        for ub in ((512,) if slots else (256, 512)):
            low, high = best, len(case.grid)  # grid[low] fits (or is the best so far), grid[high] does not
            first = best + 1  # a row that does not beat the best so far (or fits nowhere) costs one run
            if first >= high or not measured(kv, ub, case.grid[first]):
                continue
            low = first
            while high - low > 1:
                mid = (low + high) // 2
                low, high = (mid, high) if measured(kv, ub, case.grid[mid]) else (low, mid)
            if low > best:
                best, label = low, f"{kv} ub {ub} {'-np' if slots else '-c'} {case.grid[low]}"
    top = case.grid[best] if best >= 0 else 0
    chosen = answer.best.slots if slots else answer.best.ctx
    cache = answer.best.load.fit.server.cache_ram_mib if answer.best.load.fit.server else 0
    speed, peak = _server(_chosen(binary, answer, Runtime.LLAMA_SERVER), answer.best.slots,
                          session if cache else min(answer.best.slots, session))
    ok = fits(speed, peak)
    measured_text = f"{chosen if ok else 0} ({peak / MiB:.1f} MiB, {speed:.0f} tok/s)"
    top = max(top, chosen if ok else 0)
    return measured_text, (top - (chosen if ok else 0)) / top if top else 1.0, label, top, f"{top}"


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
    ap.add_argument("--reuse", type=Path, default=None, help="keep llama-server measurements in this JSON file and "
                    "reuse those of the same command and session")
    args = ap.parse_args()
    global REUSE
    REUSE = args.reuse
    if REUSE is not None and REUSE.exists():
        REUSED.update({k: tuple(v) for k, v in json.loads(REUSE.read_text()).items()})
    binary = args.llama_bin if args.llama_bin.is_dir() else args.llama_bin.parent
    rows, misses = [], 0
    global SHIM  # noqa: PLW0603
    with tempfile.TemporaryDirectory() as tmp:
        SHIM = _build_shim(Path(tmp))
        paths = _models(args.models, Path(tmp))
        for case in CASES:
            if args.only and case.model != args.only or args.goals and case.goal.value not in args.goals.split(","):
                continue
            model = load_model(paths[case.model])
            served = case.goal in (Goal.MAX_CTX, Goal.MAX_SLOTS)
            own = _own_memory(binary, paths[case.model], model) if served else None
            answer = tune(model, _state(model, case, own), case.goal, Constraints(min_ctx=case.min_ctx,
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
