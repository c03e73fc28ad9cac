"""Two plans' ledgers side by side, line by line, with the difference (second − first).

Rule 1: the rows are `core.views.compare_view.compare_rows`: every ledger line, then the total.
Rule 3: the total row is bold (`CompareRow.emphasised`).
Rule 2: cells show `human_bytes` (a difference as `signed_bytes`); the tooltip gives exact
        bytes; `Qt.UserRole` gives the int, so tests and exports read numbers.
Rule 4: new numbers for the same lines announce only the cells whose number moved, each on its own, and the
        headers only when a model's name changed: the view repaints those cells alone. A budget tick moves a few
        lines' bytes, and one change over the whole table repainted every cell and the header (~2.6 ms a
        replan on the 70B against the 8B).
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont

from gguf_budget.core.units import human_bytes, signed_bytes
from gguf_budget.core.views.compare_view import CompareRow

COLUMNS = ("line", "first", "second", "difference")
Index = QModelIndex | QPersistentModelIndex


def _bold() -> QFont:
    font = QFont()
    font.setBold(True)
    return font


class CompareModel(QAbstractTableModel):
    """The rows of `compare_rows` as a read-only table; headers name the two models."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._rows: tuple[CompareRow, ...] = ()
        self._headers = ["Ledger line", "First", "Second", "Second − first"]

    def set_rows(self, rows: tuple[CompareRow, ...], first: str, second: str) -> None:
        """New numbers for the same lines change only the cells that moved (Rule 4); other rows reset."""
        old, old_headers = self._rows, self._headers[1:3]
        same_lines = [r.line for r in rows] == [r.line for r in old]
        if not same_lines:
            self.beginResetModel()
        self._rows = rows
        self._headers[1:3] = [first, second]
        if not same_lines:
            self.endResetModel()
            return
        for r, (new, was) in enumerate(zip(rows, old, strict=True)):
            for column in range(1, len(COLUMNS)):
                if new.values[column - 1] != was.values[column - 1]:
                    cell = self.index(r, column)
                    self.dataChanged.emit(cell, cell)
        if self._headers[1:3] != old_headers:
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, 1, 2)

    def rows(self) -> tuple[CompareRow, ...]:
        return self._rows

    def rowCount(self, parent: Index | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole \
                and 0 <= section < len(self._headers):
            return self._headers[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row, column = self._rows[index.row()], index.column()
        if role == Qt.ItemDataRole.FontRole:
            return _bold() if row.emphasised else None
        if column == 0:
            return {Qt.ItemDataRole.DisplayRole: row.name, Qt.ItemDataRole.UserRole: row.line,
                    Qt.ItemDataRole.ToolTipRole: row.tooltip}.get(Qt.ItemDataRole(role))
        n = row.values[column - 1]
        if role == Qt.ItemDataRole.DisplayRole:
            return signed_bytes(n) if column == 3 else human_bytes(n)
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{n:+,} bytes" if column == 3 else f"{n:,} bytes"
        if role == Qt.ItemDataRole.UserRole:
            return n
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None
