"""What every subcommand shares: loading a model (a file, or a URL read header-only), printing JSON.

Rule 1: FILE may be a local path or what `core.remote.refs` reads as remote (a URL, `hf://…`,
        `owner/repo:QUANT`); a local path always wins (refs.py Rule 3), and a path given for a
        local file only (`--model`) is never read as remote (`load_local`). A remote read says on
        stderr what it cost, so stdout stays the command's own output (and valid JSON with --json).
Rule 2: the remote limits (`--max-header`) and `--refresh` are set once per process by `main`, like
        the log level.
Rule 3: every model command takes FILE or `--catalog NAME` (a bundled catalogue skeleton), one
        of the two; `--catalog list` prints the names (JSON with --json) and the command ends there.
Rule 4: what a command may not need is imported where it is used: the GGUF reader when a model
        is read, the HTTP and Hugging Face clients only for a remote model (a second or more of
        start-up otherwise; `benchmarks/bench_cli.py`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gguf_budget.core.errors import CommandError, ModelLoadError
from gguf_budget.core.model.catalogue import CATALOGUE, CatalogueEntry, catalogue_path, find_entry
from gguf_budget.core.remote.limits import FetchLimits
from gguf_budget.core.remote.refs import hub_hint, parse_ref
from gguf_budget.core.views.catalogue_view import catalogue_text, entry_dict
from gguf_budget.gui.cli.args import complain, say

if TYPE_CHECKING:
    from gguf_budget.core.model.spec import ModelSpec
    from gguf_budget.core.remote.source import RemoteSource

CATALOG_LIST = "list"


class RemoteOptions:
    """Rule 2: how remote headers are read in this process."""

    limits = FetchLimits()
    refresh = False


def load(path: str) -> ModelSpec:
    return load_with_source(path)[0]


def load_with_source(path: str) -> tuple[ModelSpec, RemoteSource | None]:
    """The model at `path` (Rule 1), and where its header came from when it was remote (imports: Rule 4)."""
    ref = parse_ref(path)
    if ref is None:
        return load_local(path), None
    from gguf_budget.core.remote.open import open_remote

    spec, source = open_remote(ref, limits=RemoteOptions.limits, refresh=RemoteOptions.refresh)
    complain(f"gguf-budget: {source.summary()}")
    return spec, source


def load_local(path: str) -> ModelSpec:
    """The model in the local file `path`, never a remote one (Rule 1); a missing path that reads like a
    Hub repository says how to name one."""
    hint = None if os.path.exists(path) else hub_hint(path)
    if hint is not None:
        raise ModelLoadError(f"no such file: {path} ({hint})")
    from gguf_budget.core.model.loader import load_model

    return load_model(path)


def emit_json(payload: Any) -> None:
    json.dump(payload, sys.stdout, indent=2)
    sys.stdout.write("\n")


@dataclass(frozen=True)
class ChosenModel:
    """The model a command was given (Rule 3): from a file or URL (`source` when remote), or the catalogue."""

    spec: ModelSpec
    source: RemoteSource | None = None
    entry: CatalogueEntry | None = None


def add_model_arguments(p: argparse.ArgumentParser) -> None:
    """FILE or --catalog NAME, the same for every model command (Rule 3)."""
    p.add_argument("file", nargs="?", help="a .gguf file or any shard of a split model, or a URL, hf://owner/repo/"
                   "file.gguf or owner/repo:QUANT (header only; omit with --catalog)")
    p.add_argument("--catalog", metavar="NAME",
                   help=f"use a bundled catalogue skeleton instead of a file; '{CATALOG_LIST}' lists the names")


def listed_catalogue(args: argparse.Namespace) -> bool:
    """Print the catalogue's names when `--catalog list` was asked (Rule 3); True when it was."""
    if args.catalog is None or args.catalog.strip().lower() != CATALOG_LIST:
        return False
    if args.file is not None:
        raise CommandError("give either FILE or --catalog NAME, not both")
    if getattr(args, "json", False):
        emit_json([entry_dict(e) for e in CATALOGUE])
    else:
        say(catalogue_text())
    return True


def chosen_model(args: argparse.Namespace) -> ChosenModel:
    """The model FILE or --catalog NAME names (Rule 3); CommandError in words otherwise."""
    if args.catalog is None:
        if args.file is None:
            raise CommandError(f"give a FILE, or --catalog NAME (--catalog {CATALOG_LIST} shows the names)")
        return ChosenModel(*load_with_source(args.file))
    if args.file is not None:
        raise CommandError("give either FILE or --catalog NAME, not both")
    entry = find_entry(args.catalog)  # a RequestError naming the valid names
    return ChosenModel(load(str(catalogue_path(entry))), entry=entry)
