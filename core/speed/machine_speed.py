"""This machine's speed figures as every command and the window use them: kept bandwidths, calibrated.

Rule 1: the bandwidths and compute rate are the ones measured once and kept
        (`machine.bandwidth_store.machine_bandwidths`); the calibration is the median of the
        runs kept here against those figures (`calibration.calibrate`), else the defaults.
Rule 2: a figure a person types replaces a tier afterwards (`bandwidth.with_typed`) and keeps
        the calibration: the calibration is a share of what this machine measured, not of a
        typed what-if figure.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from gguf_budget.core.machine.bandwidth import Bandwidths
from gguf_budget.core.machine.bandwidth_store import TIERS, machine_bandwidths
from gguf_budget.core.speed.calibration import calibrate, read_runs


def speed_figures(model_path: str | Path | None, tiers: tuple[str, ...] = TIERS, *, measure: bool = True,
                  again: bool = False, folder: str | Path | None = None) -> tuple[Bandwidths, tuple[str, ...]]:
    """Rule 1: (the figures with their calibration, why some tiers are assumed)."""
    figures, notes = machine_bandwidths(model_path, tiers, measure=measure, again=again, folder=folder)
    return replace(figures, calibration=calibrate(read_runs(folder), figures.ram, figures.compute)), notes
