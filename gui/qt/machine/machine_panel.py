"""The machine side panel — the full load: RAM/VRAM bars, the GPU layer split, the program and what
llama-server runs beside the model (`server.server_knobs`), KV figures, what the server holds
(`views.server_report.server_rows`, as `fit` prints them), the peak-RSS band, the verdict, the
largest ctx that fits, its decode estimate, what-if and the tier bandwidths.

Draws the full load it is given (`show_full_load`); the words and numbers come from the core's
views. The three claims — file size, admission, runtime evidence — get three separate rows. Every
row is a label in a box of its own (`row_box`): a ctx tick rewrites a dozen rows, and lays out only
a row whose line count changed.

Rule 1: what the panel draws for a full load is found once a full load (`_Drawn`, the core views' words and bars):
        the explorer hands back the same full load for a ctx or budget met before, and a drag back over them found
        every row's words again (~0.4 ms a 70B ctx tick). The claims are found each time (their snapshot's age
        moves on). The last KEPT_LOADS full loads of the model are kept (a new model lets them go).

Signals:
    refreshRequested(): the user asked for a new probe.
    changed(): the GPU layer override, the tensor split, a reserve or the hypothetical machine changed.
    bandwidthsChanged(): a typed bandwidth, backend or compute rate changed.
"""

from __future__ import annotations

import time
from typing import NamedTuple

from PySide6.QtCore import QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFormLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QSpinBox, QVBoxLayout, QWidget,
)

from gguf_budget.core.explorer.full_load import FullLoad
from gguf_budget.core.explorer.headline import full_load_name, max_ctx_text
from gguf_budget.core.fit.placement.gpu_split import parse_tensor_split
from gguf_budget.core.views.fit_report import offload_rows, verdict_text
from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.views.machine_view import (
    claim_rows, gpu_status, gpu_status_detail, host_bar, kv_rows, pool_bars, snapshot_when, split_text, weight_rows,
)

from gguf_budget.core.views.runtime_report import BAND_FULL, BAND_SHORT, band_rows
from gguf_budget.core.views.machine_view import PoolBar
from gguf_budget.core.views.server_report import SessionChart, server_rows, session_chart
from gguf_budget.core.views.speed_view import speed_summary

from gguf_budget.gui.qt.machine.bandwidth_editor import BandwidthEditor
from gguf_budget.gui.qt.machine.command_box import CommandBox
from gguf_budget.gui.qt.machine.machine_editor import MachineEditor
from gguf_budget.gui.qt.machine.memory_bar import MemoryBar, MemoryLegend
from gguf_budget.gui.qt.named import named
from gguf_budget.gui.qt.row_box import RowBox
from gguf_budget.gui.qt.selectable_label import SelectableLabel
from gguf_budget.gui.qt.server.engine_knobs import EngineKnobs
from gguf_budget.gui.qt.server.server_knobs import ServerKnobs
from gguf_budget.gui.qt.server.session_chart import SessionChartView

AUTO = -1
KEPT_LOADS = 64
ROWS = {  # the row titles `machine_view` gives → the label's objectName
    "Weights, by file share": "weightsByFileShare",
    "Weights, exact": "weightsExact",
    "KV lower bound": "kvLowerBound",
    "KV engine": "kvEngine",
    BAND_FULL: "peakRssFull",
    BAND_SHORT: "peakRssShort",
}
MEASURED_ROW = "Measured (llama.cpp)"
NOT_MEASURED = "nothing yet — File ▸ Measure with llama.cpp… or Import llama.cpp log…"
CLAIMS = {
    "File size (storage)": "claimStorage",
    "Admission (estimate)": "claimAdmission",
    "Runtime evidence": "claimRuntime",
}


class _Drawn(NamedTuple):
    """What the panel shows for a full load, but the claims (Rule 1)."""

    heading: str
    max_ctx: str
    decode: str
    bars: tuple[PoolBar, ...]
    split: str
    rows: tuple[tuple[str, str], ...]
    server: str
    chart: SessionChart | None
    session: bool
    verdict: str
    offload: str
    notes: str


def _drawn(load: FullLoad) -> _Drawn:
    """Rule 1: the core views' words and bars for a full load."""
    fit = load.fit
    return _Drawn(
        heading=full_load_name(fit.snapshot),
        max_ctx=max_ctx_text(fit, load.max_ctx),
        decode="no estimate: it does not fit" if load.speed is None else speed_summary(load.speed),
        bars=tuple(pool_bars(fit)),
        split=split_text(fit),
        rows=(*weight_rows(fit), *kv_rows(fit), *band_rows(fit)),
        server="\n".join(f"{name}: {text}" for name, text in server_rows(fit)),
        chart=session_chart(fit),
        session=fit.server is not None and fit.server.session is not None,
        verdict=verdict_text(fit),
        offload="\n".join(f"{k.strip()}: {v}" for k, v in offload_rows(fit.moe_offload)),
        notes="\n".join(f"• {n}" for n in fit.notes),
    )


def _label(parent: QWidget, name: str) -> SelectableLabel:
    label = named(SelectableLabel("—", parent, wordWrap=True), name)
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label


class HardwarePanel(QGroupBox):
    """Detected (or hypothetical) machine and how the model would be placed on it."""

    refreshRequested = Signal()
    changed = Signal()
    bandwidthsChanged = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)  # the heading is a wrapped label: a group box title never wraps
        self.setObjectName("hardwarePanel")
        self.heading = _label(self, "hardwareHeading")
        self.heading.setText("Machine")
        font = self.heading.font()
        font.setBold(True)
        self.heading.setFont(font)
        self._snapshot: HardwareSnapshot | None = None
        self._probe_failure: str | None = None
        self._drawn = dict[int, tuple[FullLoad, _Drawn]]()
        self.age = _label(self, "snapshotAge")
        self.refresh = named(QPushButton("Refresh", self), "refreshHardware")
        self.refresh.setToolTip("Probe host RAM and the GPUs again")
        self.refresh.clicked.connect(self.refreshRequested)
        self.host_bar = MemoryBar(self)
        self.host_bar.setObjectName("hostBar")
        self.legend = MemoryLegend(self)
        self.gpu_box = QVBoxLayout()
        self.gpu_bars: list[MemoryBar] = []
        self.gpu_status = _label(self, "gpuStatus")
        self.gpu_layers = named(QSpinBox(self, minimum=AUTO, maximum=AUTO, value=AUTO), "gpuLayersSpin")
        self.gpu_layers.setSpecialValueText("auto")
        self.gpu_layers.setToolTip("Blocks to offload (llama.cpp -ngl); L + 1 also offloads the output layer")
        self.gpu_layers.valueChanged.connect(self.changed)
        self.tensor_split = named(QLineEdit(self, placeholderText="by free memory"), "tensorSplit")
        self.tensor_split.setToolTip("Share of the layers per GPU, as llama.cpp -ts (e.g. 1,1 or 3,1)")
        self.tensor_split.editingFinished.connect(self._split_edited)
        self._split: tuple[float, ...] | None = None
        self.split_error = _label(self, "tensorSplitError")
        self.split_error.hide()
        self.split = _label(self, "gpuSplit")
        self.server = ServerKnobs(self)
        self.engine = EngineKnobs(self)
        self.server_rows = _label(self, "serverRows")
        self.session_chart = named(SessionChartView(self), "sessionChart")
        self.offload = _label(self, "moeOffload")
        self.offload.hide()
        self.command = CommandBox(self)
        self.rows = {title: _label(self, name) for title, name in ROWS.items()}
        self.measured = _label(self, "measuredRow")
        self.measured.setText(NOT_MEASURED)
        self.verdict = _label(self, "fitVerdict")
        self.max_ctx = _label(self, "fitMaxCtx")
        self.decode = _label(self, "fitDecode")
        self.claims = {title: _label(self, name) for title, name in CLAIMS.items()}
        self.notes = _label(self, "fitNotes")
        self.editor = MachineEditor(self)
        self.editor.changed.connect(self.changed)
        self.bandwidths = BandwidthEditor(self)
        self.bandwidths.changed.connect(self.bandwidthsChanged)
        self.editor.computeChanged.connect(self.bandwidthsChanged)
        self._build()
        self._ticker = QTimer(self, interval=1000)
        self._ticker.timeout.connect(self._show_age)
        self._ticker.start()

    def _build(self) -> None:
        top = QHBoxLayout()
        top.addWidget(RowBox(self.age, self), 1)
        top.addWidget(self.refresh)
        split = QHBoxLayout()
        split.addWidget(QLabel("GPU layers", self))
        split.addWidget(self.gpu_layers)
        split.addWidget(QLabel("Tensor split", self))
        split.addWidget(self.tensor_split)
        split.addStretch(1)
        form = QFormLayout()
        rows = {**self.rows, MEASURED_ROW: self.measured, "Verdict": self.verdict, "Largest ctx": self.max_ctx,
                "Decode": self.decode, **self.claims}
        for name, label in rows.items():
            form.addRow(f"{name}:", RowBox(label, self))
        layout = QVBoxLayout(self)
        layout.addWidget(RowBox(self.heading, self))
        layout.addLayout(top)
        layout.addWidget(self.host_bar)
        layout.addWidget(self.legend)
        layout.addLayout(self.gpu_box)
        layout.addWidget(RowBox(self.gpu_status, self))
        layout.addLayout(split)
        layout.addWidget(RowBox(self.split_error, self))
        layout.addWidget(RowBox(self.split, self))
        layout.addWidget(self.server)
        layout.addWidget(self.engine)
        layout.addWidget(RowBox(self.server_rows, self))
        layout.addWidget(self.session_chart)
        layout.addLayout(form)
        layout.addWidget(RowBox(self.offload, self))
        layout.addWidget(self.command)
        layout.addWidget(RowBox(self.notes, self))
        layout.addWidget(self.editor)
        layout.addWidget(self.bandwidths)
        layout.addStretch(1)

    def set_layer_count(self, n_layer: int) -> None:
        """A new model. Override range: auto, or 0 … L + 1 (L + 1 also offloads the output layer); the session
        chart's room is no longer kept for it (`session_chart` Rule 1), nor the last model's full loads (Rule 1)."""
        self.gpu_layers.setMaximum(n_layer + 1)
        self.session_chart.forget()
        self._drawn.clear()

    def show_gpu_layers(self, layers: int | None) -> None:
        """The state's GPU layers (a goal's answer, an asked -ngl), quietly: the next panel change writes them back."""
        value = AUTO if layers is None else min(layers, self.gpu_layers.maximum())
        if self.gpu_layers.value() != value:
            blocker = QSignalBlocker(self.gpu_layers)
            self.gpu_layers.setValue(value)
            del blocker

    def requested_gpu_layers(self) -> int | None:
        value = self.gpu_layers.value()
        return None if value == AUTO else value

    def requested_tensor_split(self) -> tuple[float, ...] | None:
        return self._split

    def reserves(self) -> Reserves:
        return self.editor.reserves()

    def _split_edited(self) -> None:
        """Read the -ts field with the core's parser; a bad one is said inline and the last good split kept."""
        try:
            split = parse_tensor_split(self.tensor_split.text())
        except ValueError as e:
            self.split_error.setText(str(e))
            self.split_error.show()
            return
        self.split_error.hide()
        if split != self._split:
            self._split = split
            self.changed.emit()

    def hypothetical(self) -> HardwareSnapshot | None:
        return self.editor.machine()

    def show_snapshot(self, snapshot: HardwareSnapshot) -> None:
        self._snapshot = snapshot
        self._probe_failure = None
        self._show_age()
        status = gpu_status(snapshot)
        self.gpu_status.setText(status)
        self.gpu_status.setToolTip(gpu_status_detail(snapshot))
        self.gpu_status.setVisible(bool(status))

    def show_machine(self, snapshot: HardwareSnapshot, reserves: Reserves) -> None:
        """No model open yet: the host RAM bar of the machine alone (`machine_view.host_bar`)."""
        self.host_bar.set_pool(host_bar(snapshot, reserves))

    def show_full_load(self, load: FullLoad) -> None:
        """The fit, the largest ctx that fits with its GPU layers, and the decode estimate."""
        kept = self._drawn.get(id(load))
        if kept is None or kept[0] is not load:  # the full load itself is kept with it, so its id is not reused
            if len(self._drawn) >= KEPT_LOADS:
                self._drawn.clear()
            kept = self._drawn[id(load)] = (load, _drawn(load))
        drawn, fit = kept[1], load.fit
        self.heading.setText(drawn.heading)
        bars = drawn.bars
        self.host_bar.set_pool(bars[0])
        self._gpu_bar_count(len(bars) - 1)
        for widget, pool in zip(self.gpu_bars, bars[1:], strict=False):
            widget.set_pool(pool)
        self.split.setText(drawn.split)
        for name, text in drawn.rows:
            self.rows[name].setText(text)
        for name, text in claim_rows(fit, snapshot_when(fit.snapshot, time.time())):
            self.claims[name].setText(text)
        self.server_rows.setText(drawn.server)
        self.session_chart.set_chart(drawn.chart, drawn.session)
        self.verdict.setText(drawn.verdict)
        self.offload.setText(drawn.offload)
        self.offload.setVisible(bool(drawn.offload))
        self.command.show_command(fit.recommended, fit.request.engine.runtime)
        self.notes.setText(drawn.notes)
        self.max_ctx.setText(drawn.max_ctx)
        self.decode.setText(drawn.decode)

    def show_measured(self, summary: str | None) -> None:
        """What llama.cpp measured for this model, beside the estimate (None: nothing stored)."""
        self.measured.setText(summary or NOT_MEASURED)

    def _gpu_bar_count(self, n: int) -> None:
        while len(self.gpu_bars) > n:
            self.gpu_bars.pop().deleteLater()
        while len(self.gpu_bars) < n:
            bar = MemoryBar(self)
            bar.setObjectName(f"gpuBar{len(self.gpu_bars)}")
            self.gpu_box.addWidget(bar)
            self.gpu_bars.append(bar)

    def show_probe_failure(self, message: str) -> None:
        """The last probe failed: say why until the next snapshot is shown."""
        self._probe_failure = message
        self._show_age()

    def _show_age(self) -> None:
        if self._probe_failure is not None:
            self.age.setText(f"Probe failed: {safe_text(self._probe_failure, 200)}")
        elif self._snapshot is not None:
            self.age.setText(snapshot_when(self._snapshot, time.time()).capitalize())
