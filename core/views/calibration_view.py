"""What `hw --calibration` prints and the window's Calibration dialog lists: everything kept, judged.

Rule 1: one row per kept measurement (RAM, compute) and per kept run, newest first, each with its
        date, the load average beside it (against its cores) and whether it is used, or why not,
        in the words `bandwidth_store.judged` and `calibration.judge_runs` give; the figures and
        the calibration in use come first. Text and JSON carry the same rows (`calibration_rows`,
        `calibration_dict`); a model name or device read from a file is shown escaped.
Rule 2: a run's machine is said as "this machine", "imported" (machine unknown) or "another
        machine": the id itself is a hash and says nothing to a person.
"""

from __future__ import annotations

from typing import Any

from gguf_budget.core.machine.bandwidth import measured_date
from gguf_budget.core.machine.bandwidth_store import Measurement, Use, host_key
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.speed.calibration import JudgedRun, SpeedRun
from gguf_budget.core.speed.machine_speed import CalibrationState
from gguf_budget.core.units import human_bytes, significant
from gguf_budget.core.views.speed_view import machine_speed_dict, machine_speed_rows
from gguf_budget.core.views.table import aligned_lines

HEADERS = ("date", "what", "figure", "load", "used")
RESET_WORDS = "calibration reset: the shipped defaults stand until this machine is measured again"


def _load(load: float | None, cores: int | None) -> str:
    if load is None:
        return "unknown"
    return f"{load:.1f} on {cores} cores" if cores else f"{load:.1f}"


def _rate(m: Measurement) -> str:
    return f"{human_bytes(m.rate)}/s" if m.tier == "ram" else f"{m.rate / 1e9:,.0f} GFLOP/s"


def _machine(run: SpeedRun) -> str:
    """Rule 2."""
    if run.machine is None:
        return "imported"
    return "this machine" if run.machine == host_key() else "another machine"


def _speeds(run: SpeedRun) -> str:
    decode = f"decode {significant(run.decode_tok_s)} tok/s" if run.decode_tok_s else "no decode"
    prefill = f"prefill {significant(run.prefill_tok_s)} tok/s" if run.prefill_tok_s else "no prefill"
    return f"{decode}, {prefill}"


def _used(j: JudgedRun) -> str:
    if j.decode == j.prefill:
        return j.decode
    return f"decode: {j.decode}; prefill: {j.prefill}"


def measurement_row(m: Measurement, use: Use) -> tuple[str, str, str, str, str]:
    """Rule 1 for one measurement."""
    what = "RAM bandwidth" if m.tier == "ram" else "compute"
    return (measured_date(m.measured_at) or "", what, _rate(m), _load(m.load, m.cores), use.value)


def run_row(j: JudgedRun) -> tuple[str, str, str, str, str]:
    """Rule 1 for one run."""
    r = j.run
    where = r.tier.value if r.device == r.tier.value else f"{r.tier.value} {safe_text(r.device, 40)}"
    what = f"{safe_text(r.model, 60)} run ({where}, {_machine(r)})"
    return (measured_date(r.recorded_at) or "", what, _speeds(r), _load(r.load, r.cores), _used(j))


def calibration_rows(state: CalibrationState) -> list[tuple[str, ...]]:
    """Rule 1: the header row, then every measurement and run."""
    return [HEADERS, *(measurement_row(m, u) for m, u in state.measurements), *(run_row(j) for j in state.runs)]


def calibration_lines(state: CalibrationState) -> list[str]:
    """`hw --calibration`'s text: the figures in use, then the table (or a line saying nothing is kept)."""
    figures = aligned_lines(machine_speed_rows(state.figures))
    if not state.measurements and not state.runs:
        return [*figures, "", "nothing measured or run here yet: the shipped defaults are in use"]
    return [*figures, "", *aligned_lines(calibration_rows(state))]


def calibration_dict(state: CalibrationState, record: str, runs_file: str) -> dict[str, Any]:
    """`hw --calibration --json`: the figures in use and every measurement and run, judged."""
    return {
        "speed": machine_speed_dict(state.figures, record, ()),
        "runs_file": runs_file,
        "measurements": [{"tier": m.tier, "rate": m.rate, "date": measured_date(m.measured_at),
                          "measured_at": m.measured_at, "load": m.load, "cores": m.cores, "detail": m.detail,
                          "use": u.value, "used": u in (Use.USED, Use.PROVISIONAL)}
                         for m, u in state.measurements],
        "runs": [{"model": j.run.model, "date": measured_date(j.run.recorded_at), "recorded_at": j.run.recorded_at,
                  "machine": _machine(j.run), "tier": j.run.tier.value, "device": j.run.device,
                  "decode_tok_s": j.run.decode_tok_s, "prefill_tok_s": j.run.prefill_tok_s,
                  "load": j.run.load, "cores": j.run.cores, "decode": j.decode, "prefill": j.prefill,
                  "used": "used" in (j.decode, j.prefill)} for j in state.runs],
    }
