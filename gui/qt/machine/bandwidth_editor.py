"""The tier bandwidths the decode estimates use: measured or assumed unless a person types one.

Rule 1: each box is empty for "measured (or assumed)"; its placeholder shows the figure in use
        and where it came from. Typed text is a rate as spec sheets print it (`1008GB/s` decimal,
        `20GiB/s` or `20G` binary), read by the core's `BANDWIDTH` range, and the line below says
        back what was read (`units.rate_reading`); text that does not parse shows an inline error
        and changes nothing.
Rule 2: the widget only holds what was typed; the window merges it over the measured figures
        (`machine.bandwidth.with_typed`).
Rule 3: "Measure again" asks the window to measure this machine again (the figures are measured
        once and kept, as `hw --measure` does); the placeholders then show the new figures.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFormLayout, QLabel, QLineEdit, QPushButton, QWidget

from gguf_budget.core.errors import RequestError
from gguf_budget.core.machine.bandwidth import Bandwidths, measured_date
from gguf_budget.core.ranges import BANDWIDTH
from gguf_budget.core.units import human_bytes, rate_reading

from gguf_budget.gui.qt.theme import error_style
from gguf_budget.gui.qt.named import named

TIERS = {"ram": ("RAM", "bwRam"), "disk": ("Disk", "bwDisk"), "vram": ("VRAM", "bwVram")}


class BandwidthEditor(QWidget):
    """Three boxes, one per tier.

    Signals:
        changed(): a typed bandwidth changed (or was cleared).
        measureAgain(): the person asked to measure this machine again (Rule 3).
    """

    changed = Signal()
    measureAgain = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._typed: dict[str, int | None] = dict.fromkeys(TIERS)
        self.edits = {tier: named(QLineEdit(self), name) for tier, (_, name) in TIERS.items()}
        self.error = named(QLabel(self, wordWrap=True), "bandwidthError")
        self.error.setTextFormat(Qt.TextFormat.PlainText)
        self.error.setStyleSheet(error_style())
        self.error.hide()
        self.reading = named(QLabel(self, wordWrap=True), "bandwidthReading")
        self.reading.setTextFormat(Qt.TextFormat.PlainText)
        self.reading.hide()
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        for tier, edit in self.edits.items():
            edit.setToolTip(f"{TIERS[tier][0]} read bandwidth, e.g. 1008GB/s (decimal, as spec sheets print) or 20GiB/s "
                            "(empty: measured or assumed)")
            edit.editingFinished.connect(lambda t=tier: self._edited(t))
            form.addRow(f"{TIERS[tier][0]} bandwidth", edit)
        form.addRow("", self.error)
        form.addRow("", self.reading)
        self.again = named(QPushButton("Measure again", self), "measureAgain")
        self.again.setToolTip("Measure this machine's RAM bandwidth, compute rate and this model's disk again "
                              "(about a second) and keep them for every estimate")
        self.again.clicked.connect(self.measureAgain)
        form.addRow("", self.again)

    def typed(self) -> dict[str, int | None]:
        """Bytes per second typed per tier (None: not typed)."""
        return dict(self._typed)

    def set_typed(self, ram: int | None, disk: int | None, vram: int | None) -> None:
        """Set from outside (settings): no `changed` signal."""
        for tier, value in (("ram", ram), ("disk", disk), ("vram", vram)):
            self._typed[tier] = value
            edit = self.edits[tier]
            edit.blockSignals(True)
            edit.setText("" if value is None else f"{human_bytes(value)}/s")
            edit.setModified(False)
            edit.blockSignals(False)

    def show_in_use(self, bandwidths: Bandwidths) -> None:
        """Placeholders: the figure each tier uses now and its source."""
        for tier, edit in self.edits.items():
            figure = getattr(bandwidths, tier)
            date = measured_date(figure.measured_at)
            edit.setPlaceholderText(f"{human_bytes(figure.bytes_per_s)}/s ({figure.source.value}{' ' + date if date else ''})")
            edit.setToolTip(figure.text)
        self.again.setToolTip(f"Measure again (now: {bandwidths.compute.text}; {bandwidths.calibration.text})")

    def _edited(self, tier: str) -> None:
        edit = self.edits[tier]
        if not edit.isModified():
            return
        edit.setModified(False)
        text = edit.text().strip()
        try:
            value = BANDWIDTH.parse(text) if text else None
        except RequestError as e:
            self.error.setText(f"{TIERS[tier][0]}: {e}")
            self.error.show()
            return
        self.error.hide()
        self.reading.setText(f"{TIERS[tier][0]}: {rate_reading(text)}" if text else "")
        self.reading.setVisible(bool(text))
        if value != self._typed[tier]:
            self._typed[tier] = value
            self.changed.emit()
