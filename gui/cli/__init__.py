"""`gguf-budget`: headless subcommands, or the desktop window when none is given.

Exit codes: 0 ok / feasible, 2 bad input (one line on stderr, no traceback), 3 plan impossible.
The subcommands never import Qt, so they start fast and run on machines without a display.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from gguf_budget.core import __version__
from gguf_budget.gui.cli.args import EXIT_BAD_INPUT, OneLineParser
from gguf_budget.gui.cli.commands import COMMANDS, CommandError


def _subcommand_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="gguf-budget", description="Will this GGUF model fit?")
    parser.add_argument("--version", action="version", version=f"gguf-budget {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, command in COMMANDS.items():
        command.add_arguments(sub.add_parser(name, help=command.HELP, description=command.HELP))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or (args[0] not in COMMANDS and args[0] not in ("-h", "--help", "--version")):
        from gguf_budget.gui.cli.launch import launch

        return launch(args)
    parsed = _subcommand_parser().parse_args(args)
    try:
        return COMMANDS[parsed.command].run(parsed)
    except CommandError as e:
        print(f"gguf-budget {parsed.command}: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return 0

