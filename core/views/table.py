"""The one aligned text table every text view prints (inspect, hw, fit, the plan report, the catalogue).

Rule 1: each column is as wide as its widest cell and columns are two spaces apart; the last
        cell of a row is never padded, so no line ends in spaces.
Rule 2: rows may differ in length; a column's width counts only the rows it is not the last of.
Rule 3: every line the command line prints is at most `WIDTH` columns (`fit_width`): a longer
        line wraps at spaces with a hanging indent under its label column (the text before its
        first two-space gap), or under its own indent plus four when that leaves too little room
        or a word does not fit; a word longer than that (a URL, a path) is never broken. A line whose text after its label starts
        with one of `whole` (a command to paste) is kept whole: a wrapped command breaks when pasted.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Sequence

GAP = "  "
WIDTH = 100
"""Rule 3: the widest line a text view prints, for an ordinary terminal."""
MIN_ROOM = 40
"""Rule 3: the fewest columns a hanging indent must leave for the text it wraps."""
LABEL = re.compile(r"( *\S.*?  +)(?=\S)")
"""Rule 3: a label and the gap after it, whose width is the hanging indent."""

PASTED = ("llama-server ", "llama-cli ", "llama-completion ", "llama-cpp-python ", "FROM ")
"""How a command line or Modelfile line to paste begins — each program's name (`Runtime`'s values; a test holds
them equal), and Ollama's `FROM` — so `fit_width` keeps such a line whole. Spelled here, not derived, so that every
command's `say` does not import the full load's records."""


def aligned_lines(rows: Iterable[Sequence[str]], indent: str = "") -> list[str]:
    """Rows of cells as lines whose columns line up, each line starting with `indent`."""
    table = [tuple(row) for row in rows]
    n_columns = max((len(row) for row in table), default=0)
    widths = [max((len(row[i]) for row in table if i < len(row) - 1), default=0) for i in range(n_columns)]
    return [indent + GAP.join(cell if i == len(row) - 1 else cell.ljust(widths[i]) for i, cell in enumerate(row))
            for row in table]


def aligned_text(rows: Iterable[Sequence[str]], indent: str = "") -> str:
    """`aligned_lines` joined into one block of text."""
    return "\n".join(aligned_lines(rows, indent))


def _wrapped(line: str, width: int) -> list[str]:
    """One line as lines of at most `width` columns (Rule 3): under the label, else under a short indent."""
    label = LABEL.match(line)
    lead = len(line) - len(line.lstrip(" "))
    tries = [(line[:lead], lead + 4, False)]
    if label is not None and width - len(label.group(1)) >= MIN_ROOM:
        tries.insert(0, (label.group(1), len(label.group(1)), False))
    for head, hang, break_words in tries:
        lines = textwrap.wrap(line[len(head):], width, initial_indent=head, subsequent_indent=" " * hang,
                              break_long_words=break_words, break_on_hyphens=False)
        if all(len(part) <= width for part in lines):
            return lines
    return lines


def _body(line: str) -> str:
    label = LABEL.match(line)
    return (line if label is None else line[len(label.group(1)):]).lstrip()


def fit_width(text: str, width: int = WIDTH, whole: tuple[str, ...] = ()) -> str:
    """Every line of `text` at most `width` columns, longer ones wrapped, commands kept whole (Rule 3)."""
    return "\n".join(part for line in text.split("\n")
                     for part in ([line] if len(line) <= width or _body(line).startswith(whole)
                                  else _wrapped(line, width)))
