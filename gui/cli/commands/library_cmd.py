"""`gguf-budget library [--add DIR] [--remove DIR] [--budget SIZE] [--json]`: every GGUF model on this machine.

The stores (`core.library.stores`: Hugging Face cache, LM Studio, Ollama, llama.cpp's cache,
GPT4All, Jan) and the folders added with `--add` (remembered in the library settings the window
shares) are scanned; each model gets its full-load verdict on this machine — or the one
`--preset`/`--host-available`/`--no-gpu` describe, as for `fit` — and its budget plan at `--budget`
(default: this machine's usable RAM, said in the output). Unreadable files are listed with why.
Exit codes: 0 (a listing is a report), 2 bad input.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable
from functools import partial
from pathlib import Path

from gguf_budget.core.errors import CommandError
from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.units import human_bytes
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.machine.usable import DEFAULT_HOST_RESERVE, usable_ram
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.library import config
from gguf_budget.core.explorer.llama_question import ask
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.library.assess import Assessment, LibrarySettings, assess, assessment_key, judged_machine
from gguf_budget.core.library.scan import Scan, scan
from gguf_budget.core.library.stores import store_roots
from gguf_budget.core.views.library_view import library_dict, library_text
from gguf_budget.core.ranges import BUDGET, CONTEXT, MEMORY
from gguf_budget.core.regular_file import is_folder
from gguf_budget.gui.cli.args import ranged, say
from gguf_budget.gui.cli.commands.common import emit_json
from gguf_budget.gui.cli.commands.llama_args import add_llama_arguments, llama_command
from gguf_budget.gui.cli.commands.machine_args import machine



def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--add", metavar="DIR", help="add a folder to the library (remembered), then list")
    p.add_argument("--remove", metavar="DIR", help="remove a folder from the library, then list")
    p.add_argument("--budget", type=ranged(BUDGET), metavar="SIZE",
                   help=f"RAM budget for the budget plans, {BUDGET.text} (default: this machine's usable RAM; "
                        "0 = unlimited)")
    p.add_argument("--ctx-cap", type=ranged(CONTEXT), metavar="N",
                   help=f"the most an automatic ctx may take, {CONTEXT.text} (default: each model's trained context; "
                        "each full load is judged as `fit` judges it)")
    p.add_argument("--host-available", type=ranged(MEMORY), metavar="SIZE",
                   help=f"hypothetical free host RAM, {MEMORY.text}")
    p.add_argument("--no-gpu", action="store_true", help="judge the full load for the host only")
    p.add_argument("--host-reserve", type=ranged(MEMORY), default=DEFAULT_HOST_RESERVE, metavar="SIZE",
                   help=f"host RAM kept back (default {human_bytes(DEFAULT_HOST_RESERVE)})")
    p.add_argument("--preset", metavar="NAME[,NAME…]", help="a hypothetical machine from the preset table, as for fit")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(gpu_total=None, gpu_free=None, gpu_count=None)
    add_llama_arguments(p)


def run(args: argparse.Namespace) -> int:
    if args.ctx_cap is not None and args.ctx_cap < 1:
        raise CommandError("--ctx-cap must be at least 1")
    for flag, folder, change in (("--add", args.add, config.add_folder), ("--remove", args.remove, config.remove_folder)):
        if folder is None:
            continue
        if not folder.strip():
            raise CommandError(f"{flag}: the folder name is empty (write . for the current folder)")
        if change is config.add_folder and not is_folder(folder):
            raise CommandError(f"--add: not a folder: {folder}")
        change(folder)
    snapshot = machine(args)
    reserves = Reserves(host=args.host_reserve)
    command = llama_command(args)
    like = None
    if command is not None:
        if command.model_source is not None:
            raise CommandError("library judges every model: give the llama.cpp options without -m/-mu/-hf")
        question = ask(command, ExplorerState(machine=snapshot, reserves=reserves), None)
        like = question.state.fit_request(None)
        reserves = question.state.reserves
    settings = LibrarySettings(snapshot, _budget(args, judged_machine(snapshot)), args.ctx_cap, reserves, like)
    roots = store_roots(Path.home(), os.environ, config.read_folders())
    result: Scan[Assessment] = scan(roots, partial(assess, settings=settings), progress=_progress(args.json),
                                    assess_key=assessment_key(settings))
    if args.json:
        emit_json(library_dict(result, settings))
    else:
        say(library_text(result, settings))
    return 0


def _budget(args: argparse.Namespace, snapshot: HardwareSnapshot) -> Budget:
    """The typed budget, else this machine's usable RAM (`core.machine.usable`) as the verdicts see it
    (`assess` Rule 5: free RAM rounded down to a step, so a rescan a minute later keeps them)."""
    if args.budget is not None:
        return Budget.from_cli(args.budget)
    usable = usable_ram(snapshot, args.host_reserve)
    if not usable:
        raise CommandError("this machine has no usable RAM to plan with (its RAM could not be read, or the "
                           "host reserve takes it all); give --budget SIZE")
    return Budget.of(usable)


def _progress(quiet: bool) -> Callable[[int, int], None]:
    """Progress on stderr for a person at a terminal; nothing when piped or for JSON."""
    if quiet or not sys.stderr.isatty():
        return lambda done, total: None

    def show(done: int, total: int) -> None:
        sys.stderr.write(f"\rreading headers: {done}/{total}" + ("\n" if done == total else ""))

    return show
