"""The quant ladder as a read-only table model: the core's cells, sortable by the core's numbers.

Rule 1: one row per `QuantRow`, one column per core `COLUMNS` entry plus the mark column; the
        display text is the core's cell, `Qt.UserRole` its sort value (a proxy sorts by it).
Rule 2: the best-fit and recommended rows are bold and marked; the row of the file's own type says so
        in its tooltip.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont

from gguf_budget.core.quant.ladder import QuantLadder, QuantRow
from gguf_budget.core.views.quant_report import COLUMNS, is_recommended, mark_text, row_tooltip

Index = QModelIndex | QPersistentModelIndex
MARK_COLUMN = len(COLUMNS)


class QuantLadderModel(QAbstractTableModel):
    """Rules 1–2 over the latest ladder (empty until one is set)."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._ladder: QuantLadder | None = None
        self._bold = QFont()
        self._bold.setBold(True)

    def set_ladder(self, ladder: QuantLadder | None) -> None:
        self.beginResetModel()
        self._ladder = ladder
        self.endResetModel()

    def ladder(self) -> QuantLadder | None:
        return self._ladder

    def row_at(self, row: int) -> QuantRow:
        assert self._ladder is not None
        return self._ladder.rows[row]

    def rowCount(self, parent: Index | None = None) -> int:
        return 0 if (parent is not None and parent.isValid()) or self._ladder is None else len(self._ladder.rows)

    def columnCount(self, parent: Index | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(COLUMNS) + 1

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or self._ladder is None:
            return None
        row, ladder = self._ladder.rows[index.row()], self._ladder
        column = COLUMNS[index.column()] if index.column() < MARK_COLUMN else None
        if role == Qt.ItemDataRole.DisplayRole:
            return column.cell(row) if column else mark_text(row, ladder)
        if role == Qt.ItemDataRole.UserRole:
            return column.sort(row) if column else float(row.name == ladder.best) + is_recommended(row, ladder) / 2
        if role == Qt.ItemDataRole.FontRole and (row.name == ladder.best or is_recommended(row, ladder)):
            return self._bold
        if role == Qt.ItemDataRole.ToolTipRole:
            return row_tooltip(row, ladder)
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or role != Qt.ItemDataRole.DisplayRole:
            return None
        return COLUMNS[section].header if 0 <= section < MARK_COLUMN else ("Fit" if section == MARK_COLUMN else None)
