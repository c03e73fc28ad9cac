"""`gguf-budget inspect FILE [--json]`: the model's facts and tensor-role inventory.

`inspect --catalog NAME` inspects a bundled catalogue skeleton instead of a file, and
`inspect --catalog list` lists the names; an unknown NAME is bad input (exit 2) and the
message lists the valid names (`common` Rule 3, shared by every model command).
"""

from __future__ import annotations

import argparse
from dataclasses import asdict

from gguf_budget.core.views.catalogue_view import entry_dict, entry_text
from gguf_budget.core.views.inspect_report import inspect_dict, inspect_text

from gguf_budget.gui.cli.args import say
from gguf_budget.gui.cli.commands.common import add_model_arguments, chosen_model, emit_json, listed_catalogue



def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def run(args: argparse.Namespace) -> int:
    if listed_catalogue(args):
        return 0
    model = chosen_model(args)
    if args.json:
        extra = {"source": asdict(model.source)} if model.source is not None else {}
        if model.entry is not None:
            extra["catalogue"] = entry_dict(model.entry)
        emit_json({**inspect_dict(model.spec), **extra})
    elif model.entry is not None:
        say(f"{inspect_text(model.spec)}\n\n{entry_text(model.entry)}")
    else:
        say(inspect_text(model.spec, model.source))
    return 0
