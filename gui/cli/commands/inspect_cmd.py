"""`gguf-budget inspect FILE [--json]`: the model's facts and tensor-role inventory.

`inspect --catalog NAME` inspects a bundled catalogue skeleton instead of a file, and
`inspect --catalog list` lists the names; an unknown NAME is bad input (exit 2) and the
message lists the valid names.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict

from gguf_budget.core.model.catalogue import CATALOGUE, catalogue_path, find_entry
from gguf_budget.core.views.catalogue_view import catalogue_text, entry_dict, entry_text
from gguf_budget.core.views.inspect_report import inspect_dict, inspect_text

from gguf_budget.gui.cli.commands.common import CommandError, emit_json, load, load_with_source

HELP = "show what a GGUF file says about its model (header only, any shard of a split model)"
LIST = "list"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", help="a .gguf file or any shard of a split model, or a URL, hf://owner/repo/"
                   "file.gguf or owner/repo:QUANT (header only; omit with --catalog)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--catalog", metavar="NAME",
                   help=f"inspect a bundled catalogue skeleton instead of a file; '{LIST}' lists the names")


def run(args: argparse.Namespace) -> int:
    if args.catalog is not None:
        return _run_catalog(args)
    if args.file is None:
        raise CommandError(f"give a FILE, or --catalog NAME (--catalog {LIST} shows the names)")
    spec, source = load_with_source(args.file)
    if args.json:
        emit_json(inspect_dict(spec) if source is None else {**inspect_dict(spec), "source": asdict(source)})
    else:
        print(inspect_text(spec))
    return 0


def _run_catalog(args: argparse.Namespace) -> int:
    if args.file is not None:
        raise CommandError("give either FILE or --catalog NAME, not both")
    if args.catalog.strip().lower() == LIST:
        if args.json:
            emit_json([entry_dict(e) for e in CATALOGUE])
        else:
            print(catalogue_text())
        return 0
    entry = find_entry(args.catalog)
    spec = load(str(catalogue_path(entry)))
    if args.json:
        emit_json({**inspect_dict(spec), "catalogue": entry_dict(entry)})
    else:
        print(f"{inspect_text(spec)}\n\n{entry_text(entry)}")
    return 0
