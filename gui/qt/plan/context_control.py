"""The context: "auto" or an exact ctx (slider or typed), a cap for auto, and the auto policy.

Rule 1: "auto" asks the planner for ctx under the cap by the policy (speed first, or context
        first when "prefer context" is ticked); the slider then shows the planner's choice
        without becoming a request.
Rule 2: moving the slider asks for the slider's value; typing a ctx asks for exactly what was
        typed (any whole number in the core's `CONTEXT` range, beyond the trained context too).
        Either switches "auto" off. An asked ctx off the slider's steps is kept as asked: the
        slider shows the nearest step, it never writes back.
Rule 3: the slider's range and step are the core's (`ExplorerView.ctx_span`); slider values
        snap to that step, the top of the range allowed even when it is not a multiple.
Rule 4: the cap box is empty for "the model's context length"; text that is not a whole
        number in range shows an inline error and changes nothing.
Rule 5: an error belongs to the box it was typed in: switching back to "auto" drops a rejected
        ctx — the box shows the last ctx asked again and the error goes — while a rejected cap's
        error stays until the cap box is typed in again; a request set from outside clears both.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QGridLayout, QLabel, QLineEdit, QSlider, QWidget

from gguf_budget.core.model.context import DEFAULT_CTX
from gguf_budget.core.errors import RequestError
from gguf_budget.core.explorer.budget_span import Span
from gguf_budget.core.plan.types import CtxPolicy
from gguf_budget.core.ranges import CONTEXT

from gguf_budget.gui.qt.elided_label import ElidedLabel
from gguf_budget.gui.qt.theme import error_style
from gguf_budget.gui.qt.named import named


def snap(value: int, span: Span) -> int:
    """The nearest multiple of the span's step in [step, high], or `high` itself when nearer (Rule 3)."""
    if value >= span.high:
        return span.high
    snapped = max(span.step, round(value / span.step) * span.step)
    return span.high if snapped > span.high or span.high - value < abs(snapped - value) else snapped


def _optional(edit: QLineEdit) -> int | None:
    text = edit.text().strip()
    return CONTEXT.parse(text) if text else None


SEVEN_DIGITS = "8,888,888"
BOX_PADDING = 16
"""A line edit's frame and its own 2 px text margins on each side, with room to spare."""


class ContextControl(QWidget):
    """Context slider, exact ctx box, auto switch, cap box and "prefer context".

    Signals:
        changed(): the asked ctx, auto, the cap or the policy changed (user input only).
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._span = Span(1, 1, 1)
        self._asked: int | None = None
        self._cap: int | None = None
        self.slider = named(QSlider(Qt.Orientation.Horizontal, self), "ctxSlider")
        self.slider.setToolTip("Context in tokens (arrows, PgUp/PgDn)")
        self.auto = named(QCheckBox("auto", self), "ctxAuto")
        self.auto.setChecked(True)
        self.auto.setToolTip("Let the planner choose ctx under the cap")
        self.slider.setMinimumWidth(60)
        self.value_label = named(ElidedLabel(self, min_chars=18), "ctxValue")  # 200,000 beyond the trained: elided
        self.edit = named(QLineEdit(self, placeholderText="exact"), "ctxEdit")
        self.edit.setToolTip("Type an exact context: it is planned as typed, beyond the trained context too")
        self.cap = named(QLineEdit(self, placeholderText="cap"), "ctxCapEdit")
        for box in (self.edit, self.cap):  # seven digits and their separators, typed or shown, never cut
            box.setMinimumWidth(box.fontMetrics().horizontalAdvance(SEVEN_DIGITS) + BOX_PADDING)
        self.cap.setToolTip("The most context an auto ctx may take (empty: the model's trained context)")
        self.prefer_context = named(QCheckBox("prefer context", self), "preferContext")
        self.prefer_context.setToolTip("Auto ctx takes the largest context that fits, "
                                       f"even at the cost of pinned layers; off: speed first above {DEFAULT_CTX}")
        self.error = named(QLabel(self), "ctxError")
        self.error.setStyleSheet(error_style())
        self.error.hide()
        self._error_in: QLineEdit | None = None
        self._layout()
        self.slider.valueChanged.connect(self._slid)
        self.auto.toggled.connect(self._toggled)
        self.edit.editingFinished.connect(self._typed)
        self.cap.editingFinished.connect(self._cap_typed)
        self.prefer_context.toggled.connect(self.changed)

    def _layout(self) -> None:
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        for column, widget in enumerate((QLabel("Context", self), self.slider, self.value_label, self.auto,
                                         self.edit, self.cap, self.prefer_context)):
            grid.addWidget(widget, 0, column)
        grid.addWidget(self.error, 1, 1, 1, 6)
        grid.setColumnStretch(1, 3)
        grid.setColumnStretch(4, 1)
        grid.setColumnStretch(5, 1)

    # -- what the person asked --------------------------------------------------------

    def requested_ctx(self) -> int | None:
        """None when auto, else exactly the asked ctx."""
        return None if self.auto.isChecked() else self._asked

    def requested_cap(self) -> int | None:
        """The last valid cap typed (None: the model's context length)."""
        return self._cap

    def policy(self) -> CtxPolicy:
        return CtxPolicy.CONTEXT if self.prefer_context.isChecked() else CtxPolicy.SPEED

    # -- set from outside (settings, launcher, the view): no `changed` signal --------------

    def set_request(self, ctx: int | None, cap: int | None = None, policy: CtxPolicy = CtxPolicy.SPEED) -> None:
        self._asked = ctx if ctx is not None else self._asked
        self._cap = cap
        self._quiet(lambda: self.auto.setChecked(ctx is None))
        self._quiet(lambda: self.cap.setText("" if cap is None else str(cap)))
        self._quiet(lambda: self.prefer_context.setChecked(policy is CtxPolicy.CONTEXT))
        self._quiet(lambda: self.edit.setText("" if ctx is None else str(ctx)))
        self._clear_error(self.edit)
        self._clear_error(self.cap)
        self._place()

    def set_span(self, span: Span) -> None:
        """Rule 3: the slider's range and step, from the core."""
        if span == self._span:
            return
        self._span = span
        self._quiet(lambda: self.slider.setRange(span.low, span.high))
        self.slider.setSingleStep(span.step)
        self.slider.setPageStep(span.step * 8)
        self._place()

    def show_chosen(self, ctx: int | None, label: str) -> None:
        """The plan's ctx and the core's label; in auto mode the slider shows the choice (not a request)."""
        if self.auto.isChecked() and ctx is not None:
            self._quiet(lambda: self.slider.setValue(min(ctx, self.slider.maximum())))
        self.value_label.setText(label)

    # -- user input -------------------------------------------------------------------

    def _quiet(self, action: Callable[[], object]) -> None:
        widgets = (self.slider, self.auto, self.cap, self.prefer_context, self.edit)
        for w in widgets:
            w.blockSignals(True)
        action()
        for w in widgets:
            w.blockSignals(False)

    def _place(self) -> None:
        if self._asked is not None and not self.auto.isChecked():
            self._quiet(lambda: self.slider.setValue(min(self._asked or 0, self.slider.maximum())))

    def _slid(self, value: int) -> None:
        snapped = snap(value, self._span)
        if snapped != value:
            self._quiet(lambda: self.slider.setValue(snapped))
        self._ask(snapped)

    def _typed(self) -> None:
        if not self.edit.isModified():
            return
        self.edit.setModified(False)
        if not self.edit.text().strip():
            self.auto.setChecked(True)
            return
        try:
            ctx = _optional(self.edit)
        except RequestError as e:
            self._reject(self.edit, str(e))
            return
        assert ctx is not None
        self._quiet(lambda: self.slider.setValue(min(ctx, self.slider.maximum())))
        self._ask(ctx)

    def _ask(self, ctx: int) -> None:
        self._clear_error(self.edit)
        self._asked = ctx
        self._quiet(lambda: self.auto.setChecked(False))
        self._quiet(lambda: self.edit.setText(str(ctx)))
        self.changed.emit()

    def _cap_typed(self) -> None:
        if not self.cap.isModified():
            return
        self.cap.setModified(False)
        try:
            cap = _optional(self.cap)
        except RequestError as e:
            self._reject(self.cap, str(e))
            return
        self._clear_error(self.cap)
        self._cap = cap
        self.changed.emit()

    def _reject(self, box: QLineEdit, message: str) -> None:
        self._error_in = box
        self.error.setText(message)
        self.error.show()

    def _clear_error(self, box: QLineEdit) -> None:
        """Rule 5: hide the error if `box` holds it."""
        if self._error_in is box:
            self._error_in = None
            self.error.hide()

    def _toggled(self) -> None:
        if self.auto.isChecked() and self._error_in is self.edit:   # Rule 5: auto drops a rejected ctx
            self._quiet(lambda: self.edit.setText("" if self._asked is None else str(self._asked)))
            self._clear_error(self.edit)
        self._place()
        self.changed.emit()
