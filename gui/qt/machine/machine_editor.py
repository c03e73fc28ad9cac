"""What-if: a hypothetical machine (host RAM, identical GPUs) and the reserves, typed in.

Rule 1: sizes are read with the core's `parse_size`, the machine is built by the core's
        `hypothetical_machine`; text that does not parse, or a machine the core rejects,
        shows an inline error and keeps the last good values.
Rule 2: the hypothetical machine replaces the probed snapshot only while its box is ticked.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFormLayout, QGroupBox, QLabel, QLineEdit, QSpinBox, QVBoxLayout, QWidget

from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.machine.snapshot import HardwareSnapshot, hypothetical_machine
from gguf_budget.core.units import human_bytes, parse_size

MAX_GPUS = 8


def _optional_size(edit: QLineEdit) -> int | None:
    return parse_size(edit.text()) if edit.text().strip() else None


class MachineEditor(QWidget):
    """The hypothetical-machine box and the reserve fields.

    Signals:
        changed(): the hypothetical machine (or its switch) or a reserve changed.
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.box = QGroupBox("Hypothetical machine (what-if)", self, objectName="hypotheticalBox",
                             checkable=True, checked=False)
        self.host_available = QLineEdit("32G", self, objectName="hypoHostAvailable")
        self.host_total = QLineEdit("", self, objectName="hypoHostTotal", placeholderText="= available")
        self.gpu_count = QSpinBox(self, objectName="hypoGpuCount", minimum=0, maximum=MAX_GPUS, value=1)
        self.gpu_total = QLineEdit("24G", self, objectName="hypoGpuTotal")
        self.gpu_free = QLineEdit("", self, objectName="hypoGpuFree", placeholderText="= all free")
        self.host_reserve = QLineEdit(human_bytes(Reserves().host), self, objectName="reserveHost")
        self.gpu_reserve = QLineEdit(human_bytes(Reserves().gpu), self, objectName="reserveGpu")
        self.error = QLabel(self, objectName="machineError", wordWrap=True)
        self.error.setStyleSheet("color: #D93025;")
        self.error.hide()
        self._layout()
        self._machine: HardwareSnapshot | None = None
        self._reserves = Reserves()
        for edit in (self.host_available, self.host_total, self.gpu_total, self.gpu_free,
                     self.host_reserve, self.gpu_reserve):
            edit.editingFinished.connect(self._edited)
        self.gpu_count.valueChanged.connect(self._edited)
        self.box.toggled.connect(self._edited)

    def _layout(self) -> None:
        form = QFormLayout(self.box)
        form.addRow("Host RAM free", self.host_available)
        form.addRow("Host RAM total", self.host_total)
        form.addRow("GPUs", self.gpu_count)
        form.addRow("GPU memory", self.gpu_total)
        form.addRow("GPU free", self.gpu_free)
        reserves = QFormLayout()
        reserves.addRow("Host reserve", self.host_reserve)
        reserves.addRow("First-GPU reserve", self.gpu_reserve)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(reserves)
        layout.addWidget(self.box)
        layout.addWidget(self.error)

    def machine(self) -> HardwareSnapshot | None:
        """The hypothetical snapshot while the box is ticked, else None (use the probe)."""
        return self._machine if self.box.isChecked() else None

    def reserves(self) -> Reserves:
        return self._reserves

    def set_machine(self, host_available: str, gpu_count: int, gpu_total: str) -> None:
        """Fill in and tick the box (for launchers and tests); emits `changed`."""
        self.host_available.setText(host_available)
        self.gpu_total.setText(gpu_total)
        self.gpu_count.blockSignals(True)
        self.gpu_count.setValue(gpu_count)
        self.gpu_count.blockSignals(False)
        if self.box.isChecked():
            self._edited()
        else:
            self.box.setChecked(True)

    def _edited(self) -> None:
        try:
            reserves = Reserves(parse_size(self.host_reserve.text()), parse_size(self.gpu_reserve.text()))
            machine = self._build() if self.box.isChecked() else self._machine
        except ValueError as e:
            self.error.setText(str(e))
            self.error.show()
            return
        self.error.hide()
        self._reserves, self._machine = reserves, machine
        self.changed.emit()

    def _build(self) -> HardwareSnapshot:
        count = self.gpu_count.value()
        return hypothetical_machine(
            host_available=parse_size(self.host_available.text()),
            host_total=_optional_size(self.host_total),
            gpu_count=count,
            gpu_total=parse_size(self.gpu_total.text()) if count else 0,
            gpu_free=_optional_size(self.gpu_free) if count else None,
        )
