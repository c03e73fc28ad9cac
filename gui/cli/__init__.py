"""`gguf-budget`: headless subcommands, or the desktop window when none is given.

Rule 1: exit codes are 0 ok / feasible, 2 bad input, 3 plan impossible. Bad input is any
        `BudgetError` (a model that does not load, a request out of bounds, a plan refused,
        arguments that disagree): one line on stderr, no traceback.
Rule 2: the subcommands never import Qt, so they start fast and run on machines without a display.
Rule 3: `--log-level LEVEL` (default WARNING) is global: it sets the stderr log for a
        subcommand and for the window alike.
Rule 4: `gguf-budget help [COMMAND]` is `gguf-budget [COMMAND] --help`; the top-level help names
        the window's own arguments too (`launch.py`).
Rule 5: start-up is lazy: `--version`, `help` and a bad argument import no command and nothing
        heavy; a command imports its own module only (`commands` Rule 1); the window imports neither the
        commands' shared options (the catalogue, the remote limits) nor the mistyped-command words.
Rule 6: Ctrl-C (KeyboardInterrupt) ends any command with one line, "gguf-budget: interrupted", and
        exit code 130 (128 + SIGINT, as a shell reports it); what the command started is stopped
        on the way out (`measure` stops llama.cpp and everything it started). SIGTERM and SIGHUP
        stop a command the same way (`stop_signals`): "gguf-budget: stopped by SIGTERM", exit 143.
Rule 7: a disk that refuses (a config folder that is a file or read-only, a name too long, a full
        disk) is one line naming why and where, exit 2 — an `OSError` from the disk is not a bug.
Rule 8: run as the program itself (`main()` without arguments: the console script, `python -m`), a
        command's module is imported with the cyclic garbage collector paused, and what the import
        made is then frozen out of later collections (`gc.freeze`): an import makes tens of
        thousands of objects that live as long as the process and no garbage, and the collector
        walked them again some fifty times a `fit` (~10% of its CPU) (`settled`); the window's modules the
        same (`launch` Rule 8). A caller that passes its own arguments (a test, a program hosting the CLI)
        keeps its collector as it was.
"""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import replace
from types import ModuleType
from typing import Sequence

from gguf_budget.core.errors import BudgetError
from gguf_budget.core.regular_file import os_words
from gguf_budget.core.version import __version__
from gguf_budget.core.units import human_bytes
from gguf_budget.core.ranges import HEADER_CAP
from gguf_budget.gui.cli.args import (
    EXIT_BAD_INPUT, EXIT_INTERRUPTED, LLAMA_TAIL, OneLineParser, complain, join_negative_values, ranged, split_tail,
)
from gguf_budget.gui.cli.commands import COMMANDS, Command
from gguf_budget.gui.cli.log_level import add_log_level_argument, log_to_stderr, split_log_level
from gguf_budget.gui.cli.settled import settled_imports
from gguf_budget.gui.cli.stop_signals import Stopped, stop_signals_raise

log = logging.getLogger(__name__)


GLOBAL_OPTIONS_WITH_VALUE = ("--max-header",)
GLOBAL_FLAGS = ("--refresh",)
HELP_WORD = "help"
WINDOW_HELP = """\
the window:
  gguf-budget [FILE] [--budget SIZE] [--ctx N]
                        open the desktop window on FILE, a local file or a URL, hf://… or
                        owner/repo:QUANT (default: the bundled demo model)
  gguf-budget FILE --screenshot PATH [--view plan|sweep|compare|quants] [--compare FILE2]
                        [--size WxH] [--preset NAME]
                        render the window to a PNG offscreen and exit (no display needed)

`gguf-budget help COMMAND` (or COMMAND --help) shows a command's options."""


def _command_word(args: Sequence[str]) -> str | None:
    """The first argument after the global options: a subcommand, or else the window's FILE."""
    i = 0
    while i < len(args) and (args[i] in GLOBAL_OPTIONS_WITH_VALUE or args[i] in GLOBAL_FLAGS
                             or args[i].split("=", 1)[0] in GLOBAL_OPTIONS_WITH_VALUE):
        i += 2 if args[i] in GLOBAL_OPTIONS_WITH_VALUE else 1
    return args[i] if i < len(args) else None


def _subcommand_parser(chosen: str | None, own_process: bool = False) -> argparse.ArgumentParser:
    """Every command is listed, but only the `chosen` one's arguments are defined (and its module imported: Rule 8 when
    this is the program's `own_process`)."""
    from gguf_budget.gui.cli.commands.common import RemoteOptions  # Rule 5: not with the window

    parser = OneLineParser(prog="gguf-budget", description="Will this GGUF model fit?", epilog=WINDOW_HELP,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"gguf-budget {__version__}")
    parser.add_argument("--max-header", type=ranged(HEADER_CAP), default=RemoteOptions.limits.cap, metavar="SIZE",
                        help="for a model given by URL: the most header bytes to read over the network, "
                             f"{HEADER_CAP.text} (default {human_bytes(RemoteOptions.limits.cap)})")
    parser.add_argument("--refresh", action="store_true",
                        help="for a model given by URL: read its header again instead of using the cached one")
    add_log_level_argument(parser)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, command in COMMANDS.items():
        p = sub.add_parser(name, help=command.help, description=command.help)
        if name == chosen:
            (_settled(command) if own_process else command.load()).add_arguments(p)
    return parser


def _settled(command: Command) -> ModuleType:
    """Rule 8: the command's module, imported with the collector paused, and frozen out of its later collections."""
    with settled_imports():
        return command.load()


def _help_asked(args: list[str]) -> list[str]:
    """`help` → `--help`, `help COMMAND` → `COMMAND --help` (the module's rule)."""
    i = args.index(HELP_WORD) if _command_word(args) == HELP_WORD else -1
    if i < 0:
        return args
    rest = [a for a in args[i + 1:i + 2] if a in COMMANDS]
    return args[:i] + rest + ["--help"]


def main(argv: Sequence[str] | None = None) -> int:
    """Rule 6: Ctrl-C anywhere in a command (or the launcher) is one line and exit 130; SIGTERM and SIGHUP
    the same, with their own line and code (`stop_signals`)."""
    try:
        with stop_signals_raise():
            return _main(argv)
    except Stopped as e:
        complain(e.words)
        return e.exit_code
    except KeyboardInterrupt:
        complain("gguf-budget: interrupted")
        return EXIT_INTERRUPTED


def _main(argv: Sequence[str] | None) -> int:
    own, tail = split_tail(sys.argv[1:] if argv is None else argv)
    level, args = split_log_level(_help_asked(join_negative_values(own)))
    log_to_stderr(level)
    word = _command_word(args)
    if word is None and not args or (word not in COMMANDS and word not in ("-h", "--help", "--version")):
        from gguf_budget.gui.cli.launch import launch

        mistyped = None
        if word is not None:
            from gguf_budget.core.views.command_words import unknown_command  # Rule 5

            mistyped = unknown_command(word, tuple(COMMANDS))
        if mistyped is not None:
            complain(mistyped)
            return EXIT_BAD_INPUT

        if tail:
            complain("gguf-budget: the window takes no llama.cpp arguments after -- (File ▸ Ask about a llama.cpp "
                     "command… takes a whole command)")
            return EXIT_BAD_INPUT
        return launch(args, own_process=argv is None)
    parsed = _subcommand_parser(word, own_process=argv is None).parse_args(args)
    if tail and not hasattr(parsed, LLAMA_TAIL):
        complain(f"gguf-budget {parsed.command}: takes no llama.cpp arguments after --")
        return EXIT_BAD_INPUT
    setattr(parsed, LLAMA_TAIL, tail)
    log.debug("running %s", parsed.command)
    try:
        from gguf_budget.gui.cli.commands.common import RemoteOptions

        RemoteOptions.limits = replace(RemoteOptions.limits, cap=parsed.max_header,
                                       first_chunk=min(RemoteOptions.limits.first_chunk, parsed.max_header))
        RemoteOptions.refresh = parsed.refresh
        code: int = COMMANDS[parsed.command].load().run(parsed)
        return code
    except BudgetError as e:
        log.debug("%s refused its input", parsed.command, exc_info=True)
        complain(f"gguf-budget {parsed.command}: {e}")
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return 0
    except OSError as e:  # Rule 7: the disk's answer, not a bug
        log.debug("%s met a disk error", parsed.command, exc_info=True)
        complain(f"gguf-budget {parsed.command}: {os_words(e)}")
        return EXIT_BAD_INPUT

