"""This machine's speed figures as every command and the window use them: kept bandwidths, calibrated.

Rule 1: the bandwidths and compute rate are the ones measured once and kept
        (`machine.bandwidth_store.machine_bandwidths`: the best quiet measurement); the
        calibration is fitted to this machine's CPU runs kept here against those figures
        (`calibration.judge_runs`: the runs of other machines, of GPUs, busy, or outside the
        physical band calibrate nothing), else the defaults; this machine's quiet GPU runs go with
        the figures (`gpu_runs`) for the GPU tier they ran on, and nowhere else.
Rule 2: a figure a person types replaces a tier afterwards (`bandwidth.with_typed`) and keeps
        the calibration: the calibration is a share of what this machine measured, not of a
        typed what-if figure.
Rule 3: `calibration_state` is everything kept, judged: every measurement and every run with its
        date, load and whether it is used — what `hw --calibration` prints and the window's
        Calibration dialog lists. `reset_calibration` forgets both files: the shipped defaults
        stand until the next measurement.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from gguf_budget.core.machine.bandwidth import Bandwidths
from gguf_budget.core.machine.bandwidth_store import (
    TIERS, Measurement, Use, forget_record, host_key, judged, machine_bandwidths, read_record,
)
from gguf_budget.core.speed.calibration import JudgedRun, forget_runs, gpu_runs, judge_runs, read_runs


def speed_figures(model_path: str | Path | None, tiers: tuple[str, ...] = TIERS, *, measure: bool = True,
                  again: bool = False, folder: str | Path | None = None) -> tuple[Bandwidths, tuple[str, ...]]:
    """Rule 1: (the figures with their calibration, why some tiers are assumed)."""
    figures, notes = machine_bandwidths(model_path, tiers, measure=measure, again=again, folder=folder)
    runs, machine = read_runs(folder), host_key()
    _, calibration = judge_runs(runs, figures.ram, figures.compute, machine)
    return replace(figures, calibration=calibration, gpu_runs=gpu_runs(runs, machine)), notes


@dataclass(frozen=True)
class CalibrationState:
    """Rule 3: the figures in use, each kept measurement and run judged."""

    figures: Bandwidths
    measurements: tuple[tuple[Measurement, Use], ...]
    runs: tuple[JudgedRun, ...]


def calibration_state(folder: str | Path | None = None) -> CalibrationState:
    """Rule 3, measuring nothing."""
    figures, _ = machine_bandwidths(None, ("ram", "compute"), measure=False, folder=folder)
    record = read_record(folder)
    kept = () if record is None else record.measurements
    measurements = (*judged(kept, "ram"), *judged(kept, "compute"))
    stored, machine = read_runs(folder), host_key()
    runs, calibration = judge_runs(stored, figures.ram, figures.compute, machine)
    return CalibrationState(replace(figures, calibration=calibration, gpu_runs=gpu_runs(stored, machine)), measurements,
                            runs)


def reset_calibration(folder: str | Path | None = None) -> tuple[str, ...]:
    """Rule 3: why something could not be forgotten (empty when both files are gone)."""
    return tuple(why for why in (forget_runs(folder), forget_record(folder)) if why)
