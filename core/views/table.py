"""The one aligned text table every text view prints (inspect, hw, fit, the plan report, the catalogue).

Rule 1: each column is as wide as its widest cell and columns are two spaces apart; the last
        cell of a row is never padded, so no line ends in spaces.
Rule 2: rows may differ in length; a column's width counts only the rows it is not the last of.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

GAP = "  "


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
