"""The planner's other knobs: ring buffers, head mode, KV cache type, force."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QSpinBox, QWidget

from gguf_budget.core.model.kv import DEFAULT_KV_TYPE, KV_TYPES
from gguf_budget.core.plan.types import HEAD_MODES, HeadMode


class Knobs(QWidget):
    """Spin box and combo boxes that write straight into the request.

    Signals:
        changed(): any knob changed.
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.buffers = QSpinBox(self, objectName="buffersSpin", minimum=1, maximum=2, value=2)
        self.buffers.setToolTip("Streaming ring depth (the planner may fall back to 1)")
        self.head = QComboBox(self, objectName="headMode")
        self.head.addItems([m.value for m in HEAD_MODES])
        self.head.setToolTip("LM head: let the planner choose, keep it resident, or stream it")
        self.kv_type = QComboBox(self, objectName="kvType")
        self.kv_type.addItems([t.value for t in KV_TYPES])
        self.kv_type.setToolTip("KV cache element type")
        self.force = QCheckBox("force (run over budget)", self, objectName="forceCheck")
        self.force.setToolTip("Plan the minimum configuration even when it exceeds the budget")
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Ring buffers", self.buffers)
        form.addRow("Head", self.head)
        form.addRow("KV cache", self.kv_type)
        form.addRow("", self.force)
        self.buffers.valueChanged.connect(self.changed)
        self.head.currentIndexChanged.connect(self.changed)
        self.kv_type.currentIndexChanged.connect(self.changed)
        self.force.toggled.connect(self.changed)

    def values(self) -> dict[str, object]:
        return {"n_buffers": self.buffers.value(), "head_mode": self.head.currentText(),
                "kv_type": self.kv_type.currentText(), "force": self.force.isChecked()}

    def set_tied(self, tied: bool) -> None:
        """A tied head can only be resident: offer "stream" only when the head is separate."""
        item = self.head.model().item(HEAD_MODES.index(HeadMode.STREAM))
        item.setEnabled(not tied)
        item.setToolTip("The output head is tied to token_embd, so it stays resident" if tied else "")
        if tied and self.head.currentText() == HeadMode.STREAM:
            self.head.setCurrentText(HeadMode.AUTO.value)

    def set_values(self, n_buffers: int, head_mode: str, kv_type: str, force: bool) -> None:
        """Set from outside (settings): no `changed` signal."""
        widgets = (self.buffers, self.head, self.kv_type, self.force)
        for w in widgets:
            w.blockSignals(True)
        self.buffers.setValue(n_buffers)
        self.head.setCurrentText(head_mode if head_mode in HEAD_MODES else HeadMode.AUTO.value)
        self.kv_type.setCurrentText(kv_type if kv_type in KV_TYPES else DEFAULT_KV_TYPE.value)
        self.force.setChecked(force)
        for w in widgets:
            w.blockSignals(False)
