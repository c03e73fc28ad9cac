"""How close real llama.cpp runs come to the memory-bound decode rate and to the probe's compute rate.

Rule 1: a run's decode efficiency (alone, without a fixed time) is its `eval time` tokens/s ×
        the bytes each of its tokens read (`TokenPrices.read_per_token` with the KV of its mean
        position: prompt tokens + half the generated ones) / the RAM bandwidth; its prefill
        efficiency is its `prompt eval time` tokens/s × the prompt's work per token
        (`TokenPrices.prompt_work`: FLOPs weighed by the weight types' kernel speeds) / the
        compute rate. Only runs that kept every layer on the CPU count (a GPU run's speed says
        nothing about this machine's RAM); a run without the line has no figure for it.
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
        damaged or oversized file is no runs) and added to under its lock, written whole and
        renamed into place (`core.safe_write`), so two runs kept at once are both kept.
"""

from __future__ import annotations

import json
import os
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gguf_budget.core import paths
from gguf_budget.core.errors import BudgetError, DamagedRuns
from gguf_budget.core.regular_file import FileKind, is_missing, read_json
from gguf_budget.core.safe_write import locked, replace_atomically
from gguf_budget.core.machine.bandwidth import (
    DEFAULT_CALIBRATION, DEFAULT_CALIBRATION_RUNS, DEFAULT_DECODE_EFFICIENCY, DEFAULT_DECODE_OVERHEAD_S,
    DEFAULT_PREFILL_EFFICIENCY, DEFAULT_PREFILL_OVERHEAD_S, Bandwidth, Calibration, ComputeRate,
)
from gguf_budget.core.model.kv import KV_TYPES, KVType, kv_price
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.speed.token_bytes import TokenPrices

RUNS_NAME = "speed-runs.json"
MAX_RUNS = 32
REFERENCE_RAM = 36_000_000_000
REFERENCE_COMPUTE = 237_000_000_000
MIN_SPREAD = 2.0
"""Runs whose tokens' work differs at least this much separate the fixed time from the rate (Rule 2)."""
MAX_EFFICIENCY = 10.0
MAX_OVERHEAD_S = 1.0


@dataclass(frozen=True, kw_only=True)
class SpeedRun:
    """What one real run says about this machine's speed (Rule 1), before any bandwidth is applied."""

    recorded_at: float
    model: str
    decode_tok_s: float | None
    decode_bytes: int
    prefill_tok_s: float | None
    prefill_work_per_token: float

    def decode_efficiency(self, ram: Bandwidth) -> float | None:
        if not self.decode_tok_s:
            return None
        return self.decode_tok_s * self.decode_bytes / ram.bytes_per_s

    def prefill_efficiency(self, compute: ComputeRate) -> float | None:
        if not self.prefill_tok_s:
            return None
        return self.prefill_tok_s * self.prefill_work_per_token / compute.flops_per_s


Timed = tuple[float, int]
"""(tokens per second, tokens) as llama.cpp printed a timing line."""


def measured_run(model: ModelSpec, kv_type: str | None, decode: Timed | None, prefill: Timed | None,
                 recorded_at: float) -> SpeedRun | None:
    """Rule 1 for a CPU run of `model` timed as given; None when it timed nothing."""
    if decode is None and prefill is None:
        return None
    prices = TokenPrices.of(model)
    kv = KVType(kv_type) if kv_type in KV_TYPES else KVType.F16
    prompt = prefill[1] if prefill else 0
    generated = decode[1] if decode else 0
    return SpeedRun(recorded_at=recorded_at, model=os.path.basename(model.path),
                    decode_tok_s=decode[0] if decode else None,
                    decode_bytes=prices.read_per_token(kv_price(model, kv).at(prompt + generated // 2)),
                    prefill_tok_s=prefill[0] if prefill else None,
                    prefill_work_per_token=prices.prompt_work(prompt) / prompt if prompt else 0.0)


def _line(points: list[tuple[float, float]], default_overhead: float) -> tuple[float, float] | None:
    """Rule 2 for one kind of token: (efficiency, fixed seconds) from points (seconds at the probe's rate,
    seconds measured); None without points."""
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
                return min(1 / k, MAX_EFFICIENCY), min(overhead, MAX_OVERHEAD_S)
            return min(statistics.median(x / t for x, t in points), MAX_EFFICIENCY), 0.0
    overhead = min(default_overhead, min(t for _, t in points) / 2)
    return min(statistics.median(x / (t - overhead) for x, t in points), MAX_EFFICIENCY), overhead


def calibrate(runs: tuple[SpeedRun, ...], ram: Bandwidth, compute: ComputeRate) -> Calibration:
    """Rule 2."""
    decode = _line([(r.decode_bytes / ram.bytes_per_s, 1 / r.decode_tok_s) for r in runs if r.decode_tok_s],
                   DEFAULT_DECODE_OVERHEAD_S)
    prefill = _line([(r.prefill_work_per_token / compute.flops_per_s, 1 / r.prefill_tok_s) for r in runs
                     if r.prefill_tok_s and r.prefill_work_per_token], DEFAULT_PREFILL_OVERHEAD_S)
    if decode is None and prefill is None:
        return DEFAULT_CALIBRATION
    d = decode or (DEFAULT_DECODE_EFFICIENCY, DEFAULT_DECODE_OVERHEAD_S)
    p = prefill or (DEFAULT_PREFILL_EFFICIENCY, DEFAULT_PREFILL_OVERHEAD_S)
    return Calibration(d[0], p[0], len(runs), DEFAULT_CALIBRATION_RUNS, d[1], p[1])


def runs_path(folder: str | Path | None = None) -> Path:
    return Path(folder if folder is not None else paths.data_dir()) / RUNS_NAME


def _run_json(r: SpeedRun) -> dict[str, Any]:
    return {"recorded_at": r.recorded_at, "model": r.model, "decode_tok_s": r.decode_tok_s,
            "decode_bytes": r.decode_bytes, "prefill_tok_s": r.prefill_tok_s,
            "prefill_work_per_token": r.prefill_work_per_token}


def _positive(value: Any, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value == float("inf"):
        raise DamagedRuns(f"not a positive number: {value!r}")
    return float(value)


def _run(data: Any) -> SpeedRun:
    if not isinstance(data, dict) or not isinstance(data.get("model"), str):
        raise DamagedRuns("not a speed run")
    decode_bytes = data.get("decode_bytes")
    if isinstance(decode_bytes, bool) or not isinstance(decode_bytes, int) or decode_bytes < 1:
        raise DamagedRuns("decode_bytes must be a positive whole number")
    work = data.get("prefill_work_per_token", 0.0)  # absent in runs kept before prefill was weighed: no prefill point
    if isinstance(work, bool) or not isinstance(work, (int, float)) or work < 0:
        raise DamagedRuns("prefill_work_per_token must be a number ≥ 0")
    return SpeedRun(recorded_at=float(_positive(data.get("recorded_at")) or 0), model=data["model"],
                    decode_tok_s=_positive(data.get("decode_tok_s"), optional=True), decode_bytes=decode_bytes,
                    prefill_tok_s=_positive(data.get("prefill_tok_s"), optional=True),
                    prefill_work_per_token=float(work))


def read_runs(folder: str | Path | None = None) -> tuple[SpeedRun, ...]:
    """Rule 4: the kept runs, newest first; none when the file is missing, damaged or too large."""
    path = runs_path(folder)
    try:
        if is_missing(str(path)):
            return ()
        data = read_json(path, FileKind.RECORD)
        if not isinstance(data, dict) or not isinstance(data.get("runs"), list):
            return ()
        runs = [_run(item) for item in data["runs"]]
    except (BudgetError, OSError, ValueError):
        return ()
    return tuple(sorted(runs, key=lambda r: -r.recorded_at))[:MAX_RUNS]


def remember_run(run: SpeedRun, folder: str | Path | None = None) -> bool:
    """Keep a run (Rule 4); False when it cannot be kept (the estimates then keep their calibration)."""
    path = runs_path(folder)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with locked(path):
            runs = (run, *read_runs(folder))[:MAX_RUNS]
            replace_atomically(path, json.dumps({"runs": [_run_json(r) for r in runs]}, indent=2).encode())
    except OSError:
        return False
    return True
