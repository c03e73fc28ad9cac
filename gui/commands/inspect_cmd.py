"""`gguf-budget inspect FILE [--json]`: the model's facts and tensor-role inventory."""

from __future__ import annotations

import argparse

from gguf_budget.core.inspect_report import inspect_dict, inspect_text

from .common import emit_json, load

HELP = "show what a GGUF file says about its model (header only, any shard of a split model)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="a .gguf file, or any shard of a split model")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def run(args: argparse.Namespace) -> int:
    spec = load(args.file)
    if args.json:
        emit_json(inspect_dict(spec))
    else:
        print(inspect_text(spec))
    return 0
