"""The headline's last line, "Run it:": what to run for each answer on screen, each with Copy.

The words and commands are the core's (`core.views.run_it`): the Budget plan's runtime flags and
the full load's llama-server line — the line `fit --print-command` prints. When a runtime has
nothing that fits, its part says what would, and its Copy button is disabled.

Rule 1: the widget draws an `ExplorerView` and computes nothing itself; the one slow answer,
        the quant ladder's smaller type for a full load nothing else rescues (`core.quant.would_fit`), is priced off the
        GUI thread (`BackgroundCall`) once per model and machine, and drawn when it comes.
Rule 2: each part is one elided line (its tooltip holds the whole command and what it
        realises), so the line never widens the window nor clips at 1280 × 720; the widths are
        the layout's, not the texts' (the Budget plan's flags keep `BUDGET_PLAN_CHARS`, the full
        load's command takes the rest), so a new command on a tick repaints the line and lays
        out nothing. The line sits in a box (`row_box.HintBox`): a part's font turning fixed or plain as its command
        comes or goes lays out the line alone while its height holds (it laid the window out again).
Rule 3: the full load's part is drawn again only when the view's full load (the same object while derive keeps it,
        as on a budget tick) or the ladder's answer changed: a budget tick makes its command and words once, not again.

Signals:
    copied(str): a command was put on the clipboard.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget

from gguf_budget.core.explorer.derive import ExplorerView
from gguf_budget.core.explorer.full_load import FullLoad
from gguf_budget.core.explorer.headline import full_load_name
from gguf_budget.core.quant.ladder_request import LadderRequest
from gguf_budget.core.quant.would_fit import smaller_quant, wants_smaller_quant
from gguf_budget.core.views.run_it import NO_COMMAND, RunIt, budget_plan_run, full_load_run
from gguf_budget.gui.qt.elided_label import ElidedLabel
from gguf_budget.gui.qt.named import named
from gguf_budget.gui.qt.row_box import HintBox
from gguf_budget.gui.qt.workers.background import BackgroundCall

BUDGET_PLAN = "Budget plan"
FULL_LOAD = "Full load"
BUDGET_PLAN_CHARS = 44


class _Part:
    """One runtime's answer: its name, the command or why none, and Copy."""

    def __init__(self, parent: QWidget, row: QHBoxLayout, name: str, key: str, on_copy: Callable[[str], None],
                 min_chars: int, stretch: int):
        self.name = named(QLabel(f"{name}:", parent), f"runIt{key}Name")
        self.text = named(ElidedLabel(parent, min_chars), f"runIt{key}")
        self.copy = named(QToolButton(parent), f"copyRunIt{key}")  # a tool button: the line stays one text line tall
        self.copy.setText("Copy")
        self.copy.setToolTip(f"Copy the {name} command to the clipboard")
        self.copy.setEnabled(False)
        self.copy.clicked.connect(self._copy)
        self._on_copy = on_copy
        self.command: str | None = None
        self._fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self._plain = self.text.font()
        row.addWidget(self.name)
        row.addWidget(self.text, stretch)
        row.addWidget(self.copy)

    def show(self, run: RunIt | None, waiting: str = "") -> None:
        self.command = None if run is None else run.command
        font = self._fixed if self.command is not None else self._plain
        if font != self.text.font():
            self.text.setFont(font)
        if run is None:
            self.text.setText(waiting)
        elif run.command is None:
            self.text.setText(run.text)
        else:
            self.text.setText(run.command, f"{run.command}\n{run.text}")
        self.copy.setEnabled(self.command is not None)

    def _copy(self) -> None:
        if self.command is not None:
            QGuiApplication.clipboard().setText(self.command)
            self._on_copy(self.command)


class RunItLine(HintBox):
    """Rules 1–2."""

    copied = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("runItLine")
        inner = self.inner
        row = QHBoxLayout(inner)
        row.setContentsMargins(0, 0, 0, 0)
        title = named(QLabel("<b>Run it:</b>", inner), "runItTitle")
        row.addWidget(title)
        self.budget_plan = _Part(inner, row, BUDGET_PLAN, "BudgetPlan", self.copied.emit, BUDGET_PLAN_CHARS, 0)
        row.addSpacing(12)
        self.full_load = _Part(inner, row, FULL_LOAD, "FullLoad", self.copied.emit, 16, 1)
        self.fit()
        self._ladder = BackgroundCall(smaller_quant, parent=self)
        self._ladder.succeeded.connect(self._priced)
        self._ladder_key: tuple[object, ...] | None = None
        self._ladder_model: object = None
        self._smaller: str | None = None
        self._priced_once = False
        self._view: ExplorerView | None = None
        self._shown_load: tuple[FullLoad | None, str | None, bool] = (None, None, False)

    def show_view(self, view: ExplorerView) -> None:
        """Draw both parts from `view` (Rule 1)."""
        self._view = view
        self.budget_plan.show(None if view.plan is None else budget_plan_run(view.plan),
                              f"{NO_COMMAND} — {view.error}" if view.error else "")
        load = view.full_load
        if load is None:
            waiting = view.full_load_error or f"{full_load_name(view.state.machine)}: waiting for the machine probe"
            self._shown_load = (None, None, False)
            self.full_load.show(None, waiting)
            return
        shown = (load, self._smaller_for(view), self._priced_once and not self._ladder.busy)
        if shown[0] is self._shown_load[0] and shown[1:] == self._shown_load[1:]:
            return  # a budget tick: the same full load (derive kept it), its command not made again
        self._shown_load = shown
        self.full_load.show(full_load_run(load.choice, load.max_ctx, shown[1], priced=shown[2]))

    def _smaller_for(self, view: ExplorerView) -> str | None:
        """The ladder's answer for this model and machine, started off the GUI thread when first needed."""
        state, load = view.state, view.full_load
        assert load is not None and state.model is not None and state.machine is not None
        key = (state.machine, state.reserves, state.kv_type, state.ctx_cap)
        if key == self._ladder_key and state.model is self._ladder_model:
            return self._smaller
        if not wants_smaller_quant(load.choice, load.max_ctx):
            return None
        self._ladder_key, self._ladder_model, self._smaller, self._priced_once = key, state.model, None, False
        request = LadderRequest(ctx_cap=state.ctx_cap, kv_type=state.kv_type, reserves=state.reserves)
        self._ladder.start(state.model, state.machine, request)
        return None

    def _priced(self, answer: str | None) -> None:
        self._smaller, self._priced_once = answer, True
        if self._view is not None:
            self.show_view(self._view)

    def ladder_pending(self) -> bool:
        """True while the smaller quant is being priced (tests wait for it)."""
        return self._ladder.busy
