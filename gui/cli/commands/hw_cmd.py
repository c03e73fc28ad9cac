"""`gguf-budget hw [--json]`: what this machine has right now (host RAM, container limit, GPUs)."""

from __future__ import annotations

import argparse

from gguf_budget.core.views.fit_report import snapshot_dict, snapshot_text
from gguf_budget.core.machine.presets import PRESETS, preset_dict
from gguf_budget.core.views.presets_view import presets_text
from gguf_budget.core.machine.probe import probe_hardware

from gguf_budget.gui.cli.args import say
from gguf_budget.gui.cli.commands.common import emit_json

HELP = ("show this machine's RAM, container memory limit and GPUs (NVIDIA, AMD, Intel, Apple) as the fit "
        "estimate sees them")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--presets", action="store_true",
                   help="list the GPUs and machines `fit --preset` and the machine editor know, with their sources")


def run(args: argparse.Namespace) -> int:
    if args.presets:
        if args.json:
            emit_json([preset_dict(p) for p in PRESETS])
        else:
            say(presets_text())
        return 0
    snapshot = probe_hardware()
    if args.json:
        emit_json(snapshot_dict(snapshot))
    else:
        say(snapshot_text(snapshot))
    return 0
