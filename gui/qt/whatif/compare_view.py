"""Compare: a second model planned under the same request, both ledgers side by side.

Rule 1: the first model, its request and its plan come from the window (`set_first`); the
        second is planned with the same request and the first plan's ctx made explicit, so
        both ledgers are at the same budget and the same ctx (when the first plan chose its
        ctx itself, the second is held to that ctx, not left to pick its own).
Rule 2: the second model loads off the GUI thread (`BackgroundCall`). A file that fails to
        load, or a model the planner refuses or the view cannot show, shows one line and changes
        nothing else: everything shown is computed before anything is replaced, so the first
        model and any earlier second model stay on screen.
Rule 3: the table holds the core's numbers (`compare_rows`); the view computes no bytes.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout, QHeaderView, QLabel, QPushButton, QSizePolicy, QTableView, QVBoxLayout, QWidget,
)

from gguf_budget.core import BudgetError, BudgetRequest, MemoryPlan, ModelSpec, load_model, plan_memory
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.views.compare_view import column_title, compare_rows, model_text

from gguf_budget.gui.qt.file_dialogs import Purpose, open_file
from gguf_budget.gui.qt.workers.background import BackgroundCall
from gguf_budget.gui.qt.whatif.compare_table import CompareModel
from gguf_budget.gui.qt.menus.file_menu import GGUF_FILTER
from gguf_budget.gui.qt.theme import error_style
from gguf_budget.gui.qt.named import named

log = logging.getLogger(__name__)


def second_request(request: BudgetRequest, first: MemoryPlan) -> BudgetRequest:
    """Rule 1: the same request, at the first plan's ctx."""
    return replace(request, ctx=first.ctx)


class CompareView(QWidget):
    """Open a second model; see both ledgers and their difference per line.

    Signals:
        secondLoaded(): a second model loaded and the table shows it.
        secondFailed(str): the second file could not be loaded (the view is unchanged).
    """

    secondLoaded = Signal()
    secondFailed = Signal(str)

    def __init__(self, load_backend: Callable[[str], ModelSpec] = load_model, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("compareView")
        self._first: tuple[ModelSpec, BudgetRequest, MemoryPlan | None] | None = None
        self._second: ModelSpec | None = None
        self._second_plan: MemoryPlan | None = None
        self._loader = BackgroundCall(load_backend, parent=self)
        self._loader.succeeded.connect(self._loaded)
        self._loader.failed.connect(self._load_failed)
        self._build()

    def _build(self) -> None:
        self.open_button = named(QPushButton("Open second model…", self), "compareOpen")
        self.open_button.clicked.connect(self.choose)
        self.first_label = self._label("compareFirst", "First: the model in the window")
        self.second_label = self._label("compareSecond", "Second: open a model to compare (e.g. another quantization)")
        self.error = self._label("compareError", "", wrap=True)
        self.error.setStyleSheet(error_style(bold=True))
        self.error.hide()
        self.model = CompareModel(self)
        self.table = named(QTableView(self), "compareTable")
        self.table.setModel(self.model)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        labels = QVBoxLayout()
        labels.setSpacing(2)
        labels.addWidget(self.first_label)
        labels.addWidget(self.second_label)
        row = QHBoxLayout()
        row.addWidget(self.open_button)
        row.addLayout(labels, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.error)
        layout.addWidget(self.table, 1)

    def _label(self, name: str, text: str, wrap: bool = False) -> QLabel:
        """Plain text; unwrapped labels take the view's width, never the text's (no relayout per tick)."""
        label = named(QLabel(text, self, wordWrap=wrap), name)
        label.setTextFormat(Qt.TextFormat.PlainText)
        if not wrap:
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        return label

    # -- public API -------------------------------------------------------------------

    def set_first(self, model: ModelSpec, request: BudgetRequest, plan: MemoryPlan | None) -> None:
        """The window's model, request and plan (None when the planner refused the model)."""
        self._first = (model, request, plan)
        self.first_label.setText(model_text("First", model, plan))
        self._refresh()

    def choose(self) -> None:
        folder = str(Path(self._first[0].path).parent) if self._first is not None else ""
        path = open_file(self, "Open a second GGUF model to compare", Purpose.MODEL, GGUF_FILTER, fallback=folder)
        if path:
            self.open_second(path)

    def open_second(self, path: str) -> None:
        """Load off the GUI thread; ends in `secondLoaded` or `secondFailed(str)`."""
        self.open_button.setEnabled(False)
        self._loader.start(str(path))

    def second_model(self) -> ModelSpec | None:
        return self._second

    def second_plan(self) -> MemoryPlan | None:
        return self._second_plan

    # -- loading and planning ---------------------------------------------------------

    def _loaded(self, spec: ModelSpec) -> None:
        self.open_button.setEnabled(True)
        try:
            self._show(spec)
        except BudgetError as e:
            message = f"Cannot plan the second model: {e}"
        except Exception as e:  # noqa: BLE001 - a model that cannot be shown is not taken (Rule 2)
            log.exception("cannot show %s", safe_text(spec.path, 300))
            message = f"Cannot show the second model: {type(e).__name__}: {e}"
        else:
            self.secondLoaded.emit()
            return
        self._show_error(message)
        self.secondFailed.emit(message)

    def _load_failed(self, message: str) -> None:
        self.open_button.setEnabled(True)
        self._show_error(f"Could not open the second model: {message}")
        self.secondFailed.emit(message)

    def _refresh(self) -> None:
        """The first plan changed: plan the second again; a refusal empties the table."""
        if self._second is None:
            return
        try:
            self._show(self._second)
        except BudgetError as e:
            self._second_plan = None
            self.model.set_rows((), "First", "Second")
            self._show_error(f"Cannot plan the second model: {e}")

    def _show(self, spec: ModelSpec) -> None:
        """Plan `spec` against the first plan and show both; what raises leaves everything as it was."""
        first = self._first
        plan = first[2] if first else None
        second = plan_memory(spec, second_request(first[1], plan)) if first and plan else None
        label = model_text("Second", spec, second)
        table = (compare_rows(plan, second), column_title(first[0]), column_title(spec)) \
            if first and plan and second else None
        self._second, self._second_plan = spec, second
        self.second_label.setText(label)
        if table is None:
            self.model.set_rows((), "First", "Second")
            if first:
                self._show_error("The first model cannot be planned, so there is nothing to compare")
            return
        self.error.hide()
        self.model.set_rows(*table)

    def _show_error(self, message: str) -> None:
        self.error.setText(safe_text(message, 300))
        self.error.show()
