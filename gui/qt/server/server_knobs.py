"""The full load's program knobs: which llama.cpp program, and what llama-server runs beside the model.

Rule 1: each knob is the CLI's flag under the same meaning and default (`fit --runtime`, `-np`,
        `--kv-unified`, `--cache-ram`, `--ctx-checkpoints`, `--mmproj`, `--draft`): the values
        are `ServerSettings`' and `Runtime`'s, the ranges the core's (`fit.server.types`), and
        llama-server's own automatic choices are shown as words ("auto", "no limit", "off").
Rule 2: the widget holds no files: the projector and the draft shown are the session's
        (`show_state`); adding or removing one is asked for by a signal and done by
        `server_files.ServerFiles` off the GUI thread.
Rule 3: the knobs are set from each published state without signals, so drawing changes nothing.
Rule 4: how a projector or a draft runs (`--no-mmproj-offload`, `--image-size`, `-ngld`, `-devd
        none`, `-ctkd/-ctvd`) has a knob beside its file, enabled while there is one; an image
        size that does not read (`ImageSize.parse`) is one line and changes nothing.

Signals:
    changed(): a knob changed (program, slots, KV sharing, cache, checkpoints, how a projector or draft runs).
    addProjector() / removeProjector() / addDraft() / removeDraft(): the person asked for that.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QFormLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QWidget,
)

from gguf_budget.core.errors import RequestError
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.fit.server.checkpoints import CTX_CHECKPOINTS
from gguf_budget.core.fit.server.image_size import ImageSize
from gguf_budget.core.fit.server.prompt_cache import DEFAULT_CACHE_RAM_MIB, NO_LIMIT
from gguf_budget.core.fit.runtime_types import DEFAULT_RUNTIME, Runtime
from gguf_budget.core.fit.server.types import CACHE_RAM, CHECKPOINTS, DRAFT_LAYERS, SLOTS, ServerSettings
from gguf_budget.core.fit.server.slots import AUTO_SLOTS
from gguf_budget.core.model.kv import DEFAULT_KV_TYPE, KVType
from gguf_budget.gui.qt.named import named
from gguf_budget.gui.qt.server.worded_spin import WordedSpinBox
from gguf_budget.gui.qt.theme import error_style

AUTO_SLOTS_VALUE = 0
"""The parallel box's value for `-np auto` (llama.cpp refuses -np 0, so 0 is free for the word)."""
TOOL_CACHE_VALUE = NO_LIMIT - 1
"""The cache box's value for "sized by this tool" (`cache_ram_mib` None), below llama-server's -1."""
KV_SHARING = (("auto", None), ("unified", True), ("split per slot", False))
ALL_DRAFT_LAYERS = -1
"""The draft-layers box's value for `-ngld auto` (every layer; `DraftModel.gpu_layers` None)."""
NO_FILE = "none"


def _file_row(parent: QWidget, name: str, what: str) -> tuple[QLabel, QPushButton, QPushButton, QHBoxLayout]:
    label = named(QLabel(NO_FILE, parent, wordWrap=True), f"{name}File")
    label.setTextFormat(Qt.TextFormat.PlainText)
    add = named(QPushButton("Add…", parent), f"add{name[0].upper()}{name[1:]}")
    add.setToolTip(f"Open {what} beside the model")
    remove = named(QPushButton("Remove", parent), f"remove{name[0].upper()}{name[1:]}")
    remove.setToolTip(f"Run without the {what}")
    remove.setEnabled(False)
    row = QHBoxLayout()
    row.addWidget(label, 1)
    row.addWidget(add)
    row.addWidget(remove)
    return label, add, remove, row


class ServerKnobs(QGroupBox):
    """Rules 1–3."""

    changed = Signal()
    addProjector = Signal()
    removeProjector = Signal()
    addDraft = Signal()
    removeDraft = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Run with", parent)
        self.setObjectName("serverKnobs")
        self.runtime = named(QComboBox(self), "runtimeCombo")
        self.runtime.addItems([r.value for r in Runtime])
        self.runtime.setCurrentText(DEFAULT_RUNTIME.value)
        self.runtime.setToolTip(f"The llama.cpp program the peak-RSS band is for (default {DEFAULT_RUNTIME}; "
                                "llama-cli runs llama-server's engine in-process; llama-cpp-python adds its interpreter)")
        self.parallel = named(WordedSpinBox(AUTO_SLOTS_VALUE, SLOTS.high, 1,
                                            {AUTO_SLOTS_VALUE: f"auto ({AUTO_SLOTS}, unified)"}, self), "parallelSpin")
        self.parallel.setToolTip(f"Requests llama-server serves at once (-np), {SLOTS.text}; 'auto' is llama-server's "
                                 f"own default: {AUTO_SLOTS} slots sharing one unified KV cache. Default here 1, as fit's")
        self.kv_unified = named(QComboBox(self), "kvUnifiedCombo")
        self.kv_unified.addItems([text for text, _ in KV_SHARING])
        self.kv_unified.setToolTip("Whether the slots share one KV cache (unified: --kv-unified) or each gets its own "
                                   "share of the context (split: --no-kv-unified); auto, llama-server's default, "
                                   "unifies it only when the slot count is auto")
        self.cache_ram = named(WordedSpinBox(TOOL_CACHE_VALUE, CACHE_RAM.high, TOOL_CACHE_VALUE, {
            TOOL_CACHE_VALUE: "sized by this tool", NO_LIMIT: "no limit (-1)", 0: "off (0)"}, self), "cacheRamSpin")
        self.cache_ram.setSingleStep(256)
        self.cache_ram.setToolTip(f"llama-server's host prompt cache limit, --cache-ram in MiB (-1 no limit, 0 off). "
                                  f"Default: sized by this tool, one context's worth, at most llama-server's own default "
                                  f"of {DEFAULT_CACHE_RAM_MIB} MiB, within what the host has left")
        self.checkpoints = named(WordedSpinBox(CHECKPOINTS.low, CHECKPOINTS.high, CTX_CHECKPOINTS, {0: "off (0)"}, self),
                                 "ctxCheckpointsSpin")
        self.checkpoints.setToolTip(f"Context checkpoints kept per slot by sliding-window and recurrent models "
                                    f"(--ctx-checkpoints; default {CTX_CHECKPOINTS}, llama-server's)")
        self.worst_case = named(QCheckBox("judge on the worst case", self), "worstCaseCheck")
        self.worst_case.setToolTip("Count the prompt cache and every slot's checkpoints full (--worst-case) instead of "
                                   "the peak of the session fit assumes")
        self.projector, self.add_projector, self.remove_projector, projector_row = _file_row(
            self, "projector", "a vision projector")
        self.draft, self.add_draft, self.remove_draft, draft_row = _file_row(self, "draft", "a draft model")
        self.projector_offload = named(QCheckBox("on the GPU", self), "projectorOffloadCheck")
        self.projector_offload.setChecked(True)
        self.projector_offload.setToolTip("Put the projector on the first GPU, as llama-server does by default; "
                                          "unchecked: --no-mmproj-offload, in host RAM")
        self.image_size = named(QLineEdit(self), "imageSizeEdit")
        self.image_size.setPlaceholderText("its own size")
        self.image_size.setToolTip("The image to price the projector's compute and tokens for, WIDTHxHEIGHT "
                                   "(--image-size); empty: the projector's own size")
        self._image: ImageSize | None = None
        self._shown: tuple[Runtime, ServerSettings] | None = None
        self.draft_layers = named(WordedSpinBox(ALL_DRAFT_LAYERS, DRAFT_LAYERS.high, ALL_DRAFT_LAYERS,
                                                {ALL_DRAFT_LAYERS: "all (auto)"}, self), "draftLayersSpin")
        self.draft_layers.setToolTip("Draft layers on the GPUs (-ngld); 'all', llama-server's default, is every layer")
        self.draft_on_gpu = named(QCheckBox("on the GPUs", self), "draftOnGpuCheck")
        self.draft_on_gpu.setChecked(True)
        self.draft_on_gpu.setToolTip("Unchecked: the draft stays in host RAM (-devd none)")
        self.draft_kv = named(QComboBox(self), "draftKvCombo")
        self.draft_kv.addItems([t.value for t in KVType])
        self.draft_kv.setCurrentText(DEFAULT_KV_TYPE.value)
        self.draft_kv.setToolTip(f"The draft's KV cache type (-ctkd/-ctvd; default {DEFAULT_KV_TYPE.value})")
        self.set_can_add(False)
        self.add_projector.clicked.connect(self.addProjector)
        self.remove_projector.clicked.connect(self.removeProjector)
        self.add_draft.clicked.connect(self.addDraft)
        self.remove_draft.clicked.connect(self.removeDraft)
        self.message = named(QLabel(self, wordWrap=True), "serverFileMessage")
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setStyleSheet(error_style())
        self.message.hide()
        form = QFormLayout(self)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)  # the side column is narrow
        form.addRow("Program", self.runtime)
        form.addRow("Parallel requests", self.parallel)
        form.addRow("KV sharing", self.kv_unified)
        form.addRow("Prompt cache (MiB)", self.cache_ram)
        form.addRow("Checkpoints per slot", self.checkpoints)
        form.addRow("", self.worst_case)
        form.addRow("Vision projector", projector_row)
        form.addRow("", self.projector_offload)
        form.addRow("Image", self.image_size)
        form.addRow("Draft model", draft_row)
        form.addRow("", self.draft_on_gpu)
        form.addRow("Draft layers", self.draft_layers)
        form.addRow("Draft KV", self.draft_kv)
        form.addRow(self.message)
        for box in (self.parallel, self.cache_ram, self.checkpoints, self.draft_layers):
            box.valueChanged.connect(self.changed)
        for combo in (self.runtime, self.kv_unified, self.draft_kv):
            combo.currentIndexChanged.connect(self.changed)
        for check in (self.projector_offload, self.draft_on_gpu, self.worst_case):
            check.toggled.connect(self.changed)
        self.image_size.editingFinished.connect(self._image_typed)
        self._enable_runs(projector=False, draft=False)

    def values(self, current: ServerSettings) -> dict[str, Any]:
        """The knobs as explorer-state fields; the projector and draft stay `current`'s (Rule 2)."""
        slots, cache = self.parallel.value(), self.cache_ram.value()
        layers = self.draft_layers.value()
        draft = None if current.draft is None else replace(
            current.draft, gpu_layers=None if layers == ALL_DRAFT_LAYERS else layers,
            on_gpu=self.draft_on_gpu.isChecked(), kv_type=KVType(self.draft_kv.currentText()))
        server = replace(current, n_parallel=None if slots == AUTO_SLOTS_VALUE else slots,
                         kv_unified=KV_SHARING[self.kv_unified.currentIndex()][1],
                         cache_ram_mib=None if cache == TOOL_CACHE_VALUE else cache,
                         ctx_checkpoints=self.checkpoints.value(), projector_offload=self.projector_offload.isChecked(),
                         image=self._image, draft=draft, worst_case=self.worst_case.isChecked())
        return {"runtime": Runtime(self.runtime.currentText()), "server": server}

    def show_state(self, state: ExplorerState) -> None:
        """Rule 3: the knobs and the files as the state has them, quietly; a state that changed neither is not
        drawn again (every tick publishes one, and a spin box set to its own value still repaints)."""
        s = state.server
        if (state.runtime, s) == self._shown:
            return
        self._shown = (state.runtime, s)
        blockers = [QSignalBlocker(w) for w in (self.runtime, self.parallel, self.kv_unified, self.cache_ram,
                                                self.checkpoints, self.projector_offload, self.draft_layers,
                                                self.draft_on_gpu, self.draft_kv, self.worst_case)]
        self.runtime.setCurrentText(state.runtime.value)
        self.parallel.setValue(AUTO_SLOTS_VALUE if s.n_parallel is None else s.n_parallel)
        self.kv_unified.setCurrentIndex([value for _, value in KV_SHARING].index(s.kv_unified))
        self.cache_ram.setValue(TOOL_CACHE_VALUE if s.cache_ram_mib is None else s.cache_ram_mib)
        self.checkpoints.setValue(s.ctx_checkpoints)
        self.worst_case.setChecked(s.worst_case)
        self.projector_offload.setChecked(s.projector_offload)
        if s.image != self._image or not self.image_size.hasFocus():
            self._image = s.image
            self.image_size.setText("" if s.image is None else s.image.text)
        d = s.draft
        self.draft_layers.setValue(ALL_DRAFT_LAYERS if d is None or d.gpu_layers is None else d.gpu_layers)
        self.draft_on_gpu.setChecked(True if d is None else d.on_gpu)
        self.draft_kv.setCurrentText((DEFAULT_KV_TYPE if d is None else d.kv_type).value)
        del blockers
        self._enable_runs(projector=s.projector is not None, draft=d is not None)
        self._show_file(self.projector, self.remove_projector, None if s.projector is None else s.projector.path)
        self._show_file(self.draft, self.remove_draft, None if s.draft is None else s.draft.spec.path)

    def _enable_runs(self, *, projector: bool, draft: bool) -> None:
        """Rule 4: a projector's or a draft's knobs only while there is one."""
        widgets: tuple[tuple[QWidget, bool], ...] = (
            (self.projector_offload, projector), (self.image_size, projector), (self.draft_layers, draft),
            (self.draft_on_gpu, draft), (self.draft_kv, draft))
        for widget, enabled in widgets:
            widget.setEnabled(enabled)

    def _image_typed(self) -> None:
        """Rule 4: a size that reads becomes the image priced; one that does not is one line, the old size kept."""
        text = self.image_size.text().strip()
        try:
            image = ImageSize.parse(text) if text else None
        except RequestError as e:
            self.show_message(str(e))
            self.image_size.setText("" if self._image is None else self._image.text)
            return
        self.show_message(None)
        if image != self._image:
            self._image = image
            self.changed.emit()

    def show_message(self, message: str | None) -> None:
        """One line about the files: one refused, or removed with the model it was added beside (None: clear it)."""
        self.message.setText(message or "")
        self.message.setVisible(bool(message))

    def set_can_add(self, can: bool) -> None:
        """A file is checked against the model: Add… only while one is open."""
        self.add_projector.setEnabled(can)
        self.add_draft.setEnabled(can)

    @staticmethod
    def _show_file(label: QLabel, remove: QPushButton, path: str | None) -> None:
        label.setText(NO_FILE if path is None else Path(path).name)
        label.setToolTip("" if path is None else path)
        remove.setEnabled(path is not None)
