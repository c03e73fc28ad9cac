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
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any, Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from gguf_budget.core.library.assess import Assessment
from gguf_budget.core.library.scan import LibraryEntry
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.views.library_view import COLUMNS, row_cells

Index = QModelIndex | QPersistentModelIndex
SIZE_COLUMN = COLUMNS.index("Size")


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


def table_rows(entries: Sequence[LibraryEntry[Assessment]]) -> TableRows:
    """Rule 4: pure Python, safe on a worker thread."""
    kept = tuple(entries)
    cells = tuple(row_cells(e) for e in kept)
    keys = tuple(tuple((e.size_bytes or 0) for e in kept) if c == SIZE_COLUMN else tuple(row[c].lower() for row in cells)
                 for c in range(len(COLUMNS)))
    return TableRows(kept, cells, keys, tuple("\n".join(row).lower() for row in cells))


class LibraryTable(QAbstractTableModel):
    def __init__(self) -> None:
        super().__init__()
        self._rows = table_rows(())
        self._shown: list[int] = []
        self._needle = ""
        self._sort: tuple[int, Qt.SortOrder] | None = None

    def set_rows(self, rows: TableRows) -> None:
        self.beginResetModel()
        self._rows = rows
        self._shown = self._ordered(self._matching())
        self.endResetModel()

    def set_entries(self, entries: Sequence[LibraryEntry[Assessment]]) -> None:
        self.set_rows(table_rows(entries))

    def set_filter(self, text: str) -> None:
        """Rule 3."""
        self.beginResetModel()
        self._needle = text.lower()
        self._shown = self._ordered(self._matching())
        self.endResetModel()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Rules 1 and 4: called by the view when a header is clicked."""
        if not 0 <= column < len(COLUMNS):
            return
        self.layoutAboutToBeChanged.emit()
        self._sort = (column, order)
        self._shown = self._ordered(self._shown)
        self.layoutChanged.emit()

    def _matching(self) -> list[int]:
        if not self._needle:
            return list(range(len(self._rows.entries)))
        return [i for i, text in enumerate(self._rows.haystack) if self._needle in text]

    def _ordered(self, rows: list[int]) -> list[int]:
        if self._sort is None:
            return rows
        column, order = self._sort
        key = self._rows.keys[column]
        return sorted(rows, key=key.__getitem__, reverse=order == Qt.SortOrder.DescendingOrder)

    def entry(self, row: int) -> LibraryEntry[Assessment]:
        """The entry shown at `row` (after sorting and filtering)."""
        return self._rows.entries[self._shown[row]]

    def rowCount(self, parent: Index | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(self._shown)

    def columnCount(self, parent: Index | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(COLUMNS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._shown):
            return None
        i = self._shown[index.row()]
        entry = self._rows.entries[i]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._rows.cells[i][index.column()]
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tooltip(entry.error if entry.error else entry.path)
        if role == Qt.ItemDataRole.ForegroundRole and entry.error:
            return Qt.GlobalColor.gray
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None
