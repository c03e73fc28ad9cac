"""The centre of the window: the budget and context controls, and what the plan looks like.

Before any model is open the chart and the report give way to the empty state (`EmptyState`).

It draws the explorer view it is given (`show_view`: the plan, its captions and report) and
reports user input through its controls' `changed` signals; it never calls the planner itself.
The budget slider's usable-RAM mark and its tooltip's words are set only when the usable RAM changes, not on every
tick.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QSplitter, QStackedWidget, QVBoxLayout, QWidget

from gguf_budget.core import ModelSpec
from gguf_budget.core.explorer.derive import ExplorerView
from gguf_budget.core.plan.ledger import LEDGER_LINES
from gguf_budget.core.views.ledger_names import MEASURED_LINES

from gguf_budget.gui.qt.plan.budget_control import BudgetControl
from gguf_budget.gui.qt.plan.context_control import ContextControl
from gguf_budget.gui.qt.plan.empty_state import EmptyState
from gguf_budget.gui.qt.plan.layer_strip import LayerStrip
from gguf_budget.gui.qt.plan.ledger_chart import LedgerChart
from gguf_budget.gui.qt.plan.report_view import ReportView
from gguf_budget.gui.qt.named import named
from gguf_budget.gui.qt.row_box import RowBox

PLAN_COLUMN = "This plan"
MINIMUM_COLUMN = "Minimum configuration"
Column = tuple[str, tuple[tuple[str, int], ...]]


class PlanPanel(QWidget):
    """Budget + context controls, pinned count and strip, ledger chart, report."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.budget = BudgetControl(self)
        self.context = ContextControl(self)
        self.pinned = named(QLabel("—", self, wordWrap=True), "pinnedLabel")
        self.pinned.setTextFormat(Qt.TextFormat.PlainText)
        self.pinned.setMinimumWidth(120)  # a longer text must not widen the window mid-drag
        # two lines, always: the whole caption shows on a laptop, and a new text never moves the view
        self.pinned.setFixedHeight(2 * self.pinned.fontMetrics().lineSpacing() + 2)
        self.strip = LayerStrip(self)
        self.chart = LedgerChart(LEDGER_LINES + MEASURED_LINES, self, optional=MEASURED_LINES)
        self._plan_columns: list[Column] = []
        self._lines: tuple[int | None, int | None] = (None, None)
        self._measured: Column | None = None
        self._usable: tuple[int | None] | None = None  # the usable RAM marked on the budget slider, once marked
        self.report = ReportView(self)
        split = QSplitter(Qt.Orientation.Vertical, self)
        beside = QWidget(self)  # the chart and its legend, side by side
        row = QHBoxLayout(beside)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        row.addWidget(self.chart, 1)
        row.addWidget(self.chart.legend)
        split.addWidget(beside)
        split.addWidget(self.report)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([560, 170])  # shrinking keeps this ratio: the chart gets the most of a short window
        split.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(3)
        self.zoom = named(QCheckBox("zoom to the plan", self), "ledgerZoom")
        self.zoom.setToolTip("Scale the bars to the plan, not to the budget: a plan far under a large budget "
                             "is then a bar, not a sliver (the budget line stays at the top, marked ↑)")
        self.zoom.toggled.connect(self.chart.set_zoom)
        strip_row = QHBoxLayout()  # the caption keeps the whole width to itself
        strip_row.addWidget(self.strip, 1)
        strip_row.addWidget(self.zoom)
        layout.addWidget(self.budget)
        layout.addWidget(self.context)
        layout.addWidget(RowBox(self.pinned, self))  # its new text each tick lays nothing out
        layout.addLayout(strip_row)
        self.empty = EmptyState(self)
        self._stack = QStackedWidget(self)
        self._stack.addWidget(self.empty)
        self._stack.addWidget(split)
        layout.addWidget(self._stack, 1)

    def showing_empty(self) -> bool:
        """True until a model is shown: the invitation stands where the chart and report go."""
        return self._stack.currentWidget() is self.empty

    def show_view(self, model: ModelSpec, view: ExplorerView) -> None:
        """The plan of `view` (a refused request: no bars, the reason as the report)."""
        self._stack.setCurrentIndex(1)
        if view.ctx_span is not None:
            self.context.set_span(view.ctx_span)
        if self._usable != (view.usable_ram,):
            self._usable = (view.usable_ram,)
            self.budget.set_usable(view.usable_ram)
        plan = view.plan
        self.context.show_chosen(None if plan is None else plan.ctx, view.ctx_label)
        if plan is None:
            self.clear_plan(view.report)
            return
        self.pinned.setText(view.pinned_caption)
        self.strip.set_layers(model.layer_bytes, plan.n_pinned)
        self._plan_columns = [(PLAN_COLUMN, plan.ledger.items()), (MINIMUM_COLUMN, plan.minimum_ledger.items())]
        self._lines = (plan.budget.limit, plan.minimum_required)
        self._draw_chart()
        self.report.set_text(view.report)

    def clear_plan(self, message: str) -> None:
        """A model the planner refuses to price: no plan bars (a Measured bar stays), the reason as the report."""
        self.pinned.setText("—")
        self.strip.set_layers((), 0)
        self._plan_columns, self._lines = [], (None, None)
        self._draw_chart()
        self.report.set_text(message)

    def set_measured(self, column: Column | None) -> None:
        """A third column of what llama.cpp measured (None: no evidence for this model)."""
        self._measured = column
        self._draw_chart()

    def _draw_chart(self) -> None:
        extra = [self._measured] if self._measured is not None else []
        self.chart.show_ledgers(self._plan_columns + extra, *self._lines)
