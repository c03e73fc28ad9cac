"""The library as a Qt table: one row per model, cells as the CLI prints them, sortable and filterable.

Rule 1: the words come from `core.views.library_view.row_cells` (the CLI's table); the model only
        arranges them. Sorting uses `SORT_ROLE`: exact bytes for Size, the text elsewhere.
Rule 2: an unreadable entry's row is greyed-out text with the reason as its tooltip (plain text).
Rule 3: the filter matches any cell, case-insensitively.
"""

from __future__ import annotations

import html
from typing import Any, Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt

from gguf_budget.core.library.assess import Assessment
from gguf_budget.core.library.scan import LibraryEntry
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.views.library_view import COLUMNS, row_cells

Index = QModelIndex | QPersistentModelIndex


def plain_tooltip(text: str) -> str:
    """Untrusted text as a tooltip that Qt cannot take for rich text (a file named `<img …>.gguf`)."""
    return f"<qt>{html.escape(safe_text(text))}</qt>"
SORT_ROLE = Qt.ItemDataRole.UserRole + 1
SIZE_COLUMN = COLUMNS.index("Size")


class LibraryTable(QAbstractTableModel):
    def __init__(self) -> None:
        super().__init__()
        self._entries: tuple[LibraryEntry[Assessment], ...] = ()
        self._cells: list[tuple[str, ...]] = []

    def set_entries(self, entries: Sequence[LibraryEntry[Assessment]]) -> None:
        self.beginResetModel()
        self._entries = tuple(entries)
        self._cells = [row_cells(e) for e in self._entries]
        self.endResetModel()

    def entry(self, row: int) -> LibraryEntry[Assessment]:
        return self._entries[row]

    def rowCount(self, parent: Index | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(self._entries)

    def columnCount(self, parent: Index | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(COLUMNS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        entry, text = self._entries[index.row()], self._cells[index.row()][index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return text
        if role == SORT_ROLE:
            return (entry.size_bytes or 0) if index.column() == SIZE_COLUMN else text.lower()
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tooltip(entry.error if entry.error else entry.path)
        if role == Qt.ItemDataRole.ForegroundRole and entry.error:
            return Qt.GlobalColor.gray
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None


def filtered(table: LibraryTable) -> QSortFilterProxyModel:
    """Rules 1 and 3: the sortable, filterable view of `table`."""
    proxy = QSortFilterProxyModel()
    proxy.setSourceModel(table)
    proxy.setSortRole(SORT_ROLE)
    proxy.setFilterKeyColumn(-1)
    proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
    return proxy
