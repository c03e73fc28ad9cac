"""The budget sweep view: the plan at every budget of a range, its thresholds, click to choose.

Rule 1: the range is FROM:TO:STEP text, read by the core's `budget_range` exactly as
        `gguf-budget sweep --budgets` reads it. Until the user edits it, it is the core's
        `automatic_range`, the one `gguf-budget sweep` without `--budgets` uses.
Rule 2: a sweep is of a request with its budget and force dropped (the sweep varies the
        budget; `sweep` ignores force). A new model, or a request that differs in anything
        else, sweeps again (and re-derives a default range); a new budget only moves the mark.
Rule 3: sweeps run on a `SweepWorker`. While one runs, a progress bar and Cancel show; a
        cancelled or failed sweep leaves the previous chart on screen and says why.
Rule 5: the automatic range holds the window's budget (`automatic_range(…, budget)`): a budget
        that leaves the swept range, while no one typed a range, sweeps again around it once the
        budget has been still for RESWEEP_SETTLE_MS. A drag across the slider left the range again and
        again, and each new sweep shares the GIL with the window (a tick that started one took ~100 ms,
        the next ones twice their time, and the finished sweep's chart ~100 ms more).
Rule 4: the budget mark follows the window's budget at once, but while the budget keeps
        moving (a slider drag) it is redrawn at most every MARK_INTERVAL_MS: redrawing it
        repaints a strip of each plot (~1.4 ms of GUI CPU on the 70B's sweep, the curves copied from the
        pixmaps the chart keeps of them), which every slider tick would pay.
Rule 6: the chart is built when first wanted (the first sweep's result, or a test or export asking for it): it is
        drawn by pyqtgraph, whose import (with numpy ~0.6 s, 2.5 s on a loaded 2-core machine) a window that never
        shows the sweep does not pay. A sweep imports it off the GUI thread while the budgets are planned
        (`ImportAhead`); once both are done the chart is built a plot an event-loop turn and the result drawn:
        the window answers a click or a close meanwhile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QProgressBar, QPushButton, QVBoxLayout, QWidget

from gguf_budget.core.explorer.dock_inputs import sweep_request
from gguf_budget.core import (
    BudgetError, BudgetRequest, ModelSpec, SweepResult, automatic_range, budget_range, sweep_budgets,
)
from gguf_budget.core.views.sweep_view import summary_text

from gguf_budget.gui.qt.whatif.sweep_worker import SweepBackend, SweepSpeed, SweepWorker
from gguf_budget.gui.qt.workers.import_ahead import ImportAhead
from gguf_budget.gui.qt.throttle import Throttle
from gguf_budget.gui.qt.named import named

if TYPE_CHECKING:
    from gguf_budget.gui.qt.whatif.sweep_chart import SweepChart

MARK_INTERVAL_MS = 100
RESWEEP_SETTLE_MS = 300
CHART_MODULE = "gguf_budget.gui.qt.whatif.sweep_chart"


class SweepView(QWidget):
    """Range box, Sweep/Cancel, progress, status line and the sweep chart.

    Signals:
        budgetPicked(object): a budget (int bytes) picked on the chart.
        sweepFinished(): a sweep's result is on the chart.
        sweepFailed(str): a range or plan error, shown in the status line.
    """

    budgetPicked = Signal(object)
    sweepFinished = Signal()
    sweepFailed = Signal(str)

    def __init__(self, backend: SweepBackend = sweep_budgets, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("sweepView")
        self._model: ModelSpec | None = None
        self._request: BudgetRequest | None = None
        self._custom_range = False
        self._speed: SweepSpeed | None = None
        self._swept_speed: SweepSpeed | None = None
        self._mark: int | None = None
        self._mark_drawn: int | None = None
        self._mark_throttle = Throttle(MARK_INTERVAL_MS, self._draw_mark, self)
        self.resweep_timer = QTimer(self, singleShot=True, interval=RESWEEP_SETTLE_MS)
        self.resweep_timer.timeout.connect(self._resweep)
        self.worker = SweepWorker(backend, self)
        self.chart_import = ImportAhead((CHART_MODULE,), self)
        """Rule 6: the chart's modules, imported off the GUI thread while the first sweep runs."""
        self._sweeps = 0
        """Counts the sweeps started or dropped: a result drawn once the chart's import answers must be the latest."""
        self._build()
        self.worker.progress.connect(self._progressed)
        self.worker.succeeded.connect(self._finished)
        self.worker.failed.connect(self._failed)
        self.worker.cancelled.connect(lambda: self._idle("Sweep cancelled; the chart shows the previous sweep"))

    def _build(self) -> None:
        self.range_edit = named(QLineEdit(self, placeholderText="FROM:TO:STEP, e.g. 128M:2G:64M"), "sweepRange")
        self.range_edit.setToolTip("Budgets to plan, TO included (the same text as `gguf-budget sweep --budgets`)")
        self.range_edit.returnPressed.connect(self._range_typed)
        self.run_button = named(QPushButton("Sweep", self), "sweepRun")
        self.run_button.clicked.connect(self._range_typed)
        self.progress = named(QProgressBar(self, minimum=0, maximum=1), "sweepProgress")
        self.progress.setMaximumWidth(220)
        self.cancel_button = named(QPushButton("Cancel", self), "sweepCancel")
        self.cancel_button.clicked.connect(self.worker.cancel)
        self.status = named(QLabel("Open a model to sweep budgets", self, wordWrap=True), "sweepStatus")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self._chart: SweepChart | None = None
        row = QHBoxLayout()
        for w in (QLabel("Budgets", self), self.range_edit, self.run_button, self.progress, self.cancel_button):
            row.addWidget(w)
        row.setStretch(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.status)
        self._layout = layout
        self._show_busy(False)

    @property
    def chart(self) -> SweepChart:
        """Rule 6: the chart, built (whole) the first time it is wanted."""
        chart = self._started_chart()
        if not chart.whole:
            chart.build()
            self._draw_mark()
        return chart

    def _started_chart(self) -> SweepChart:
        if self._chart is None:
            from gguf_budget.gui.qt.whatif.sweep_chart import SweepChart

            self._chart = SweepChart(self)
            self._chart.budgetPicked.connect(self.budgetPicked)
            self._layout.addWidget(self._chart, 1)
        return self._chart

    # -- public API -------------------------------------------------------------------

    def set_model(self, model: ModelSpec, request: BudgetRequest) -> None:
        """A new model: default range, sweep at once."""
        self._model, self._request, self._custom_range = model, sweep_request(request), False
        self._mark = request.budget.limit
        if self._chart is not None and self._chart.whole:  # one still being built shows nothing yet
            self._chart.show_result(None)
        self.run()

    def set_request(self, request: BudgetRequest) -> None:
        """The window's request changed; sweeps again unless only budget or force differ (and the speed
        inputs are those of the sweep on the chart)."""
        key = sweep_request(request)
        if self._model is not None and (key != self._request or self._speed != self._swept_speed):
            self._request = key
            self._mark = request.budget.limit
            self.run()

    def set_speed(self, speed: SweepSpeed | None) -> None:
        """What the next sweep's decode estimates use (None: sweep without them)."""
        self._speed = speed

    def set_budget(self, budget: int | None) -> None:
        """Mark the window's budget (None: unlimited, no mark) — at once, then at most every MARK_INTERVAL_MS."""
        self._mark = budget
        self._mark_throttle.request()
        if self._off_the_range(budget):  # Rule 5
            self.resweep_timer.start()

    def _resweep(self) -> None:
        if self._off_the_range(self._mark):
            self.run()

    def _off_the_range(self, budget: int | None) -> bool:
        result = self.result()
        if budget is None or result is None or not result.rows or self._custom_range or self.worker.busy:
            return False
        return not result.rows[0].budget <= budget <= result.rows[-1].budget

    def _draw_mark(self) -> None:
        if self._chart is not None and self._chart.whole and self._mark != self._mark_drawn:
            self._mark_drawn = self._mark
            self._chart.set_budget(self._mark)

    def result(self) -> SweepResult | None:
        """The sweep on the chart (None before the first one finishes)."""
        return None if self._chart is None else self._chart.result()

    def run(self) -> None:
        """Sweep the range in the box (or the default range) off the GUI thread."""
        if self._model is None or self._request is None:
            return
        try:
            if not self._custom_range:
                self.range_edit.setText(automatic_range(self._model, self._request, self._mark))
            budgets = budget_range(self.range_edit.text())
        except BudgetError as e:
            self._idle(f"Cannot sweep: {e}")
            self.sweepFailed.emit(str(e))
            return
        self.progress.setRange(0, len(budgets))
        self.progress.setValue(0)
        self._show_busy(True)
        self.status.setText(f"Sweeping {len(budgets):,} budgets…")
        self._swept_speed = self._speed
        self._sweeps += 1
        self.chart_import.start()
        self.worker.start(self._model, budgets, self._request, self._speed)

    def cancel(self) -> None:
        self.worker.cancel()

    def invalidate(self, message: str) -> None:
        """The request changed and a new sweep will follow: stop the one running, say so, keep the chart."""
        self.worker.discard()
        self._sweeps += 1
        self._idle(message)

    # -- worker answers ---------------------------------------------------------------

    def _range_typed(self) -> None:
        self._custom_range = True
        self.run()

    def _progressed(self, done: int, total: int) -> None:
        self.progress.setValue(done)

    def _finished(self, result: SweepResult) -> None:
        sweep = self._sweeps
        self.chart_import.when_ready(lambda: self._draw_in_steps(result, sweep))

    def _draw_in_steps(self, result: SweepResult, sweep: int) -> None:
        """Rule 6: the chart built a piece an event-loop turn, then `result` drawn, while it is the latest sweep's."""
        if sweep != self._sweeps:
            return
        if self._chart is not None and self._chart.whole:
            self._draw(result)
            return
        if self._chart is None:
            self._started_chart()  # the widget in this turn, its plots in the next ones
        else:
            self._chart.build_step()
            if self._chart.whole:
                self._draw_mark()
        QTimer.singleShot(0, self, lambda: self._draw_in_steps(result, sweep))

    def _draw(self, result: SweepResult) -> None:
        self.chart.show_result(result)
        self._idle(summary_text(result))
        if self._off_the_range(self._mark):  # Rule 5: the budget moved off the range while this one ran
            self.resweep_timer.start()
            return
        self.sweepFinished.emit()

    def _failed(self, message: str) -> None:
        self._idle(f"Cannot sweep: {message}")
        self.sweepFailed.emit(message)

    def _idle(self, message: str) -> None:
        self._show_busy(False)
        self.status.setText(message)

    def _show_busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)
