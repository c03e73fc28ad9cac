"""`--log-level LEVEL`: the global option of every command line, and where the CLI's log goes.

Rule 1: the app logs through module loggers (`logging.getLogger(__name__)`), all below the
        `gguf_budget` logger; nothing logs through the root logger.
Rule 2: the CLI writes that log to stderr, one line a record, from --log-level up (default
        WARNING, so a normal run prints nothing extra). Calling `log_to_stderr` again replaces
        the handler it installed before (tests call `main` many times in one process).
Rule 3: `--log-level` may stand anywhere on the command line, before or after the command or
        the window's FILE: it is taken out before either is parsed.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import TYPE_CHECKING, Sequence, TextIO

from gguf_budget.gui.cli.args import OneLineParser

if TYPE_CHECKING:  # generic only in the type stubs before Python 3.11
    _Handler = logging.StreamHandler[TextIO]
else:
    _Handler = logging.StreamHandler

APP_LOGGER = "gguf_budget"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
DEFAULT_LOG_LEVEL = "WARNING"
STDERR_FORMAT = "gguf-budget %(levelname)s %(name)s: %(message)s"


class _StderrHandler(_Handler):
    """Writes to `sys.stderr` as it is when the record comes (pytest swaps it per test)."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def add_log_level_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--log-level", type=str.upper, choices=LOG_LEVELS, default=DEFAULT_LOG_LEVEL,
                        metavar="LEVEL", help=f"log to stderr from LEVEL up: {', '.join(LOG_LEVELS)} "
                                              f"(default {DEFAULT_LOG_LEVEL})")


def split_log_level(args: Sequence[str]) -> tuple[str, list[str]]:
    """Rule 3: the --log-level given (or the default), and the arguments without it."""
    parser = OneLineParser(prog="gguf-budget", add_help=False, allow_abbrev=False)
    add_log_level_argument(parser)
    options, rest = parser.parse_known_args(list(args))
    return options.log_level, rest


def log_to_stderr(level: str) -> None:
    """Rule 2: the app's log on stderr from `level` up, in place of any stderr log set up before."""
    logger = logging.getLogger(APP_LOGGER)
    for old in [h for h in logger.handlers if isinstance(h, _StderrHandler)]:
        logger.removeHandler(old)
    handler = _StderrHandler()
    handler.setLevel(level)
    handler.setFormatter(logging.Formatter(STDERR_FORMAT))
    logger.addHandler(handler)
    logger.setLevel(level)
