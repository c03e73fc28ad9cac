"""How close real llama.cpp runs come to the memory-bound decode rate and to the probe's compute rate.

Rule 1: a run's decode efficiency (alone, without a fixed time) is its `eval time` tokens/s ×
        the bytes each of its tokens read (`TokenPrices.read_per_token` with the KV of its mean
        position: prompt tokens + half the generated ones) / the RAM bandwidth; its prefill
        efficiency is its `prompt eval time` tokens/s × the prompt's work per token
        (`TokenPrices.prompt_work`: FLOPs weighed by the weight types' kernel speeds) / the
        compute rate. Only runs that kept every layer on the CPU count for the CPU (a GPU run's
        speed says nothing about this machine's RAM, Rule 5); a run without the line has no
        figure for it.
Rule 2: the machine's calibration is fitted to its runs (`measure` and imported logs, kept in
        RUNS_NAME in the app's data folder, the newest MAX_RUNS), against the RAM and compute
        figures in use now, so measuring them again re-calibrates the same runs. Each run is a
        point (x: its per-token work at the probe's rate — bytes / RAM bandwidth, or work /
        compute rate; t: the seconds per token it took). When the runs' x differ by MIN_SPREAD
        or more, a line t = x / efficiency + fixed time is fitted by least squares of relative
        errors (a 135M model's milliseconds weigh as much as an 8B's); a line that would need
        a negative fixed time keeps none. With one size of run the fixed time is the default's
        (at most half the fastest run) and the efficiency the median that leaves. Without runs
        here, the defaults below. Measured on a quiet 2-core AMD EPYC (load 0.3,
        benchmarks/speed_calibration.py): SmolLM2-135M, Gemma-3-270M and an 8B-shaped Q4_K_M
        decoded at 108, 79 and 9.5 tok/s; an efficiency alone (t = x / e) cannot hold all
        three within ±35% (their own efficiencies span 3.4×), the line with a fixed time
        (~7 ms a token) holds each within 15% when fitted to the other two.
Rule 3: the defaults come from the 12 timed real llama.cpp runs shipped with the tests
        (tests/data/llamacpp-logs: llama.cpp 0c1e570, CPU, 2 threads; 5 SmolLM2-135M Q4_1 runs,
        ~94 tok/s decode and ~335 tok/s prefill of a 35-token prompt; 7 Gemma-3-270M Q4_K_M
        runs, ~45.5 and ~400 tok/s of a 29-token prompt), fitted as in Rule 2 over the best
        figures this module's probes measured on a 2-core machine of the same cloud kind
        (REFERENCE_RAM 36.0 GB/s, two threads; REFERENCE_COMPUTE 237 GFLOP/s: the best of 60
        probes over two hours, a busy neighbour only ever lowering a reading): decode
        DEFAULT_DECODE_EFFICIENCY 0.37 with DEFAULT_DECODE_OVERHEAD_S 3.5 ms a token; prefill
        (weighed work, `kernel_speed`: the line through the two would need a negative fixed
        time, so none) DEFAULT_PREFILL_EFFICIENCY 0.42 (`core.machine.bandwidth`). The logs'
        machine had AMX, the probing one an AMD EPYC: a default, replaced by this machine's own
        runs as soon as there is one (docs/speed-calibration.md, `benchmarks/speed_calibration.py`).
Rule 4: the kept runs are one small JSON file, read through `core.regular_file.read_json` (a
        damaged or oversized file is no runs; an entry whose fields are not of their type and
        band, `core.record_fields`, is absent; entries past 4 × MAX_RUNS are not read) and
        added to under its lock, written whole and renamed into place (`core.safe_write`), so
        two runs kept at once are both kept; no number that is not finite is written.
Rule 5: a run carries where it ran: this machine's id (`bandwidth_store.host_key`; an imported
        log's machine is unknown, and it calibrates nothing until `adopt_imported` says it ran
        here), its tier (`evidence.run_tier`: every layer on the CPU, every layer on one GPU, or hybrid)
        with its device (a GPU buffer's name: CUDA0, Vulkan0, Metal), and the load average beside
        it and the cores. Only this
        machine's CPU runs calibrate the CPU (`calibrate`); a GPU run calibrates only its own
        device (`gpu_runs` keeps them, `gpu_line` fits them, `backend_speed.gpu_figures` uses the
        line); a hybrid run calibrates neither.
Rule 6: a run calibrates only when it could have been measured: its read rate (bytes × tok/s) and
        work rate lie in PHYSICAL bands when kept (a log claiming 10⁶ tok/s is not kept); its
        efficiency alone against this machine's figures lies in (MIN_EFFICIENCY, MAX_DECODE] for
        decode (no token reads faster than the memory) and (MIN_EFFICIENCY, MAX_PREFILL] for
        prefill (the weighed work beats the float32 probe at most this much); it was not busy
        (load average above its cores); its time lies within MODEL_FACTOR of what the default
        calibration predicts for it, and, beside two or more runs of its size (SAME_SHAPE),
        within OTHERS_FACTOR of what theirs give (the worst outlier is dropped first, then the
        rest judged again). `judge_runs` says, per run and per kind of token, why it is used or
        not: the one answer `calibrate`, `hw --calibration` and the window's dialog share.
"""

from __future__ import annotations

import json
import os
import statistics
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from gguf_budget.core import paths, record_fields
from gguf_budget.core.errors import BudgetError, DamagedRuns
from gguf_budget.core.regular_file import FileKind, is_missing, read_json
from gguf_budget.core.safe_write import locked, replace_atomically
from gguf_budget.core.machine.bandwidth import (
    DEFAULT_CALIBRATION, DEFAULT_CALIBRATION_RUNS, DEFAULT_DECODE_EFFICIENCY, DEFAULT_DECODE_OVERHEAD_S,
    DEFAULT_PREFILL_EFFICIENCY, DEFAULT_PREFILL_OVERHEAD_S, Bandwidth, Calibration, ComputeRate, GpuRun,
)
from gguf_budget.core.machine.load import MAX_CORES, MAX_LOAD
from gguf_budget.core.model.kv import KV_TYPES, KVType, kv_price
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.speed.token_bytes import TokenPrices
from gguf_budget.core.vocab import TextEnum

RUNS_NAME = "speed-runs.json"
FORMAT = 2
MAX_RUNS = 32
REFERENCE_RAM = 36_000_000_000
REFERENCE_COMPUTE = 237_000_000_000
MIN_SPREAD = 2.0
"""Runs whose tokens' work differs at least this much separate the fixed time from the rate (Rule 2)."""
MIN_EFFICIENCY = 0.01
MAX_DECODE = 1.0
MAX_PREFILL = 4.0
MAX_OVERHEAD_S = 1.0
MODEL_FACTOR = 4.0
OTHERS_FACTOR = 1.5
SAME_SHAPE = 1.25
"""Runs whose tokens' work lies within this factor are of one size: peers in the outlier test (Rule 6)."""
PHYSICAL = {"read": (1e6, 2e13), "work": (1e6, 1e17), "decode": (1e-3, 1e5), "prefill": (1e-3, 1e7)}
"""Rule 6: bytes/s a decode token can read (20 TB/s: past any GPU's memory and a CPU's caches), weighed FLOP/s a
prompt can take, the tokens/s a decode and a prefill can print."""
MAX_BYTES = 1 << 50
MAX_TEXT = 300


class RunTier(TextEnum):
    """Rule 5: where a run's layers were; the value is the word texts and JSON show."""

    CPU = "CPU"
    GPU = "GPU"
    HYBRID = "hybrid"


@dataclass(frozen=True, kw_only=True)
class SpeedRun:
    """What one real run says about a machine's speed (Rule 1) and where it ran (Rule 5), before any bandwidth is
    applied. `machine` None: an imported log, machine unknown."""

    recorded_at: float
    model: str
    decode_tok_s: float | None
    decode_bytes: int
    prefill_tok_s: float | None
    prefill_work_per_token: float
    machine: str | None = None
    tier: RunTier = RunTier.CPU
    device: str = "CPU"
    load: float | None = None
    cores: int | None = None

    def decode_efficiency(self, ram: Bandwidth) -> float | None:
        if not self.decode_tok_s:
            return None
        return self.decode_tok_s * self.decode_bytes / ram.bytes_per_s

    def prefill_efficiency(self, compute: ComputeRate) -> float | None:
        if not self.prefill_tok_s:
            return None
        return self.prefill_tok_s * self.prefill_work_per_token / compute.flops_per_s

    @property
    def busy(self) -> bool:
        """Rule 6: the load average beside it was above its cores."""
        return self.load is not None and self.cores is not None and self.load > self.cores


Timed = tuple[float, int]
"""(tokens per second, tokens) as llama.cpp printed a timing line."""

def measured_run(model: ModelSpec, kv_type: str | None, decode: Timed | None, prefill: Timed | None,
                 recorded_at: float, **where: Any) -> SpeedRun | None:
    """Rule 1 for a run of `model` timed as given, Rule 5's fields in `where`; None when it timed nothing or
    what it timed could not have been measured (Rule 6)."""
    if decode is None and prefill is None:
        return None
    prices = TokenPrices.of(model)
    kv = KVType(kv_type) if kv_type in KV_TYPES else KVType.F16
    prompt = prefill[1] if prefill else 0
    generated = decode[1] if decode else 0
    run = SpeedRun(recorded_at=recorded_at, model=os.path.basename(model.path)[:MAX_TEXT],
                   decode_tok_s=decode[0] if decode else None,
                   decode_bytes=prices.read_per_token(kv_price(model, kv).at(prompt + generated // 2)),
                   prefill_tok_s=prefill[0] if prefill else None,
                   prefill_work_per_token=prices.prompt_work(prompt) / prompt if prompt else 0.0, **where)
    try:
        return _run(run_to_json(run))
    except DamagedRuns:
        return None


class Kind(TextEnum):
    DECODE = "decode"
    PREFILL = "prefill"


Point = tuple[float, float]
"""One run's point for one kind of token: (x, its work at the probe's rate in seconds; t, the seconds it took)."""


def _point(run: SpeedRun, kind: Kind, ram: Bandwidth, compute: ComputeRate) -> Point | None:
    if kind is Kind.DECODE:
        return (run.decode_bytes / ram.bytes_per_s, 1 / run.decode_tok_s) if run.decode_tok_s else None
    if not run.prefill_tok_s or not run.prefill_work_per_token:
        return None
    return run.prefill_work_per_token / compute.flops_per_s, 1 / run.prefill_tok_s


def _line(points: list[Point], default_overhead: float, top: float = MAX_DECODE) -> tuple[float, float] | None:
    """Rule 2 for one kind of token: (efficiency, fixed seconds) from points (seconds at the probe's rate, seconds
    measured), the efficiency at most `top`; None without points."""
    points = [(x, t) for x, t in points if x > 0 and t > 0]
    if not points:
        return None
    xs = [x for x, _ in points]
    if max(xs) >= MIN_SPREAD * min(xs):
        w = [1 / (t * t) for _, t in points]  # relative errors: a tiny model's milliseconds count as much
        sw = sum(w)
        mx = sum(wi * x for wi, (x, _) in zip(w, points, strict=True)) / sw
        mt = sum(wi * t for wi, (_, t) in zip(w, points, strict=True)) / sw
        sxx = sum(wi * (x - mx) ** 2 for wi, (x, _) in zip(w, points, strict=True))
        k = sum(wi * (x - mx) * (t - mt) for wi, (x, t) in zip(w, points, strict=True)) / sxx
        if k > 0:
            overhead = mt - k * mx
            if overhead >= 0:
                return min(1 / k, top), min(overhead, MAX_OVERHEAD_S)
            return min(statistics.median(x / t for x, t in points), top), 0.0
    overhead = min(default_overhead, min(t for _, t in points) / 2)
    return min(statistics.median(x / (t - overhead) for x, t in points), top), overhead


KINDS: dict[Kind, tuple[float, float, float]] = {
    Kind.DECODE: (DEFAULT_DECODE_EFFICIENCY, DEFAULT_DECODE_OVERHEAD_S, MAX_DECODE),
    Kind.PREFILL: (DEFAULT_PREFILL_EFFICIENCY, DEFAULT_PREFILL_OVERHEAD_S, MAX_PREFILL),
}
"""Per kind of token: the default efficiency and fixed time (Rule 3), the top of the physical band (Rule 6)."""


def _predicted(line: tuple[float, float], p: Point) -> float:
    return p[0] / line[0] + line[1]


def _outside(t: float, predicted: float, factor: float) -> float | None:
    """How many times off `predicted` a time is, when more than `factor`; None when within."""
    ratio = max(t / predicted, predicted / t)
    return ratio if ratio > factor else None


def _why_not(run: SpeedRun, machine: str | None) -> str | None:
    """Rule 5–6 before any figure: why a run cannot calibrate this machine's CPU; None when it may."""
    if machine is not None and run.machine is None:
        return "imported, machine unknown (hw --adopt-imported if it ran here)"
    if machine is not None and run.machine != machine:
        return "another machine's run"
    if run.tier is RunTier.GPU:
        return f"a GPU run: calibrates {run.device} only, never the CPU"
    if run.tier is RunTier.HYBRID:
        return f"hybrid (layers on the CPU and {run.device}): calibrates neither tier"
    if run.busy:
        return f"busy: load average {run.load:.1f} above its {run.cores} cores"
    return None


def _judge_kind(runs: tuple[SpeedRun, ...], kind: Kind, ram: Bandwidth, compute: ComputeRate,
                machine: str | None) -> tuple[list[str], tuple[float, float] | None]:
    """Rule 6 for one kind of token: a word per run ('used' or why not) and the line the used ones give."""
    default_e, default_fixed, top = KINDS[kind]
    words: list[str] = []
    points: dict[int, Point] = {}
    for i, run in enumerate(runs):
        p = _point(run, kind, ram, compute)
        why = _why_not(run, machine) or ("no timing" if p is None else None)
        if why is None and p is not None:
            e = p[0] / p[1]
            off = _outside(p[1], _predicted((default_e, default_fixed), p), MODEL_FACTOR)
            if not MIN_EFFICIENCY < e <= top:
                why = f"outside the physical band: {e:.3g} of the probe's rate"
            elif off is not None:
                why = f"outlier against the model: {off:.1f}× the time it predicts"
            else:
                points[i] = p
        words.append(why or "used")
    while True:
        offs = {}
        for i, p in points.items():
            peers = [q for j, q in points.items() if j != i and max(q[0] / p[0], p[0] / q[0]) <= SAME_SHAPE]
            line = _line(peers, default_fixed, top) if len(peers) >= 2 else None
            off = None if line is None else _outside(p[1], _predicted(line, p), OTHERS_FACTOR)
            if off is not None:
                offs[i] = off
        if not offs:
            break
        worst = max(offs, key=lambda i: offs[i])
        words[worst] = f"outlier against the other runs of its size: {offs[worst]:.1f}× their time"
        del points[worst]
    return words, _line(list(points.values()), default_fixed, top)


@dataclass(frozen=True)
class JudgedRun:
    """A kept run and whether each of its kinds of token calibrates this machine's CPU ('used' or why not)."""

    run: SpeedRun
    decode: str
    prefill: str


def judge_runs(runs: tuple[SpeedRun, ...], ram: Bandwidth, compute: ComputeRate, machine: str | None = None
               ) -> tuple[tuple[JudgedRun, ...], Calibration]:
    """Rules 2, 5, 6: each run judged, and the calibration the used ones give (the defaults where none is used).
    `machine` None takes every run as this machine's (a benchmark fitting the runs it made)."""
    decode_words, decode = _judge_kind(runs, Kind.DECODE, ram, compute, machine)
    prefill_words, prefill = _judge_kind(runs, Kind.PREFILL, ram, compute, machine)
    judged = tuple(JudgedRun(r, d, p) for r, d, p in zip(runs, decode_words, prefill_words, strict=True))
    used = sum(1 for j in judged if "used" in (j.decode, j.prefill))
    if decode is None and prefill is None:
        return judged, DEFAULT_CALIBRATION
    d = decode or (DEFAULT_DECODE_EFFICIENCY, DEFAULT_DECODE_OVERHEAD_S)
    p = prefill or (DEFAULT_PREFILL_EFFICIENCY, DEFAULT_PREFILL_OVERHEAD_S)
    return judged, Calibration(d[0], p[0], used, DEFAULT_CALIBRATION_RUNS, d[1], p[1])


def calibrate(runs: tuple[SpeedRun, ...], ram: Bandwidth, compute: ComputeRate,
              machine: str | None = None) -> Calibration:
    """Rule 2 over the runs Rules 5–6 keep."""
    return judge_runs(runs, ram, compute, machine)[1]


def gpu_runs(runs: tuple[SpeedRun, ...], machine: str) -> tuple[GpuRun, ...]:
    """Rule 5: the runs that may calibrate a GPU tier of `machine`: its own, quiet, every layer on one GPU, timed.
    CPU, hybrid, busy and imported runs never enter."""
    return tuple(GpuRun(device=r.device, decode_bytes=r.decode_bytes, decode_tok_s=r.decode_tok_s) for r in runs
                 if r.machine == machine and r.tier is RunTier.GPU and not r.busy and r.decode_tok_s)


def gpu_line(runs: tuple[GpuRun, ...], device: str, vram: Bandwidth, default_fixed_s: float) -> tuple[float, float] | None:
    """Rule 5: the GPU tier of `device`: (efficiency, fixed seconds a token) its runs give against `vram` (Rule 2's
    line, the backend's fixed time `default_fixed_s` for one size of run; each run's efficiency alone inside the
    physical band); None without such runs."""
    points = [(r.decode_bytes / vram.bytes_per_s, 1 / r.decode_tok_s) for r in runs
              if r.device == device and MIN_EFFICIENCY < r.decode_tok_s * r.decode_bytes / vram.bytes_per_s <= MAX_DECODE]
    return _line(points, default_fixed_s)


def runs_path(folder: str | Path | None = None) -> Path:
    return Path(folder if folder is not None else paths.data_dir()) / RUNS_NAME


def run_to_json(r: SpeedRun) -> dict[str, Any]:
    return {"recorded_at": r.recorded_at, "model": r.model, "decode_tok_s": r.decode_tok_s,
            "decode_bytes": r.decode_bytes, "prefill_tok_s": r.prefill_tok_s,
            "prefill_work_per_token": r.prefill_work_per_token, "machine": r.machine, "tier": r.tier.value,
            "device": r.device, "load": r.load, "cores": r.cores}


def _run(data: Any) -> SpeedRun:
    """Rules 4 and 6: one entry back, every field of its type and band; DamagedRuns when not."""
    if not isinstance(data, dict) or data.get("tier") not in {t.value for t in RunTier}:
        raise DamagedRuns("not a speed run")
    e = DamagedRuns
    decode = record_fields.optional_number(data, "decode_tok_s", *PHYSICAL["decode"], e)
    prefill = record_fields.optional_number(data, "prefill_tok_s", *PHYSICAL["prefill"], e)
    decode_bytes = record_fields.whole(data, "decode_bytes", 1, MAX_BYTES, e)
    work = record_fields.number(data, "prefill_work_per_token", 0, PHYSICAL["work"][1], e)
    if decode is None and prefill is None:
        raise DamagedRuns("a run times nothing")
    if decode is not None and not PHYSICAL["read"][0] <= decode * decode_bytes <= PHYSICAL["read"][1]:
        raise DamagedRuns("a decode rate no memory can deliver")
    if prefill is not None and work and not PHYSICAL["work"][0] <= prefill * work <= PHYSICAL["work"][1]:
        raise DamagedRuns("a prefill rate no processor can deliver")
    machine = data.get("machine")
    if machine is not None:
        machine = record_fields.text(data, "machine", 64, e)
    cores = data.get("cores")
    return SpeedRun(recorded_at=record_fields.number(data, "recorded_at", 0, record_fields.LATEST_DATE, e),
                    model=record_fields.text(data, "model", MAX_TEXT, e), decode_tok_s=decode,
                    decode_bytes=decode_bytes, prefill_tok_s=prefill, prefill_work_per_token=work,
                    machine=machine, tier=RunTier(data["tier"]), device=record_fields.text(data, "device", MAX_TEXT, e),
                    load=record_fields.optional_number(data, "load", 0, MAX_LOAD, e),
                    cores=None if cores is None else record_fields.whole(data, "cores", 1, MAX_CORES, e))


def _runs_of(data: Any) -> list[SpeedRun]:
    """Rule 4: the entries that read; one that does not is absent."""
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("runs"), list):
        return []
    out = []
    for item in data["runs"][:4 * MAX_RUNS]:
        try:
            out.append(_run(item))
        except DamagedRuns:
            continue
    return out


def read_runs(folder: str | Path | None = None) -> tuple[SpeedRun, ...]:
    """Rule 4: the kept runs, newest first; none when the file is missing, damaged or too large."""
    path = runs_path(folder)
    try:
        if is_missing(str(path)):
            return ()
        runs = _runs_of(read_json(path, FileKind.RECORD))
    except (BudgetError, OSError, ValueError, RecursionError):
        return ()
    return tuple(sorted(runs, key=lambda r: -r.recorded_at))[:MAX_RUNS]


def _rewrite(folder: str | Path | None, change: Callable[[tuple[SpeedRun, ...]], tuple[SpeedRun, ...]]) -> bool:
    """Rule 4: the kept runs changed under the file's lock; False when they cannot be written."""
    path = runs_path(folder)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with locked(path):
            runs = change(read_runs(folder))[:MAX_RUNS]
            text = json.dumps({"format": FORMAT, "runs": [run_to_json(r) for r in runs]}, indent=2, allow_nan=False)
            replace_atomically(path, text.encode())
    except OSError:
        return False
    return True


def remember_run(run: SpeedRun, folder: str | Path | None = None) -> bool:
    """Keep a run (Rule 4); False when it cannot be kept (the estimates then keep their calibration)."""
    return _rewrite(folder, lambda runs: (run, *runs))


def adopt_imported(machine: str, folder: str | Path | None = None) -> int:
    """Rule 5, asked for: every imported run (machine unknown) is now `machine`'s; how many (0 when none or unwritten)."""
    adopted = sum(1 for r in read_runs(folder) if r.machine is None)
    if not adopted:
        return 0
    done = _rewrite(folder, lambda runs: tuple(r if r.machine is not None else replace(r, machine=machine)
                                               for r in runs))
    return adopted if done else 0


def forget_runs(folder: str | Path | None = None) -> str | None:
    """No run is kept any more (`hw --reset-calibration`); None when done, else why not in words."""
    path = runs_path(folder)
    try:
        path.unlink(missing_ok=True)
    except OSError as e:
        return f"{path} could not be removed: {e.strerror or e}"
    return None
