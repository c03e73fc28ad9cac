"""The planner's other knobs: ring buffers, head mode, KV cache type, force — the slow threshold and the prompt.

Rule 1: every range and choice is the core's (`explorer.state`: ring depth 1 … MAX_BUFFERS,
        the head modes, the KV types and their default, the slow threshold's default; the
        prompt length whose time to the first token is estimated, `ranges.PROMPT_TOKENS`).
Rule 2: beside the ring knob, the plan's "requested N, planned M: why" when they differ
        (`ExplorerView.ring_note`), so the knob never looks like a no-op. The note is a label in a box of its own
        (`row_box`): a ctx tick that rewrites it in as many lines lays nothing out (it laid the side column out again).
"""

from __future__ import annotations

from typing import TypedDict

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QLabel, QSpinBox, QWidget

from gguf_budget.core.explorer.state import (
    BUFFER_RANGE, DEFAULT_N_BUFFERS, DEFAULT_SLOW_BELOW_TOK_S, HEAD_MODE_CHOICES, KV_TYPE_CHOICES, SLOW_RANGE,
)
from gguf_budget.core.model.kv import DEFAULT_KV_TYPE, KVType
from gguf_budget.core.plan.types import HeadMode
from gguf_budget.core.ranges import PROMPT_TOKENS
from gguf_budget.core.speed.estimate import DEFAULT_PROMPT_TOKENS
from gguf_budget.gui.qt.named import named
from gguf_budget.gui.qt.row_box import RowBox


class KnobValues(TypedDict):
    """The knobs as explorer-state fields (`replace(state, **values)`)."""

    n_buffers: int
    head_mode: HeadMode
    kv_type: KVType
    force: bool
    slow_below_tok_s: float
    prompt_tokens: int


class Knobs(QWidget):
    """Spin boxes and combo boxes that write straight into the explorer state.

    Signals:
        changed(): any knob changed.
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.buffers = named(QSpinBox(self, minimum=BUFFER_RANGE[0], maximum=BUFFER_RANGE[1],
                                      value=DEFAULT_N_BUFFERS), "buffersSpin")
        self.buffers.setToolTip("Streaming ring depth asked for (the plan says what it uses, and why)")
        self.ring_note = named(QLabel(self, wordWrap=True), "ringNote")
        self.ring_note.setTextFormat(Qt.TextFormat.PlainText)
        self.head = named(QComboBox(self), "headMode")
        self.head.addItems([m.value for m in HEAD_MODE_CHOICES])
        self.head.setToolTip("LM head: let the planner choose, keep it resident, or stream it")
        self.kv_type = named(QComboBox(self), "kvType")
        self.kv_type.addItems([t.value for t in KV_TYPE_CHOICES])
        self.kv_type.setToolTip("KV cache element type")
        self.force = named(QCheckBox("force (run over budget)", self), "forceCheck")
        self.force.setToolTip("Plan the minimum configuration even when it exceeds the budget")
        self.slow = named(QDoubleSpinBox(self, minimum=SLOW_RANGE[0], maximum=SLOW_RANGE[1],
                                         decimals=2, singleStep=0.5, value=DEFAULT_SLOW_BELOW_TOK_S, suffix=" tok/s"), "slowThreshold")
        self.slow.setToolTip("A feasible plan whose decode estimate at the start of a conversation is under this is "
                             "headlined FEASIBLE — SLOW (amber), whether it streams weights or not")
        self.prompt = named(QSpinBox(self, minimum=PROMPT_TOKENS.low, maximum=PROMPT_TOKENS.high,
                                     value=DEFAULT_PROMPT_TOKENS, singleStep=500, suffix=" tokens"), "promptTokens")
        self.prompt.setGroupSeparatorShown(True)
        self.prompt.setToolTip("The prompt whose prefill and time to the first token are estimated")
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Ring buffers", self.buffers)
        form.addRow("", RowBox(self.ring_note, self))
        form.addRow("Head", self.head)
        form.addRow("KV cache", self.kv_type)
        form.addRow("", self.force)
        form.addRow("Slow below", self.slow)
        form.addRow("Prompt", self.prompt)
        self.buffers.valueChanged.connect(self.changed)
        self.head.currentIndexChanged.connect(self.changed)
        self.kv_type.currentIndexChanged.connect(self.changed)
        self.force.toggled.connect(self.changed)
        self.slow.valueChanged.connect(self.changed)
        self.prompt.valueChanged.connect(self.changed)

    def values(self) -> KnobValues:
        """The knobs as explorer-state fields."""
        return {"n_buffers": self.buffers.value(), "head_mode": HeadMode(self.head.currentText()),
                "kv_type": KVType(self.kv_type.currentText()), "force": self.force.isChecked(),
                "slow_below_tok_s": self.slow.value(), "prompt_tokens": self.prompt.value()}

    def set_tied(self, tied: bool) -> None:
        """A tied head can only be resident: offer "stream" only when the head is separate."""
        model = self.head.model()
        assert isinstance(model, QStandardItemModel)  # a QComboBox's own model
        item = model.item(HEAD_MODE_CHOICES.index(HeadMode.STREAM))
        item.setEnabled(not tied)
        item.setToolTip("The output head is tied to token_embd, so it stays resident" if tied else "")
        if tied and self.head.currentText() == HeadMode.STREAM:
            self.head.setCurrentText(HeadMode.AUTO.value)

    def show_head_mode(self, mode: HeadMode) -> None:
        """Show the head mode a newly opened model runs with (no `changed` signal: it is not a choice)."""
        self.head.blockSignals(True)
        self.head.setCurrentText(mode.value)
        self.head.blockSignals(False)

    def show_ring_note(self, note: str) -> None:
        self.ring_note.setText(note)
        self.ring_note.setVisible(bool(note))

    def set_values(self, n_buffers: int, head_mode: str, kv_type: str, force: bool,
                   slow_below_tok_s: float = DEFAULT_SLOW_BELOW_TOK_S) -> None:
        """Set from outside (settings): no `changed` signal."""
        widgets = (self.buffers, self.head, self.kv_type, self.force, self.slow)
        for w in widgets:
            w.blockSignals(True)
        self.buffers.setValue(n_buffers)
        self.head.setCurrentText(head_mode if head_mode in HEAD_MODE_CHOICES else HeadMode.AUTO.value)
        self.kv_type.setCurrentText(kv_type if kv_type in KV_TYPE_CHOICES else DEFAULT_KV_TYPE.value)
        self.force.setChecked(force)
        self.slow.setValue(slow_below_tok_s)
        for w in widgets:
            w.blockSignals(False)
