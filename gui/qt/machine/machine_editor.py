"""What-if: a hypothetical machine (host RAM, identical GPUs or presets) and the reserves, typed in.

Rule 1: sizes are read with the core's `parse_size`, the machine is built by the core's
        `hypothetical_machine` and `with_presets`; text that does not parse, or a machine the
        core rejects, shows an inline error and keeps the last good values.
Rule 2: the hypothetical machine replaces the probed snapshot only while its box is ticked.
Rule 3: a preset (or several GPU presets, comma-separated) replaces the typed GPUs; a machine
        preset replaces the whole machine. The fields it overrides are disabled while it is set.
Rule 4: per-GPU reserves, where typed (`1.5G,0`), replace the first-GPU reserve for the GPUs
        they name.
Rule 5: the GPU's llama.cpp backend, its FP16 rate in TFLOPS and the CPU's rate in GFLOPS may be
        typed (empty: the preset's, the maker's or the one measured here), read by the core as the
        command line's `--backend`, `--gpu-tflops` and `--cpu-gflops` are (`machine.backend.parse_backend`,
        `ranges.GPU_TFLOPS`, `ranges.CPU_GFLOPS`); they apply to the probed machine and the
        hypothetical one alike, and the window merges them over the measured figures
        (`machine.bandwidth.with_typed_compute`). Text that does not parse shows an inline error
        and changes nothing. The window remembers them with its settings and puts them back at
        start-up (`set_typed_compute`, `explorer.persist` Rule 5).
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QLabel, QLineEdit, QSpinBox, QVBoxLayout, QWidget

from gguf_budget.core.errors import RequestError
from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.machine.backend import GPU_BACKENDS, Backend, parse_backend
from gguf_budget.core.ranges import CPU_GFLOPS, GPU_TFLOPS
from gguf_budget.core.machine.presets import parse_presets, preset_names, with_presets
from gguf_budget.core.views.presets_view import presets_text
from gguf_budget.core.machine.cpu_features import read_cpu_features
from gguf_budget.core.machine.snapshot import HardwareSnapshot, hypothetical_machine
from gguf_budget.core.units import human_bytes, parse_size, parse_size_list

from gguf_budget.gui.qt.theme import error_style
from gguf_budget.gui.qt.named import named

MAX_GPUS = 8


def _optional_size(edit: QLineEdit) -> int | None:
    return parse_size(edit.text()) if edit.text().strip() else None


TypedCompute = tuple[Backend | None, int | None, int | None]
"""Rule 5: (backend, GPU FP16 FLOP/s, CPU FLOP/s) as typed; None where empty."""


class MachineEditor(QWidget):
    """The hypothetical-machine box and the reserve fields.

    Signals:
        changed(): the hypothetical machine (or its switch) or a reserve changed.
        computeChanged(): a typed backend or compute rate changed (or was cleared).
    """

    changed = Signal()
    computeChanged = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("machineEditor")
        self.box = named(QGroupBox("Hypothetical machine (what-if)", self,
                                   checkable=True, checked=False), "hypotheticalBox")
        self.host_available = named(QLineEdit("32G", self), "hypoHostAvailable")
        self.host_total = named(QLineEdit("", self, placeholderText="= available"), "hypoHostTotal")
        self.gpu_count = named(QSpinBox(self, minimum=0, maximum=MAX_GPUS, value=1), "hypoGpuCount")
        self.gpu_total = named(QLineEdit("24G", self), "hypoGpuTotal")
        self.gpu_free = named(QLineEdit("", self, placeholderText="= all free"), "hypoGpuFree")
        self.preset = named(QComboBox(self, editable=True), "hypoPreset")
        self.preset.addItems(["", *preset_names()])
        editor = self.preset.lineEdit()
        assert editor is not None  # an editable combo box has one
        editor.setPlaceholderText("none: the figures below")
        self.preset.setToolTip("A GPU or machine from the preset table; several GPUs as 'RTX 3090,RTX 3060'.\n\n"
                               + presets_text())
        self.host_reserve = named(QLineEdit(human_bytes(Reserves().host), self), "reserveHost")
        self.gpu_reserve = named(QLineEdit(human_bytes(Reserves().gpu), self), "reserveGpu")
        self.gpu_reserves = named(QLineEdit("", self, placeholderText="first GPU only"), "reserveGpus")
        self.gpu_reserves.setToolTip("Reserve per GPU, in GPU order (e.g. 1.5G,0.5G); replaces the first-GPU reserve")
        self.backend = named(QComboBox(self, editable=True), "typedBackend")
        self.backend.addItems(["", *(b.value for b in GPU_BACKENDS)])
        backend_edit = self.backend.lineEdit()
        assert backend_edit is not None  # an editable combo box has one
        backend_edit.setPlaceholderText("preset's or maker's")
        self.backend.setToolTip("The llama.cpp backend running the GPU layers (as --backend); empty: the preset's, else the "
                                "GPU maker's usual one")
        self.gpu_tflops = named(QLineEdit("", self, placeholderText="the preset's; unknown otherwise"), "typedGpuTflops")
        self.gpu_tflops.setToolTip(f"The GPU's dense FP16 matrix rate in TFLOPS (as --gpu-tflops), "
                                   f"from {GPU_TFLOPS.low:g} to {GPU_TFLOPS.high:g}")
        self.cpu_gflops = named(QLineEdit("", self, placeholderText="measured here"), "typedCpuGflops")
        self.cpu_gflops.setToolTip(f"The CPU's matrix-multiply rate in GFLOPS (as --cpu-gflops), "
                                   f"from {CPU_GFLOPS.low:g} to {CPU_GFLOPS.high:g}")
        self._compute: TypedCompute = (None, None, None)
        self.error = named(QLabel(self, wordWrap=True), "machineError")
        self.error.setTextFormat(Qt.TextFormat.PlainText)
        self.error.setStyleSheet(error_style())
        self.error.hide()
        self._layout()
        self._machine: HardwareSnapshot | None = None
        self._reserves = Reserves()
        for edit in (self.host_available, self.host_total, self.gpu_total, self.gpu_free,
                     self.host_reserve, self.gpu_reserve, self.gpu_reserves):
            edit.editingFinished.connect(self._edited)
        for edit in (self.gpu_tflops, self.cpu_gflops):
            edit.editingFinished.connect(self._compute_edited)
        backend_edit.editingFinished.connect(self._compute_edited)
        self.backend.activated.connect(self._compute_edited)
        self.preset.currentTextChanged.connect(self._preset_changed)
        self.gpu_count.valueChanged.connect(self._edited)
        self.box.toggled.connect(self._edited)

    def _layout(self) -> None:
        form = QFormLayout(self.box)
        form.addRow("Preset", self.preset)
        form.addRow("Host RAM free", self.host_available)
        form.addRow("Host RAM total", self.host_total)
        form.addRow("GPUs", self.gpu_count)
        form.addRow("GPU memory", self.gpu_total)
        form.addRow("GPU free", self.gpu_free)
        reserves = QFormLayout()
        reserves.addRow("Host reserve", self.host_reserve)
        reserves.addRow("First-GPU reserve", self.gpu_reserve)
        reserves.addRow("Per-GPU reserves", self.gpu_reserves)
        reserves.addRow("GPU backend", self.backend)
        reserves.addRow("GPU FP16 TFLOPS", self.gpu_tflops)
        reserves.addRow("CPU GFLOPS", self.cpu_gflops)
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

    def typed_compute(self) -> TypedCompute:
        """Rule 5: what was typed, as the core read it."""
        return self._compute

    def set_typed_compute(self, compute: TypedCompute) -> None:
        """Rule 5, set from outside (settings): the fields show the figures, no `computeChanged` signal."""
        backend, gpu_flops, cpu_flops = compute
        self._compute = compute
        self.backend.blockSignals(True)
        self.backend.setCurrentText("" if backend is None else backend.value)
        self.backend.blockSignals(False)
        for edit, flops, rate in ((self.gpu_tflops, gpu_flops, GPU_TFLOPS), (self.cpu_gflops, cpu_flops, CPU_GFLOPS)):
            edit.blockSignals(True)
            edit.setText("" if flops is None else f"{flops / rate.scale:g}")
            edit.setModified(False)
            edit.blockSignals(False)

    def _compute_edited(self) -> None:
        """Rule 5: read the three fields by the core's parsing; a bad one shows why and changes nothing."""
        backend_text, gpu_text, cpu_text = (self.backend.currentText().strip(), self.gpu_tflops.text().strip(),
                                            self.cpu_gflops.text().strip())
        try:
            compute = (parse_backend(backend_text) if backend_text else None,
                       GPU_TFLOPS.parse(gpu_text) if gpu_text else None,
                       CPU_GFLOPS.parse(cpu_text) if cpu_text else None)
        except RequestError as e:
            self.error.setText(str(e))
            self.error.show()
            return
        self.error.hide()
        if compute != self._compute:
            self._compute = compute
            self.computeChanged.emit()

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
            per_gpu = parse_size_list(self.gpu_reserves.text()) if self.gpu_reserves.text().strip() else ()
            reserves = Reserves(parse_size(self.host_reserve.text()), parse_size(self.gpu_reserve.text()), per_gpu)
            machine = self._build() if self.box.isChecked() else self._machine
        except ValueError as e:
            self.error.setText(str(e))
            self.error.show()
            return
        self.error.hide()
        self._reserves, self._machine = reserves, machine
        self.changed.emit()

    def set_preset(self, text: str) -> None:
        """Choose a preset (or '' for the typed figures) and tick the box; emits `changed`."""
        self.preset.setCurrentText(text)
        if not self.box.isChecked():
            self.box.setChecked(True)

    def _preset_changed(self, text: str) -> None:
        """Disable the fields a valid preset overrides (Rule 3), then rebuild."""
        try:
            presets = parse_presets(text) if text.strip() else ()
        except ValueError:
            presets = ()
        machine = bool(presets) and presets[0].unified
        for edit in (self.gpu_total, self.gpu_free, self.gpu_count):
            edit.setEnabled(not presets)
        for edit in (self.host_available, self.host_total):
            edit.setEnabled(not machine)
        if self.box.isChecked():
            self._edited()

    def _build(self) -> HardwareSnapshot:
        """The typed machine, with this machine's CPU features (its repacked weight copies priced as here)."""
        return replace(self._typed(), cpu_features=read_cpu_features())

    def _typed(self) -> HardwareSnapshot:
        text = self.preset.currentText()
        if text.strip():
            host = hypothetical_machine(parse_size(self.host_available.text()), _optional_size(self.host_total))
            return with_presets(text, host)
        count = self.gpu_count.value()
        return hypothetical_machine(
            host_available=parse_size(self.host_available.text()),
            host_total=_optional_size(self.host_total),
            gpu_count=count,
            gpu_total=parse_size(self.gpu_total.text()) if count else 0,
            gpu_free=_optional_size(self.gpu_free) if count else None,
        )
