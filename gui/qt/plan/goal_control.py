"""The Goal control beside the knobs: choose a goal and its floors, and every knob is set from `tune`'s answer.

Rule 1: every word, choice and default floor is the core's (`core.explorer.goal`); the search is `core.explorer.tune`
        (the one `gguf-budget tune` runs), over the session's state with the controls' pending change put in first.
Rule 2: the search runs off the GUI thread (`ProgressCall`) with Cancel: a cancelled search changes nothing. Its answer
        goes into the session as one change (`ApplyGoal`: every knob from the answer, or — nothing met the goal —
        the goal line alone); the session refuses it when the state moved meanwhile, and the message area says so.
Rule 3: choosing a goal in the box (mouse or keyboard) or pressing Apply runs it; "none" forgets the goal and keeps
        the knobs. A knob changed afterwards leaves the goal as last applied: nothing here searches by itself.
Rule 4: the box and floors show the goal the session last applied (quietly), except while a search runs.
Rule 5: the search's modules (`tune`, with the quant ladder's pricing) are not imported with the window: the first
        search imports them on its worker thread, unless the import after the first plan (`app` Rule 6) has.

Signals (GoalControl):
    asked(): Apply, or a goal chosen in the box.
    cancelRequested(): Cancel.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox, QDoubleSpinBox, QFormLayout, QHBoxLayout, QLabel, QProgressBar, QPushButton, QSpinBox, QWidget,
)

from gguf_budget.core.errors import RequestError
from gguf_budget.core.explorer.derive import ExplorerView
from gguf_budget.core.explorer.goal import (
    APPLY_TIP, CANCEL_TIP, CANCELLED, DEFAULT_FLOORS, GOAL_CHOICES, GOAL_TIP, MOVED, NAMES, NO_SPEED_FLOOR, SPEED_FLOOR,
    SPEED_FLOOR_HIGH, SPEED_TIP, TIPS, applied_choice, ctx_floor_label, ctx_floor_tip, searching_text, window_floors,
)
from gguf_budget.core.explorer.messages import MessageKind
from gguf_budget.core.explorer.session import ApplyGoal, ClearGoal, Session
from gguf_budget.core.explorer.state import AppliedGoal
from gguf_budget.core.explorer.tune_goal import Constraints, Goal
from gguf_budget.core.ranges import CONTEXT
from gguf_budget.gui.qt.named import named
from gguf_budget.gui.qt.workers.progress_call import ProgressCall


class GoalControl(QWidget):
    """The goal box, its two floors, Apply and Cancel (Rule 1: words from the core)."""

    asked = Signal()
    cancelRequested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.goal = named(QComboBox(self), "goalCombo")
        for i, goal in enumerate(GOAL_CHOICES):
            self.goal.addItem(NAMES[goal])
            self.goal.setItemData(i, TIPS[goal], Qt.ItemDataRole.ToolTipRole)
        self.goal.setToolTip(GOAL_TIP)
        self.min_tok_s = named(QDoubleSpinBox(self, minimum=0.0, maximum=SPEED_FLOOR_HIGH, decimals=1,
                                              singleStep=1.0, value=DEFAULT_FLOORS.min_tok_s, suffix=" tok/s"),
                               "goalMinTokS")
        self.min_tok_s.setSpecialValueText(NO_SPEED_FLOOR)
        self.min_tok_s.setToolTip(SPEED_TIP)
        self.min_ctx = named(QSpinBox(self, minimum=CONTEXT.low, maximum=CONTEXT.high, value=DEFAULT_FLOORS.min_ctx,
                                      singleStep=1024, suffix=" tokens"), "goalMinCtx")
        self.min_ctx.setGroupSeparatorShown(True)
        self.apply = named(QPushButton("Apply", self), "goalApply")
        self.apply.setToolTip(APPLY_TIP)
        self.cancel = named(QPushButton("Cancel", self), "goalCancel")
        self.cancel.setToolTip(CANCEL_TIP)
        self.cancel.setEnabled(False)
        self.busy = named(QProgressBar(self, minimum=0, maximum=0), "goalBusy")
        self.busy.setTextVisible(False)
        self.busy.setMaximumHeight(8)
        self.busy.hide()
        buttons = QHBoxLayout()
        buttons.addWidget(self.apply)
        buttons.addWidget(self.cancel)
        self.ctx_label = QLabel(ctx_floor_label(None), self)
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.addRow("Goal", self.goal)
        form.addRow(SPEED_FLOOR, self.min_tok_s)
        form.addRow(self.ctx_label, self.min_ctx)
        form.addRow(buttons)
        form.addRow(self.busy)
        self.goal.activated.connect(lambda _: self.asked.emit())
        self.goal.currentIndexChanged.connect(lambda _: self._label_floors())
        self.apply.clicked.connect(self.asked)
        self.cancel.clicked.connect(self.cancelRequested)
        self._label_floors()

    def chosen(self) -> Goal | None:
        return GOAL_CHOICES[self.goal.currentIndex()]

    def floors(self) -> Constraints:
        """The floors as `tune` takes them (RequestError for a value it refuses)."""
        return window_floors(self.min_tok_s.value(), self.min_ctx.value())

    def set_busy(self, busy: bool) -> None:
        self.busy.setVisible(busy)
        self.cancel.setEnabled(busy)

    def show_applied(self, applied: AppliedGoal | None) -> None:
        """Rule 4, without signals: the goal last applied and its floors (none: the box says none, floors kept)."""
        goal, floors = applied_choice(applied)
        blockers = [QSignalBlocker(w) for w in (self.goal, self.min_tok_s, self.min_ctx)]
        self.goal.setCurrentIndex(GOAL_CHOICES.index(goal))
        if applied is not None:
            self.min_tok_s.setValue(floors.min_tok_s)
            self.min_ctx.setValue(floors.min_ctx)
        del blockers
        self._label_floors()

    def _label_floors(self) -> None:
        goal = self.chosen()
        self.ctx_label.setText(ctx_floor_label(goal))
        self.min_ctx.setToolTip(ctx_floor_tip(goal))


class GoalLink(QObject):
    """Rule 2: the control's choice → a search off the GUI thread → one session change."""

    def __init__(self, control: GoalControl, session: Session, commit_controls: Callable[[], None],
                 say: Callable[[str, MessageKind], None], parent: QObject):
        super().__init__(parent)
        self._control, self._session, self._commit, self._say = control, session, commit_controls, say
        self.worker = ProgressCall("searching llama.cpp's settings for a goal", self)
        self.worker.succeeded.connect(self._answered)
        self.worker.failed.connect(self._failed)
        self.worker.cancelled.connect(self._cancelled)
        control.asked.connect(self.run)
        control.cancelRequested.connect(self.worker.cancel)
        session.subscribe(self._draw)
        self._searched = session.state
        self._shown: AppliedGoal | None = None

    def run(self) -> None:
        """Rule 3: the chosen goal at the floors, over the session's state with every pending control in it."""
        self._commit()
        goal, state = self._control.chosen(), self._session.state
        if goal is None:
            self.worker.discard()
            self._control.set_busy(False)
            self._session.apply(ClearGoal())
            return
        try:
            floors = self._control.floors()
            if state.model is None or state.machine is None:
                raise RequestError("a goal needs a model and a machine: open a model first")
        except RequestError as e:
            self._say(str(e), MessageKind.PROBLEM)
            return
        self._say(searching_text(goal, floors), MessageKind.BUSY)
        self._start(goal, floors)

    def _start(self, goal: Goal, floors: Constraints) -> None:
        state = self._searched = self._session.state
        model = state.model
        assert model is not None
        self._control.set_busy(True)

        def search(_progress: object, _cancelled: object) -> object:
            from gguf_budget.core.explorer.tune import tune  # Rule 5

            return tune(model, state, goal, floors)

        self.worker.start(search)

    def _answered(self, answer: object) -> None:
        """Rule 2; a state that moved during the search (a knob, the bandwidth probe) is searched again, once more."""
        from gguf_budget.core.explorer.tune import TuneAnswer  # imported by the search that answered

        assert isinstance(answer, TuneAnswer)
        if self._session.state != self._searched and self._session.state.model is not None:
            self._say(f"{MOVED} {searching_text(answer.goal, answer.constraints)}", MessageKind.BUSY)
            self._start(answer.goal, answer.constraints)
            return
        self._control.set_busy(False)
        try:
            view = self._session.apply(ApplyGoal(answer, self._searched))
        except RequestError as e:
            self._say(str(e), MessageKind.PROBLEM)
            self._restore()
            return
        self._say(view.headline.goal, MessageKind.INFO if answer.best is not None else MessageKind.PROBLEM)

    def _failed(self, message: str) -> None:
        self._control.set_busy(False)
        self._say(message, MessageKind.PROBLEM)
        self._restore()

    def _cancelled(self) -> None:
        self._control.set_busy(False)
        self._say(CANCELLED, MessageKind.INFO)
        self._restore()

    def _restore(self) -> None:
        """Rule 4 after a search that changed nothing: the box shows the goal applied before it."""
        self._shown = self._session.state.goal
        self._control.show_applied(self._shown)

    def _draw(self, view: ExplorerView) -> None:
        """Rule 4: a newly applied (or forgotten) goal; floors typed meanwhile stay while the goal is the same."""
        if not self.worker.busy and view.state.goal is not self._shown:
            self._shown = view.state.goal
            self._control.show_applied(self._shown)
