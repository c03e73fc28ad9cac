"""The Quants dock's widget: a summary (best fit, recommended type, the rule) and the sortable ladder table.

Rule 1: the widget shows what it is given (`set_ladder`, `set_status`) and computes nothing.
Rule 2: double-clicking a row asks for that quantization to be planned (`planRequested`).
Rule 3: the table opens sorted as the core lists the rows (`SORTED_BY`, descending), so the
        header's sort arrow names the order on screen.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QTableView, QVBoxLayout, QWidget

from gguf_budget.core.quant.ladder import QuantLadder
from gguf_budget.core.views.quant_report import COLUMNS, RECOMMENDED_RULE, SORTED_BY, best_text, recommended_text

from gguf_budget.gui.qt.quants.ladder_table import QuantLadderModel
from gguf_budget.gui.qt.named import named


class QuantsView(QWidget):
    """Summary line + table.

    Signals:
        planRequested(object): the priced `ModelSpec` of the double-clicked row.
    """

    planRequested = Signal(object)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("quantsView")
        self.summary = named(QLabel("Open a model to price its quantizations.", self,
                                    wordWrap=True), "quantsSummary")
        self.model = QuantLadderModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(Qt.ItemDataRole.UserRole)
        self.table = named(QTableView(self), "quantsTable")
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(next(i for i, c in enumerate(COLUMNS) if c.key == SORTED_BY),
                                Qt.SortOrder.DescendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.verticalHeader().hide()
        self.table.doubleClicked.connect(self._double_clicked)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)

    def set_status(self, text: str) -> None:
        self.summary.setText(text)

    def set_ladder(self, ladder: QuantLadder) -> None:
        self.model.set_ladder(ladder)
        recommended = recommended_text(ladder)
        lines = [f"{best_text(ladder)}.", *([] if recommended is None else [f"{recommended}."]), RECOMMENDED_RULE,
                 "Double-click a row to plan it (priced, not downloaded)."]
        self.summary.setText("\n".join(lines))

    def best_row(self) -> int | None:
        """The table row (as sorted on screen) of the best fit, None when there is none."""
        ladder = self.model.ladder()
        if ladder is None or ladder.best is None:
            return None
        source_row = next(i for i, r in enumerate(ladder.rows) if r.name == ladder.best)
        return self.proxy.mapFromSource(self.model.index(source_row, 0)).row()

    def _double_clicked(self, index: QModelIndex) -> None:
        self.planRequested.emit(self.model.row_at(self.proxy.mapToSource(index).row()).model)
