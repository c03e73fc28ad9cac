"""`gguf-budget hw [--json] [--measure]`: what this machine has right now (host RAM, container limit, GPUs), and
the speed figures every estimate uses: the RAM bandwidth and compute rate measured once and kept (measured now
when none is kept; `--measure` measures again and replaces them)."""

from __future__ import annotations

import argparse

from gguf_budget.core.views.fit_report import snapshot_dict, snapshot_text
from gguf_budget.core.machine.presets import PRESETS, preset_dict
from gguf_budget.core.views.presets_view import presets_text
from gguf_budget.core.machine.probe import probe_hardware
from gguf_budget.core.machine.bandwidth_store import record_path
from gguf_budget.core.speed.machine_speed import speed_figures
from gguf_budget.core.views.speed_view import machine_speed_dict, machine_speed_rows
from gguf_budget.core.views.table import aligned_lines

from gguf_budget.gui.cli.args import say
from gguf_budget.gui.cli.commands.common import emit_json


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--presets", action="store_true",
                   help="list the GPUs and machines `fit --preset` and the machine editor know, with their sources")
    p.add_argument("--measure", action="store_true",
                   help="measure the RAM bandwidth and compute rate again (all cores, about a second) and keep them")


def run(args: argparse.Namespace) -> int:
    if args.presets:
        if args.json:
            emit_json([preset_dict(p) for p in PRESETS])
        else:
            say(presets_text())
        return 0
    snapshot = probe_hardware()
    figures, notes = speed_figures(None, ("ram", "compute"), again=args.measure)
    if args.json:
        emit_json({**snapshot_dict(snapshot), "speed": machine_speed_dict(figures, str(record_path()), notes)})
    else:
        say("\n".join([snapshot_text(snapshot, gpu_detail=True), *aligned_lines(machine_speed_rows(figures)), *notes]))
    return 0
