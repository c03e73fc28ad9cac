"""`gguf-budget`: headless subcommands, or the desktop window when none is given.

Exit codes: 0 ok / feasible, 2 bad input (one line on stderr, no traceback), 3 plan impossible.
The subcommands never import Qt, so they start fast and run on machines without a display.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import Sequence

from gguf_budget.core import __version__
from gguf_budget.core.units import human_bytes
from gguf_budget.gui.cli.args import EXIT_BAD_INPUT, OneLineParser, size_arg
from gguf_budget.gui.cli.commands import COMMANDS, CommandError
from gguf_budget.gui.cli.commands.common import RemoteOptions


GLOBAL_OPTIONS_WITH_VALUE = ("--max-header",)


def _command_word(args: Sequence[str]) -> str | None:
    """The first argument after the global options: a subcommand, or else the window's FILE."""
    i = 0
    while i < len(args) and args[i] in GLOBAL_OPTIONS_WITH_VALUE:
        i += 2
    while i < len(args) and args[i].split("=", 1)[0] in GLOBAL_OPTIONS_WITH_VALUE:
        i += 1
    return args[i] if i < len(args) else None


def _header_cap(text: str) -> int:
    cap = size_arg(text)
    if cap < 1024:
        raise argparse.ArgumentTypeError(f"the header cap must be at least 1K: {text!r}")
    return cap


def _subcommand_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="gguf-budget", description="Will this GGUF model fit?")
    parser.add_argument("--version", action="version", version=f"gguf-budget {__version__}")
    parser.add_argument("--max-header", type=_header_cap, default=RemoteOptions.limits.cap, metavar="SIZE",
                        help="for a model given by URL: the most header bytes to read over the network "
                             f"(default {human_bytes(RemoteOptions.limits.cap)})")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, command in COMMANDS.items():
        command.add_arguments(sub.add_parser(name, help=command.HELP, description=command.HELP))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    word = _command_word(args)
    if word is None and not args or (word not in COMMANDS and word not in ("-h", "--help", "--version")):
        from gguf_budget.gui.cli.launch import launch

        return launch(args)
    parsed = _subcommand_parser().parse_args(args)
    try:
        RemoteOptions.limits = replace(RemoteOptions.limits, cap=parsed.max_header,
                                       first_chunk=min(RemoteOptions.limits.first_chunk, parsed.max_header))
        return COMMANDS[parsed.command].run(parsed)
    except CommandError as e:
        print(f"gguf-budget {parsed.command}: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return 0

