"""The RAM budget: a slider in MiB, a text box for exact sizes, and an "unlimited" switch.

Rule 1: the budget in bytes is the source of truth. The slider writes whole MiB; the text
        box writes exactly what was typed (`512M`, `1.5G`, `2GiB`, plain bytes), parsed
        by the core's `parse_size`; the slider then shows the nearest MiB, clamped.
Rule 2: text that does not parse, is 0 or lies outside the core's `BUDGET` range shows an
        inline error and changes nothing — the last good budget stays, and so does the plan
        on screen (validate, then mutate).
Rule 4: the slider ends at the core's largest budget (`BUDGET`, 2^30 MiB: inside Qt's 32-bit
        int); a budget beyond its range is clamped on the slider only.
Rule 3: "unlimited" (budget 0 in the request) greys out the slider and the text box.
Rule 5: the slider marks this machine's usable RAM (available − host reserve, `ExplorerView.usable_ram`)
        with a tick where that budget would sit, when it lies on the slider; the headline says
        when the budget exceeds it.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QCheckBox, QGridLayout, QLabel, QLineEdit, QSlider, QStyle, QStyleOptionSlider, QWidget

from gguf_budget.core.ranges import BUDGET
from gguf_budget.core.units import human_bytes

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
        value = self.mark()
        if value is None:
            return
        option = QStyleOptionSlider()
        self.initStyleOption(option)
        handle = self.style().subControlRect(QStyle.ComplexControl.CC_Slider, option,
                                             QStyle.SubControl.SC_SliderHandle, self)
        span = self.width() - handle.width()
        x = handle.width() // 2 + QStyle.sliderPositionFromValue(self.minimum(), self.maximum(), value, span)
        painter = QPainter(self)
        painter.setPen(QPen(QColor(USABLE_MARK_COLOUR), 2))
        painter.drawLine(x, 0, x, self.height())
        painter.end()


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
        self.error.hide()
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(QLabel("RAM budget", self), 0, 0)
        grid.addWidget(self.slider, 0, 1)
        grid.addWidget(self.edit, 0, 2)
        grid.addWidget(self.unlimited, 0, 3)
        grid.addWidget(self.error, 1, 1, 1, 3)
        grid.setColumnStretch(1, 1)
        self.slider.valueChanged.connect(self._slid)
        self.edit.editingFinished.connect(self._typed)
        self.unlimited.toggled.connect(self._toggled)

    def budget_bytes(self) -> int:
        """The budget for the request: 0 when unlimited."""
        return 0 if self.unlimited.isChecked() else self._bytes

    def exact_bytes(self) -> int:
        """The budget last set, even while "unlimited" is on."""
        return self._bytes

    def set_range(self, low: int, high: int) -> None:
        """Slider range in bytes (rounded outwards to whole MiB); the budget is kept."""
        lo, hi = min(max(1, low // MIB), SLIDER_MAX_MIB - 1), min(max(2, -(-high // MIB)), SLIDER_MAX_MIB)
        self.slider.blockSignals(True)
        self.slider.setRange(lo, max(hi, lo + 1))
        span = self.slider.maximum() - lo
        self.slider.setSingleStep(max(1, span // 200))
        self.slider.setPageStep(max(1, span // 20))
        self.slider.blockSignals(False)
        self._show(self._bytes)

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
        self.edit.setText(human_bytes(n_bytes))
        self.edit.setModified(False)

    def _slid(self, mib: int) -> None:
        self._bytes = mib * MIB
        self.error.hide()
        self.edit.setText(human_bytes(self._bytes))
        self.edit.setModified(False)
        self.changed.emit()

    def _typed(self) -> None:
        if not self.edit.isModified():
            return
        self.edit.setModified(False)
        try:
            n_bytes = BUDGET.parse(self.edit.text())
        except ValueError as e:
            self._reject(str(e))
            return
        if n_bytes == 0:
            self._reject("a budget must be above 0 (tick \"unlimited\" for no budget)")
            return
        self.error.hide()
        self._bytes = n_bytes
        self.slider.blockSignals(True)
        self.slider.setValue(slider_mib(n_bytes))
        self.slider.blockSignals(False)
        self.changed.emit()

    def _reject(self, message: str) -> None:
        self.error.setText(message)
        self.error.show()

    def _toggled(self) -> None:
        self._enable()
        self.changed.emit()

    def _enable(self) -> None:
        self.slider.setEnabled(not self.unlimited.isChecked())
        self.edit.setEnabled(not self.unlimited.isChecked())
