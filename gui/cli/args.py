"""What every command line of the app shares: exit codes, a one-line parser, size and count arguments.

Rule 1: exit codes are 0 ok / feasible, 2 bad input (one line on stderr, no traceback), 3 plan
        impossible or model does not fit.
Rule 2: a bad argument is one line naming the option, never argparse's usage dump.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

from gguf_budget.core.errors import RequestError
from gguf_budget.core.units import parse_size

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_IMPOSSIBLE = 3


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports bad arguments in one line (no usage dump), exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: {message} (see --help)\n")


def size_arg(text: str) -> int:
    """argparse type for sizes such as 512M, 1.5G, 2GiB or plain bytes."""
    try:
        return parse_size(text)
    except RequestError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
