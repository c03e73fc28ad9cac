"""How close real llama.cpp runs come to the memory-bound decode rate and to the probe's compute rate.

Rule 1: a run's decode efficiency is its `eval time` tokens/s × the bytes each of its tokens
        read (`TokenPrices.read_per_token` with the KV of its mean position: prompt tokens +
        half the generated ones) / the RAM bandwidth; its prefill efficiency is its `prompt
        eval time` tokens/s × the prompt's FLOPs per token (`TokenPrices.prompt_flops`) / the
        compute rate. Only runs that kept every layer on the CPU count (a GPU run's speed says
        nothing about this machine's RAM); a run without the line has no figure for it.
Rule 2: the machine's calibration is the median of its runs' efficiencies (`measure` and
        imported logs, kept in RUNS_NAME in the app's data folder, the newest MAX_RUNS),
        computed against the RAM and compute figures in use now, so measuring them again
        re-calibrates the same runs. Without runs here, the defaults below.
Rule 3: the defaults come from the 12 timed real llama.cpp runs shipped with the tests
        (tests/data/llamacpp-logs: llama.cpp 0c1e570, CPU, 2 threads; 5 SmolLM2-135M Q4_1 runs,
        ~94 tok/s decode and ~335 tok/s prefill of a 35-token prompt; 7 Gemma-3-270M Q4_K_M
        runs, ~45.5 and ~400 tok/s of a 29-token prompt), each read as in Rule 1. They read
        8.2–8.6 GiB/s (SmolLM2) and 10.4–10.8 GiB/s (Gemma 3) while decoding, median 10.41 GiB/s;
        prefill reached 68–107 GFLOP/s, median 81.9. Over the best figures this module's probes
        measured on a 2-core machine of the same cloud kind (REFERENCE_RAM 36.0 GB/s, two
        threads; REFERENCE_COMPUTE 237 GFLOP/s: the best of 60 probes over two hours, a busy
        neighbour only ever lowering a reading), the medians are DEFAULT_DECODE_EFFICIENCY
        0.31 and DEFAULT_PREFILL_EFFICIENCY 0.35 (`core.machine.bandwidth`). The logs' machine
        had AMX, the probing one an AMD EPYC: a default, replaced by this machine's own runs as
        soon as there is one (docs/speed-calibration.md, `benchmarks/speed_calibration.py`).
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
    DEFAULT_CALIBRATION, DEFAULT_CALIBRATION_RUNS, DEFAULT_DECODE_EFFICIENCY, DEFAULT_PREFILL_EFFICIENCY, Bandwidth,
    Calibration, ComputeRate,
)
from gguf_budget.core.model.kv import KV_TYPES, KVType, kv_price
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.speed.token_bytes import TokenPrices

RUNS_NAME = "speed-runs.json"
MAX_RUNS = 32
REFERENCE_RAM = 36_000_000_000
REFERENCE_COMPUTE = 237_000_000_000


@dataclass(frozen=True, kw_only=True)
class SpeedRun:
    """What one real run says about this machine's speed (Rule 1), before any bandwidth is applied."""

    recorded_at: float
    model: str
    decode_tok_s: float | None
    decode_bytes: int
    prefill_tok_s: float | None
    prefill_flops_per_token: float

    def decode_efficiency(self, ram: Bandwidth) -> float | None:
        if not self.decode_tok_s:
            return None
        return self.decode_tok_s * self.decode_bytes / ram.bytes_per_s

    def prefill_efficiency(self, compute: ComputeRate) -> float | None:
        if not self.prefill_tok_s:
            return None
        return self.prefill_tok_s * self.prefill_flops_per_token / compute.flops_per_s


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
                    prefill_flops_per_token=prices.prompt_flops(prompt) / prompt if prompt else 0.0)


def calibrate(runs: tuple[SpeedRun, ...], ram: Bandwidth, compute: ComputeRate) -> Calibration:
    """Rule 2."""
    decode = [e for e in (r.decode_efficiency(ram) for r in runs) if e]
    prefill = [e for e in (r.prefill_efficiency(compute) for r in runs) if e]
    if not decode and not prefill:
        return DEFAULT_CALIBRATION
    return Calibration(min(statistics.median(decode), 10.0) if decode else DEFAULT_DECODE_EFFICIENCY,
                       min(statistics.median(prefill), 10.0) if prefill else DEFAULT_PREFILL_EFFICIENCY,
                       len(runs), DEFAULT_CALIBRATION_RUNS)


def runs_path(folder: str | Path | None = None) -> Path:
    return Path(folder if folder is not None else paths.data_dir()) / RUNS_NAME


def _run_json(r: SpeedRun) -> dict[str, Any]:
    return {"recorded_at": r.recorded_at, "model": r.model, "decode_tok_s": r.decode_tok_s,
            "decode_bytes": r.decode_bytes, "prefill_tok_s": r.prefill_tok_s,
            "prefill_flops_per_token": r.prefill_flops_per_token}


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
    flops = data.get("prefill_flops_per_token")
    if isinstance(flops, bool) or not isinstance(flops, (int, float)) or flops < 0:
        raise DamagedRuns("prefill_flops_per_token must be a number ≥ 0")
    return SpeedRun(recorded_at=float(_positive(data.get("recorded_at")) or 0), model=data["model"],
                    decode_tok_s=_positive(data.get("decode_tok_s"), optional=True), decode_bytes=decode_bytes,
                    prefill_tok_s=_positive(data.get("prefill_tok_s"), optional=True),
                    prefill_flops_per_token=float(flops))


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
