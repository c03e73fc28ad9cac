"""The context: a slider in steps of 128 tokens up to the model's context length, or "auto".

Rule 1: "auto" asks the planner for the highest ctx that fits; the slider then shows the
        planner's choice without becoming a request.
Rule 2: moving the slider is an explicit request: it switches "auto" off.
Rule 3: values snap to multiples of 128 (the planner's step); the model's own context
        length is allowed even when it is not a multiple of 128.
Rule 4: the slider ends at the core's `CONTEXT` range (a hostile file may claim 2^63 tokens);
        a larger chosen ctx is shown in the label and pins the slider at its end.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QSlider, QWidget

from gguf_budget.core.ranges import CONTEXT

STEP = 128


def snap(value: int, maximum: int) -> int:
    """The nearest multiple of STEP in [STEP, maximum], or `maximum` itself when nearer."""
    if value >= maximum:
        return maximum
    snapped = max(STEP, round(value / STEP) * STEP)
    return maximum if snapped > maximum or maximum - value < abs(snapped - value) else snapped


class ContextControl(QWidget):
    """Context slider + auto switch.

    Signals:
        changed(): the requested ctx or the auto switch changed (user input only).
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.slider = QSlider(Qt.Orientation.Horizontal, self, objectName="ctxSlider")
        self.slider.setToolTip("Context in tokens, steps of 128 (arrows, PgUp/PgDn)")
        self.slider.setRange(STEP, STEP)
        self.slider.setSingleStep(STEP)
        self.slider.setPageStep(STEP * 8)
        self.auto = QCheckBox("auto", self, objectName="ctxAuto", checked=True)
        self.auto.setToolTip("Let the planner pick the highest context that fits")
        self.value_label = QLabel(self, objectName="ctxValue")
        self.value_label.setFixedWidth(self.value_label.fontMetrics().horizontalAdvance("1,048,576 tokens (auto)"))
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Context", self))
        row.addWidget(self.slider, 1)
        row.addWidget(self.value_label)
        row.addWidget(self.auto)
        self.slider.valueChanged.connect(self._slid)
        self.auto.toggled.connect(self._toggled)

    def requested_ctx(self) -> int | None:
        """None when auto, else the slider's tokens."""
        return None if self.auto.isChecked() else self.slider.value()

    def set_maximum(self, context_length: int) -> None:
        self._quiet(lambda: self.slider.setRange(STEP, max(STEP, min(context_length, CONTEXT.high))))
        self._label()

    def set_request(self, ctx: int | None) -> None:
        """Set from outside (settings, launcher): no `changed` signal."""
        self._quiet(lambda: self.auto.setChecked(ctx is None))
        if ctx is not None:
            self._quiet(lambda: self.slider.setValue(snap(ctx, self.slider.maximum())))
        self._label()

    def show_chosen(self, ctx: int) -> None:
        """In auto mode, move the slider to the planner's choice (not a request)."""
        if self.auto.isChecked():
            self._quiet(lambda: self.slider.setValue(min(ctx, self.slider.maximum())))
            self._label(ctx)

    def _quiet(self, action) -> None:
        for w in (self.slider, self.auto):
            w.blockSignals(True)
        action()
        for w in (self.slider, self.auto):
            w.blockSignals(False)

    def _slid(self, value: int) -> None:
        snapped = snap(value, self.slider.maximum())
        if snapped != value:
            self._quiet(lambda: self.slider.setValue(snapped))
        self._quiet(lambda: self.auto.setChecked(False))
        self._label()
        self.changed.emit()

    def _toggled(self) -> None:
        self._label()
        self.changed.emit()

    def _label(self, chosen: int | None = None) -> None:
        if self.auto.isChecked():
            text = "auto" if chosen is None else f"{chosen:,} tokens (auto)"
        else:
            text = f"{self.slider.value():,} tokens"
        self.value_label.setText(text)
