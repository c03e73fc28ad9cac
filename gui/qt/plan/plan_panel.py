"""The centre of the window: the budget and context controls, and what the plan looks like.

It draws a plan it is given (`show_plan`) and reports user input through its controls'
`changed` signals; it never calls the planner itself.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from gguf_budget.core import ModelSpec
from gguf_budget.core.plan.ledger import LEDGER_LINES
from gguf_budget.core.plan.types import MemoryPlan
from gguf_budget.core.views.plan_report import plan_text
from gguf_budget.core.views.plan_view import pinned_text

from gguf_budget.gui.qt.plan.budget_control import BudgetControl
from gguf_budget.gui.qt.plan.context_control import ContextControl
from gguf_budget.gui.qt.plan.layer_strip import LayerStrip
from gguf_budget.gui.qt.plan.ledger_chart import LedgerChart
from gguf_budget.gui.qt.plan.report_view import ReportView

PLAN_COLUMN = "This plan"
MINIMUM_COLUMN = "Minimum configuration"


class PlanPanel(QWidget):
    """Budget + context controls, pinned count and strip, ledger chart, report."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.budget = BudgetControl(self)
        self.context = ContextControl(self)
        self.pinned = QLabel("—", self, objectName="pinnedLabel")
        self.pinned.setTextFormat(Qt.TextFormat.PlainText)
        self.pinned.setMinimumWidth(120)  # a longer text must not widen the window mid-drag
        self.strip = LayerStrip(self)
        self.chart = LedgerChart(LEDGER_LINES, self)
        self.report = ReportView(self)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.chart)
        split.addWidget(self.report)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([480, 280])
        split.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for w in (self.budget, self.context, self.pinned, self.strip):
            layout.addWidget(w)
        layout.addWidget(split, 1)

    def show_plan(self, model: ModelSpec, plan: MemoryPlan) -> None:
        self.context.show_chosen(plan.ctx)
        self.pinned.setText(pinned_text(model, plan))
        self.strip.set_layers(model.layer_bytes, plan.n_pinned)
        columns = [(PLAN_COLUMN, plan.ledger.items()), (MINIMUM_COLUMN, plan.minimum_ledger.items())]
        budget = None if plan.unlimited else plan.budget_bytes
        self.chart.show_ledgers(columns, budget, plan.minimum_required)
        self.report.set_text(plan_text(plan))

    def clear_plan(self, message: str) -> None:
        """A model the planner refuses to price: no bars, the reason as the report."""
        self.pinned.setText("—")
        self.strip.set_layers((), 0)
        self.chart.show_ledgers([], None, None)
        self.report.set_text(message)
