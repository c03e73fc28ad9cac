"""`gguf-budget hw [--json] [--measure] [--calibration] [--reset-calibration] [--adopt-imported]`: what this machine
has right now (host RAM, container limit, GPUs), and the speed figures every estimate uses: the RAM bandwidth and
compute rate measured once and kept (measured now when none is kept; `--measure` measures again and keeps the best
quiet measurement), and the calibration fitted to this machine's runs.

Rule 1: `--calibration` lists every kept measurement and run with its date, load and whether it is used
        (`core.views.calibration_view`), measuring nothing; `--reset-calibration` forgets them all, so the
        shipped defaults stand; `--adopt-imported` says the imported logs ran on this machine, so they calibrate
        it. Each is one action: it runs alone and prints what it did.
"""

from __future__ import annotations

import argparse

from gguf_budget.core.errors import CommandError
from gguf_budget.core.views.fit_report import snapshot_dict, snapshot_text
from gguf_budget.core.machine.presets import PRESETS, preset_dict
from gguf_budget.core.views.presets_view import presets_text
from gguf_budget.core.machine.probe import probe_hardware
from gguf_budget.core.machine.bandwidth_store import host_key, record_path
from gguf_budget.core.speed.calibration import adopt_imported, runs_path
from gguf_budget.core.speed.machine_speed import calibration_state, reset_calibration, speed_figures
from gguf_budget.core.views.calibration_view import RESET_WORDS, calibration_dict, calibration_lines
from gguf_budget.core.views.speed_view import machine_speed_dict, machine_speed_rows
from gguf_budget.core.views.table import aligned_lines

from gguf_budget.gui.cli.args import say
from gguf_budget.gui.cli.commands.common import emit_json


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--presets", action="store_true",
                   help="list the GPUs and machines `fit --preset` and the machine editor know, with their sources")
    p.add_argument("--measure", action="store_true",
                   help="measure the RAM bandwidth and compute rate again (all cores, about a second); the best "
                        "quiet measurement is kept, one taken while the machine is busy is flagged")
    p.add_argument("--calibration", action="store_true",
                   help="list every kept measurement and calibration run with its date, load and whether it is used")
    p.add_argument("--reset-calibration", action="store_true",
                   help="forget every kept measurement and run: the shipped defaults stand until measured again")
    p.add_argument("--adopt-imported", action="store_true",
                   help="the imported llama.cpp logs ran on this machine: let them calibrate it")


def _calibration(args: argparse.Namespace) -> int:
    """Rule 1."""
    if args.reset_calibration:
        failed = reset_calibration()
        if failed:
            raise CommandError("; ".join(failed))
        say(RESET_WORDS)
    elif args.adopt_imported:
        say(f"{adopt_imported(host_key())} imported run(s) now calibrate this machine")
    state = calibration_state()
    if args.json:
        emit_json(calibration_dict(state, str(record_path()), str(runs_path())))
    elif args.calibration:
        say("\n".join(calibration_lines(state)))
    return 0


def run(args: argparse.Namespace) -> int:
    actions = [args.presets, args.measure, args.calibration, args.reset_calibration, args.adopt_imported]
    if sum(actions) > 1:
        raise CommandError("--presets, --measure, --calibration, --reset-calibration and --adopt-imported "
                           "are one action each: give one")
    if args.presets:
        if args.json:
            emit_json([preset_dict(p) for p in PRESETS])
        else:
            say(presets_text())
        return 0
    if args.calibration or args.reset_calibration or args.adopt_imported:
        return _calibration(args)
    snapshot = probe_hardware()
    figures, notes = speed_figures(None, ("ram", "compute"), again=args.measure)
    if args.json:
        emit_json({**snapshot_dict(snapshot), "speed": machine_speed_dict(figures, str(record_path()), notes)})
    else:
        say("\n".join([snapshot_text(snapshot, gpu_detail=True), *aligned_lines(machine_speed_rows(figures)), *notes]))
    return 0
