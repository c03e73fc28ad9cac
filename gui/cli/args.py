"""What every command line of the app shares: exit codes, a one-line parser, ranged numbers, output.

Rule 1: exit codes are 0 ok / feasible, 2 bad input (one line on stderr, no traceback), 3 plan
        impossible or model does not fit, 130 interrupted (Ctrl-C).
Rule 2: a bad argument is one line naming the option, never argparse's usage dump; every
        number is read against its range in `core.ranges` (`ranged`), which --help states.
Rule 3: a value that starts with a minus and a digit (`--budget -1G`, `-ts -1,2`) is the option's
        value, so its error is the value's ("a size cannot be negative"), not argparse's "expected one
        argument".
Rule 5: a size with a decimal-looking unit (`--budget 5GB`) is read as binary units, as the
        window reads it, and one line on stderr says so (`units.binary_unit_note`); a rate
        (`--vram-bw 1008GB/s`) is read as spec sheets print it and said back (`units.rate_reading`).
Rule 4: everything printed goes through the core's one escaping function: reports line by
        line (`say`), messages as one line (`complain`, the parser's errors), because a model's
        name, architecture and path are written by strangers and may hold terminal escapes,
        bidi controls or bytes that are not UTF-8.
Rule 6: a report's lines are at most 100 columns, longer ones wrapped by the core's one rule
        (`table.fit_width`), a command line kept whole (`table.PASTED`); JSON, Markdown and a command to paste or pipe (`--print-command`)
        are written as they are (`wrap=False`).
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Callable, NoReturn, Sequence

from gguf_budget.core.errors import RequestError
from gguf_budget.core.ranges import Range
from gguf_budget.core.safe_text import safe_lines, safe_text
from gguf_budget.core.units import binary_unit_note, rate_reading
from gguf_budget.core.views.table import PASTED
from gguf_budget.core.views.table import fit_width

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_IMPOSSIBLE = 3
EXIT_INTERRUPTED = 130
NEGATIVE_VALUE = re.compile(r"-[0-9.]")
OPTION = re.compile(r"--?[A-Za-z][\w-]*$")
"""Rule 3: an option's name, long (`--budget`) or short (`-ts`), never a negative number itself."""
MESSAGE_LIMIT = 2000
"""A one-line message is cut beyond this many characters (a key can embed a 1 MiB string)."""


def say(text: str, end: str = "\n", wrap: bool = True) -> None:
    """Print a report the program laid out, wrapped to 100 columns (Rule 6); untrusted text cannot break out of its line."""
    text = safe_lines(text)
    sys.stdout.write((fit_width(text, whole=PASTED) if wrap else text) + end)


def complain(message: str) -> None:
    """One escaped line on stderr."""
    sys.stderr.write(safe_text(message, MESSAGE_LIMIT) + "\n")


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports bad arguments in one line (no usage dump), exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, safe_text(f"{self.prog}: {message} (see --help)", MESSAGE_LIMIT) + "\n")


def join_negative_values(args: Sequence[str]) -> list[str]:
    """['--budget', '-1G'] → ['--budget=-1G'], ['-ts', '-1,2'] → ['-ts=-1,2'] (Rule 3); everything else unchanged."""
    out: list[str] = []
    for arg in args:
        previous = out[-1] if out else ""
        if NEGATIVE_VALUE.match(arg) and OPTION.match(previous) and "=" not in previous:
            out[-1] = f"{previous}={arg}"
        else:
            out.append(arg)
    return out


LLAMA_TAIL = "llama_tail"
SEPARATOR = "--"


def split_tail(args: Sequence[str]) -> tuple[list[str], list[str]]:
    """(the tool's own arguments, what follows the first `--`: a llama.cpp program's own arguments, kept as typed)."""
    words = list(args)
    if SEPARATOR not in words:
        return words, []
    at = words.index(SEPARATOR)
    return words[:at], words[at + 1:]


def ranged(limits: Range) -> Callable[[str], int]:
    """argparse type for a number in `limits` (a size such as 512M, 1.5G, 2GiB for byte ranges)."""

    def parse(text: str) -> int:
        if limits.unit in ("bytes", "bytes/s") and text.strip().startswith("-"):
            raise argparse.ArgumentTypeError(f"a size cannot be negative: {text!r}")
        try:
            value = limits.parse(text)
        except RequestError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        note = binary_unit_note(text) if limits.unit == "bytes" else None
        if limits.unit == "bytes/s" and not text.strip().isdigit():
            note = rate_reading(text)
        if note:
            complain(f"note: {note}")
        return value

    return parse
