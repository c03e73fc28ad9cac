"""llama.cpp's own engine options in the window: each knob is one llama.cpp option, under its name and default.

Rule 1: a knob's value is the core's (`fit.engine_options.EngineOptions`, the V cache type, a forced
        `--n-cpu-moe`); "default" is the program's own (llama.cpp 0c1e570's), shown as a word, so the
        window asks exactly what `fit -- …` asks. Each tooltip names the llama.cpp option.
Rule 2: the knobs are set from each published state without signals (`show_state`), so drawing changes
        nothing; a state whose options did not change is not drawn again.
Rule 3: `words` shows the options as llama.cpp spells them (`EngineOptions.argv`), and the last command asked
        (File ▸ Ask about a llama.cpp command…) with what it did not price — the session's, not the widget's.

Signals:
    changed(): a knob changed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QGroupBox, QLabel, QWidget

from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.fit.engine_options import DEFAULT_UBATCH, LoadMode
from gguf_budget.core.model.kv import KVType
from gguf_budget.gui.qt.named import named
from gguf_budget.gui.qt.server.worded_spin import WordedSpinBox

DEFAULT = 0
"""A spin box's value for "the program's default" (llama.cpp takes no 0 for these)."""
TRISTATE = (("default", None), ("on", True), ("off", False))
SAME_AS_K = "same as K"
BATCH_HIGH = 65_536
MOE_HIGH = 4_096


def _tristate(parent: QWidget, name: str, tip: str) -> QComboBox:
    combo = named(QComboBox(parent), name)
    combo.addItems([text for text, _ in TRISTATE])
    combo.setToolTip(tip)
    return combo


class EngineKnobs(QGroupBox):
    """Rules 1–3."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__("llama.cpp options", parent)
        self.setObjectName("engineKnobs")
        self.flash_attn = _tristate(self, "flashAttnCombo", "Flash attention, llama.cpp -fa on|off|auto (default auto: "
                                    "on where the backend supports it; llama-cpp-python: off)")
        self.ubatch = named(WordedSpinBox(DEFAULT, BATCH_HIGH, DEFAULT, {DEFAULT: f"default ({DEFAULT_UBATCH})"}, self),
                            "ubatchSpin")
        self.ubatch.setToolTip("Physical batch, llama.cpp -ub (default 512): the compute buffer grows with it")
        self.batch = named(WordedSpinBox(DEFAULT, BATCH_HIGH, DEFAULT, {DEFAULT: "default (2048)"}, self), "batchSpin")
        self.batch.setToolTip("Logical batch, llama.cpp -b (default 2048; llama-cpp-python 512)")
        self.v_type = named(QComboBox(self), "vTypeCombo")
        self.v_type.addItems([SAME_AS_K, *[t.value for t in KVType]])
        self.v_type.setToolTip("The V cache's type, llama.cpp -ctv, when it differs from K's (-ctk, the KV type knob); "
                               "a quantized V cache needs flash attention")
        self.swa_full = _tristate(self, "swaFullCombo", "Full-size sliding-window cache, llama.cpp --swa-full (default "
                                  "off; llama-cpp-python: on)")
        self.load_mode = named(QComboBox(self), "loadModeCombo")
        self.load_mode.addItems([m.value for m in LoadMode])
        self.load_mode.setToolTip("How the weights are loaded, llama.cpp -lm (default auto: mmap; none: read into "
                                  "memory, the older --no-mmap; mlock: locked in RAM)")
        self.n_cpu_moe = named(WordedSpinBox(-1, MOE_HIGH, -1, {-1: "searched"}, self), "nCpuMoeSpin")
        self.n_cpu_moe.setToolTip("Keep the routed experts of the first N blocks in host RAM, llama.cpp --n-cpu-moe N "
                                  "(default: searched, the smallest that fits)")
        self.kv_offload = named(QCheckBox("KV cache on the GPUs", self), "kvOffloadCheck")
        self.kv_offload.setToolTip("Unchecked: llama.cpp -nkvo, the KV cache stays in host RAM")
        self.op_offload = named(QCheckBox("large batches to the GPU", self), "opOffloadCheck")
        self.op_offload.setToolTip("Unchecked: llama.cpp --no-op-offload, host weights' matrix work stays on the CPU")
        self.fit = named(QCheckBox("llama.cpp's --fit", self), "fitCheck")
        self.fit.setToolTip("Checked (default): llama.cpp shrinks an unset context, then GPU layers, to fit; "
                            "unchecked: -fit off, the trained context on every layer")
        self.words = named(QLabel(self, wordWrap=True), "engineWords")
        self.words.setTextFormat(Qt.TextFormat.PlainText)
        self.words.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form = QFormLayout(self)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.addRow("Flash attention", self.flash_attn)
        form.addRow("Micro-batch", self.ubatch)
        form.addRow("Batch", self.batch)
        form.addRow("V cache", self.v_type)
        form.addRow("Full SWA cache", self.swa_full)
        form.addRow("Load mode", self.load_mode)
        form.addRow("Experts on CPU", self.n_cpu_moe)
        form.addRow("", self.kv_offload)
        form.addRow("", self.op_offload)
        form.addRow("", self.fit)
        form.addRow(self.words)
        for box in (self.ubatch, self.batch, self.n_cpu_moe):
            box.valueChanged.connect(self.changed)
        for combo in (self.flash_attn, self.v_type, self.swa_full, self.load_mode):
            combo.currentIndexChanged.connect(self.changed)
        for check in (self.kv_offload, self.op_offload, self.fit):
            check.toggled.connect(self.changed)
        self._shown: tuple[object, ...] | None = None
        self.show_state(ExplorerState())

    def values(self, state: ExplorerState) -> dict[str, Any]:
        """The knobs as explorer-state fields (Rule 1); the options no knob shows stay `state`'s."""
        v = self.v_type.currentText()
        engine = replace(
            state.engine, flash_attn=TRISTATE[self.flash_attn.currentIndex()][1], ubatch=self.ubatch.value() or None,
            batch=self.batch.value() or None, swa_full=TRISTATE[self.swa_full.currentIndex()][1],
            load_mode=LoadMode(self.load_mode.currentText()), kv_offload=self.kv_offload.isChecked(),
            op_offload=self.op_offload.isChecked(), fit=self.fit.isChecked())
        moe = self.n_cpu_moe.value()
        return {"engine": engine, "v_type": None if v == SAME_AS_K else KVType(v), "n_cpu_moe": None if moe < 0 else moe}

    def show_state(self, state: ExplorerState) -> None:
        """Rule 2, and Rule 3's words."""
        e, asked = state.engine, state.asked
        key = (e, state.v_type, state.n_cpu_moe, asked)
        if key == self._shown:
            return
        self._shown = key
        widgets = (self.flash_attn, self.ubatch, self.batch, self.v_type, self.swa_full, self.load_mode, self.n_cpu_moe,
                   self.kv_offload, self.op_offload, self.fit)
        blockers = [QSignalBlocker(w) for w in widgets]
        self.flash_attn.setCurrentIndex([v for _, v in TRISTATE].index(e.flash_attn))
        self.ubatch.setValue(e.ubatch or DEFAULT)
        self.batch.setValue(e.batch or DEFAULT)
        self.v_type.setCurrentText(SAME_AS_K if state.v_type is None else state.v_type.value)
        self.swa_full.setCurrentIndex([v for _, v in TRISTATE].index(e.swa_full))
        self.load_mode.setCurrentText(e.load_mode.value)
        self.n_cpu_moe.setValue(-1 if state.n_cpu_moe is None else min(state.n_cpu_moe, MOE_HIGH))
        self.kv_offload.setChecked(e.kv_offload)
        self.op_offload.setChecked(e.op_offload)
        self.fit.setChecked(e.fit)
        del blockers
        words = " ".join(e.argv()) or "llama.cpp's defaults"
        self.words.setText("\n".join([f"As llama.cpp: {words}", *asked]))
