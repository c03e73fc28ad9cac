"""The library as a Qt table: one row per model, cells as the CLI prints them, sortable and filterable.

Rule 1: the words come from `core.views.library_view.row_cells` (the CLI's table); the model only
        arranges them. Sorting uses exact bytes for Size, the text elsewhere.
Rule 2: an unreadable entry's row is greyed-out text with the reason as its tooltip (plain text).
Rule 3: the filter matches any cell, case-insensitively.
Rule 4: a library of 50,000 models never stalls the GUI thread: the cells, the sort keys and the
        filter's text of every row are computed with the scan, off the GUI thread (`table_rows`);
        the model sorts and filters itself over those lists (Python's sort, one substring test
        per row) — a QSortFilterProxyModel asked `data()` once per comparison, ~1.6 million
        calls for one sort — and Qt asks `data()` only for the rows it paints.
Rule 5: verdicts are judged lazily, for what is shown (`core.library.scan` Rule 10): the scan judges
        nothing, and a row is judged (`judge`, from its kept header) when Qt first asks `data()` for it —
        the rows painted, and those scrolled into view; with 1,000 models a table 20 rows tall judges
        about 20. A sort by a verdict column, or a filter, needs every verdict: `verdictsWanted` asks the
        view to judge the rest off the GUI thread (`set_rows` then shows them), in the meantime a row not
        yet judged sorts and matches by its other cells, and the GUI thread judges nothing (`hand_over`):
        one thread judges at a time, and no row twice.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal

from gguf_budget.core.library.assess import Assessment
from gguf_budget.core.library.scan import LibraryEntry
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.views.library_view import COLUMNS, row_cells

Index = QModelIndex | QPersistentModelIndex
SIZE_COLUMN = COLUMNS.index("Size")
VERDICT_COLUMNS = (COLUMNS.index("Full load"), COLUMNS.index("Budget plan"))
Judge = Callable[[LibraryEntry[Assessment]], LibraryEntry[Assessment]]


def plain_tooltip(text: str) -> str:
    """Untrusted text as a tooltip that Qt cannot take for rich text (a file named `<img …>.gguf`)."""
    return f"<qt>{html.escape(safe_text(text))}</qt>"


@dataclass(frozen=True)
class TableRows:
    """Rule 4: every row's cells, sort keys per column and filter text, computed once, off the GUI thread."""

    entries: tuple[LibraryEntry[Assessment], ...]
    cells: tuple[tuple[str, ...], ...]
    keys: tuple[tuple[Any, ...], ...]
    """Per column, each row's sort key."""
    haystack: tuple[str, ...]


def _sort_key(entry: LibraryEntry[Assessment], cells: tuple[str, ...], column: int) -> Any:
    return (entry.size_bytes or 0) if column == SIZE_COLUMN else cells[column].lower()


def table_rows(entries: Sequence[LibraryEntry[Assessment]]) -> TableRows:
    """Rule 4: pure Python, safe on a worker thread."""
    kept = tuple(entries)
    cells = tuple(row_cells(e) for e in kept)
    keys = tuple(tuple(_sort_key(e, row, c) for e, row in zip(kept, cells, strict=True)) for c in range(len(COLUMNS)))
    return TableRows(kept, cells, keys, tuple("\n".join(row).lower() for row in cells))


class LibraryTable(QAbstractTableModel):
    """The rows of one scan, sorted and filtered; each judged when first shown (Rule 5).

    Signals:
        verdictsWanted(): a sort or filter needs the verdicts of rows not judged yet (Rule 5).
    """

    verdictsWanted = Signal()

    def __init__(self) -> None:
        super().__init__()
        self._handed: Judge | None = None
        self._set(table_rows(()), None)
        self._shown: list[int] = []
        self._needle = ""
        self._sort: tuple[int, Qt.SortOrder] | None = None

    def _set(self, rows: TableRows, judge: Judge | None) -> None:
        self._entries, self._cells = list(rows.entries), list(rows.cells)
        self._keys = [list(column) for column in rows.keys]
        self._haystack = list(rows.haystack)
        self._judge, self._handed = judge, None

    def set_rows(self, rows: TableRows, judge: Judge | None = None) -> None:
        """Show `rows`; `judge` judges a row not judged yet when it is first shown (Rule 5)."""
        self.beginResetModel()
        self._set(rows, judge)
        self._shown = self._ordered(self._matching())
        self.endResetModel()
        self._want_verdicts()

    def entries(self) -> tuple[LibraryEntry[Assessment], ...]:
        """Every row's entry as it stands (judged or not), in scan order."""
        return tuple(self._entries)

    def hand_over(self) -> tuple[LibraryEntry[Assessment], ...]:
        """Rule 5: every row's entry, for a worker to judge the rest; until its rows come back (`set_rows`) or it
        fails (`take_back`), no row is judged here: one thread judges at a time, and no row twice."""
        self._judge, self._handed = None, self._judge
        return self.entries()

    def take_back(self) -> None:
        """Rule 5: the worker failed; rows are judged here again as they are shown."""
        self._judge = self._judge or self._handed

    def _judged(self, i: int) -> None:
        """Rule 5: row `i` judged, its cells, sort keys and filter text with it."""
        entry = self._entries[i]
        if self._judge is None or not entry.unjudged():
            return
        entry = self._entries[i] = self._judge(entry)
        cells = self._cells[i] = row_cells(entry)
        for column, keys in enumerate(self._keys):
            keys[i] = _sort_key(entry, cells, column)
        self._haystack[i] = "\n".join(cells).lower()

    def _want_verdicts(self) -> None:
        """Rule 5: a sort by a verdict or a filter asks for every verdict while some are still to judge."""
        by_verdict = self._sort is not None and self._sort[0] in VERDICT_COLUMNS
        if (by_verdict or self._needle) and self._judge is not None and any(e.unjudged() for e in self._entries):
            self.verdictsWanted.emit()

    def set_entries(self, entries: Sequence[LibraryEntry[Assessment]]) -> None:
        self.set_rows(table_rows(entries))

    def set_filter(self, text: str) -> None:
        """Rule 3."""
        self.beginResetModel()
        self._needle = text.lower()
        self._shown = self._ordered(self._matching())
        self.endResetModel()
        self._want_verdicts()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Rules 1 and 4: called by the view when a header is clicked."""
        if not 0 <= column < len(COLUMNS):
            return
        self.layoutAboutToBeChanged.emit()
        self._sort = (column, order)
        self._shown = self._ordered(self._shown)
        self.layoutChanged.emit()
        self._want_verdicts()

    def _matching(self) -> list[int]:
        if not self._needle:
            return list(range(len(self._entries)))
        return [i for i, text in enumerate(self._haystack) if self._needle in text]

    def _ordered(self, rows: list[int]) -> list[int]:
        if self._sort is None:
            return rows
        column, order = self._sort
        key = self._keys[column]
        return sorted(rows, key=key.__getitem__, reverse=order == Qt.SortOrder.DescendingOrder)

    def entry(self, row: int) -> LibraryEntry[Assessment]:
        """The entry shown at `row` (after sorting and filtering)."""
        i = self._shown[row]
        self._judged(i)
        return self._entries[i]

    def rowCount(self, parent: Index | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(self._shown)

    def columnCount(self, parent: Index | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(COLUMNS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._shown):
            return None
        i = self._shown[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.ForegroundRole):
            self._judged(i)  # Rule 5: Qt asks for the rows it paints
        entry = self._entries[i]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cells[i][index.column()]
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tooltip(entry.error if entry.error else entry.path)
        if role == Qt.ItemDataRole.ForegroundRole and entry.error:
            return Qt.GlobalColor.gray
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None
