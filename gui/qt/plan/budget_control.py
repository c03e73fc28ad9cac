"""The RAM budget: a slider in MiB, a text box for exact sizes, and an "unlimited" switch.

Rule 1: the budget in bytes is the source of truth. The slider writes whole MiB; the text
        box writes exactly what was typed (`512M`, `1.5G`, `2GiB`, plain bytes), read by the
        core's `BUDGET.parse` as the CLI's `--budget` is; the slider then shows the nearest MiB,
        clamped. A decimal-looking unit (`5GB`) is read as binary and the note line says so
        (`units.binary_unit_note`, the CLI's words).
Rule 2: text that does not parse or lies outside the core's `BUDGET` range shows an inline
        error and changes nothing — the last good budget stays, and so does the plan on
        screen (validate, then mutate). The note line under the controls keeps its height
        when empty, so an error or a note never moves the layout.
Rule 3: "unlimited" (budget 0 in the request) greys out the slider; typing `0` means unlimited,
        as `--budget 0` does on the command line (the last budget is kept for unticking).
Rule 4: the slider's span and step are the core's (`ExplorerView.budget_span`), at most the
        core's largest budget (`BUDGET`, 2^30 MiB: inside Qt's 32-bit int); a budget beyond
        the span is clamped on the slider only, and a new span never moves the budget.
Rule 5: the slider marks this machine's usable RAM (available − host reserve, `ExplorerView.usable_ram`)
        with a tick where that budget would sit, when it lies on the slider; the headline says
        when the budget exceeds it. Where the mark is drawn is worked out again only when the mark, the slider's
        range, its size or its style moved: a budget tick moves the handle under the same mark, and asking the
        style for the handle's width on every paint was a third of the slider's paint.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import (
    QCheckBox, QGridLayout, QLabel, QLineEdit, QSizePolicy, QSlider, QStyle, QStyleOptionSlider, QWidget,
)

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.explorer.budget_span import Span
from gguf_budget.core.ranges import BUDGET
from gguf_budget.core.units import binary_unit_note, human_bytes

from gguf_budget.gui.qt.theme import USABLE_MARK_COLOUR, error_style
from gguf_budget.gui.qt.named import named

MIB = 1 << 20
SLIDER_MAX_MIB = BUDGET.high // MIB


def slider_mib(n_bytes: int) -> int:
    """The nearest whole MiB the slider can hold (Rule 4)."""
    return min(max(round(n_bytes / MIB), 0), SLIDER_MAX_MIB)


class MarkedSlider(QSlider):
    """A slider that draws one mark: this machine's usable RAM (Rule 5); `mark()` is where, in MiB."""

    def __init__(self, parent: QWidget, name: str):
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.setObjectName(name)
        self._mark: int | None = None
        self._placed: tuple[object, int] | None = None
        self._pen = QPen(QColor(USABLE_MARK_COLOUR), 2)

    def mark(self) -> int | None:
        """The marked value in slider units, None when there is no mark or it lies off the slider."""
        if self._mark is None or not self.minimum() <= self._mark <= self.maximum():
            return None
        return self._mark

    def set_mark(self, value: int | None) -> None:
        if value != self._mark:
            self._mark = value
            self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        x = self.mark_x()
        if x is None:
            return
        painter = QPainter(self)
        painter.setPen(self._pen)
        painter.drawLine(x, 0, x, self.height())
        painter.end()

    def mark_x(self) -> int | None:
        """Where the mark is drawn (Rule 5), None when there is none; kept while what places it holds."""
        value = self.mark()
        if value is None:
            return None
        key = (value, self.minimum(), self.maximum(), self.width(), self.height(), self.style())
        if self._placed is None or self._placed[0] != key:
            option = QStyleOptionSlider()
            self.initStyleOption(option)
            handle = self.style().subControlRect(QStyle.ComplexControl.CC_Slider, option,
                                                 QStyle.SubControl.SC_SliderHandle, self)
            span = self.width() - handle.width()
            self._placed = (key, handle.width() // 2 + QStyle.sliderPositionFromValue(self.minimum(), self.maximum(),
                                                                                        value, span))
        return self._placed[1]


class BudgetControl(QWidget):
    """Budget slider + text box + unlimited switch.

    Signals:
        changed(): the budget or the unlimited switch changed (user input only).
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._bytes = 0
        self.slider = MarkedSlider(self, "budgetSlider")
        self.slider.setToolTip("RAM budget in MiB (arrows, PgUp/PgDn)")
        self.edit = named(QLineEdit(self, placeholderText="e.g. 512M, 1.5G, 2GiB"), "budgetEdit")
        self.unlimited = named(QCheckBox("unlimited", self), "budgetUnlimited")
        self.error = named(QLabel(self), "budgetError")
        self.error.setTextFormat(Qt.TextFormat.PlainText)
        self.error.setStyleSheet(error_style())
        self.note = named(QLabel(self), "budgetNote")
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        for label in (self.error, self.note):  # Rule 2: the line keeps its height, shown or not
            policy = label.sizePolicy()
            policy.setRetainSizeWhenHidden(True)
            policy.setHorizontalPolicy(QSizePolicy.Policy.Ignored)
            label.setSizePolicy(policy)
            label.hide()
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(QLabel("RAM budget", self), 0, 0)
        grid.addWidget(self.slider, 0, 1)
        grid.addWidget(self.edit, 0, 2)
        grid.addWidget(self.unlimited, 0, 3)
        grid.addWidget(self.error, 1, 1, 1, 3)
        grid.addWidget(self.note, 1, 1, 1, 3)
        grid.setColumnStretch(1, 1)
        self.slider.valueChanged.connect(self._slid)
        self.edit.editingFinished.connect(self._typed)
        self.unlimited.toggled.connect(self._toggled)

    def budget(self) -> Budget | None:
        """The budget the person set; None before any (no model yet)."""
        if self.unlimited.isChecked():
            return Budget.unlimited()
        return Budget.of(self._bytes) if self._bytes else None

    def exact_bytes(self) -> int:
        """The budget last set, even while "unlimited" is on."""
        return self._bytes

    def set_span(self, span: Span) -> None:
        """Rule 4: the core's span in bytes (whole MiB) and its step; the budget is kept."""
        lo, hi = min(max(1, span.low // MIB), SLIDER_MAX_MIB - 1), min(max(2, -(-span.high // MIB)), SLIDER_MAX_MIB)
        hi = max(hi, lo + 1)
        step = min(max(1, span.step // MIB), hi - lo)
        self.slider.blockSignals(True)
        self.slider.setRange(lo, hi)
        self.slider.setSingleStep(step)
        self.slider.setPageStep(min(10 * step, hi - lo))
        self.slider.setValue(slider_mib(self._bytes))
        self.slider.blockSignals(False)

    def set_usable(self, n_bytes: int | None) -> None:
        """Rule 5: mark this machine's usable RAM (None: no machine known yet)."""
        self.slider.set_mark(None if n_bytes is None else slider_mib(n_bytes))
        tip = "" if n_bytes is None else f"; the mark is this machine's usable RAM, {human_bytes(n_bytes)}"
        self.slider.setToolTip(f"RAM budget in MiB (arrows, PgUp/PgDn){tip}")

    def set_budget(self, n_bytes: int, unlimited: bool = False) -> None:
        """Set from outside (settings, launcher): no `changed` signal."""
        self._bytes = max(0, n_bytes)
        self.unlimited.blockSignals(True)
        self.unlimited.setChecked(unlimited)
        self.unlimited.blockSignals(False)
        self._enable()
        self._show(self._bytes)

    def _show(self, n_bytes: int) -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(slider_mib(n_bytes))
        self.slider.blockSignals(False)
        self.edit.setText(human_bytes(n_bytes) if n_bytes else "")  # no budget yet (no model): no "0 B"
        self.edit.setModified(False)

    def _slid(self, mib: int) -> None:
        self._bytes = mib * MIB
        self._say(None, None)
        self.edit.setText(human_bytes(self._bytes))
        self.edit.setModified(False)
        self.changed.emit()

    def _typed(self) -> None:
        if not self.edit.isModified():
            return
        self.edit.setModified(False)
        text = self.edit.text()
        try:
            n_bytes = BUDGET.parse(text)
        except ValueError as e:
            self._say(str(e), None)
            return
        self._say(None, binary_unit_note(text))
        if n_bytes == 0:  # Rule 3
            self.unlimited.setChecked(True)
            self._show(self._bytes)
            return
        self._bytes = n_bytes
        self.slider.blockSignals(True)
        self.slider.setValue(slider_mib(n_bytes))
        self.slider.blockSignals(False)
        self.changed.emit()

    def _say(self, error: str | None, note: str | None) -> None:
        """The one line under the controls: an error, else a note, else nothing (Rule 2)."""
        if error is None and note is None and self.error.isHidden() and self.note.isHidden():
            return  # a slider tick with nothing to clear
        for label, text in ((self.error, error), (self.note, None if error else note)):
            label.setText(text or "")
            label.setToolTip(text or "")
            label.setVisible(text is not None)

    def _toggled(self) -> None:
        self._enable()
        self.changed.emit()

    def _enable(self) -> None:
        self.slider.setEnabled(not self.unlimited.isChecked())
        self.edit.setEnabled(not self.unlimited.isChecked())
