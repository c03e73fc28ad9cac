"""The progress window of a running measurement: stage, a bar, the engine's RSS and time, Cancel.

It draws `Progress` reports it is given and emits `cancelRequested`; it runs nothing itself.
Non-modal, so the explorer stays usable while llama.cpp runs. What is measured comes as lines
(engine, model, settings): each line is escaped on its own, so the breaks stay breaks.

Signals:
    cancelRequested(): the user pressed Cancel (or closed the dialog) while a run was going.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QProgressBar, QVBoxLayout, QWidget

from gguf_budget.core.measure.progress import Progress
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.units import human_bytes
from gguf_budget.gui.qt.named import named


class MeasureDialog(QDialog):
    cancelRequested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("measureDialog")
        self.setWindowTitle("Measure with llama.cpp")
        self.setModal(False)
        self.what = named(QLabel(self, wordWrap=True), "measureWhat")
        self.stage = named(QLabel(self), "measureStage")
        self.bar = named(QProgressBar(self, minimum=0, maximum=100), "measureProgress")
        self.detail = named(QLabel(self), "measureDetail")
        for label in (self.what, self.stage, self.detail):
            label.setTextFormat(Qt.TextFormat.PlainText)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.cancel_button = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
        self.cancel_button.setObjectName("measureCancel")
        self.buttons.rejected.connect(self._cancel)
        layout = QVBoxLayout(self)
        for w in (self.what, self.stage, self.bar, self.detail, self.buttons):
            layout.addWidget(w)
        self.setMinimumWidth(420)
        self._running = False

    def begin(self, what: str) -> None:
        self._running = True
        self.what.setText("\n".join(safe_text(line, 400) for line in what.split("\n")))
        self.stage.setText("starting llama.cpp")
        self.bar.setValue(0)
        self.detail.setText("")
        self.cancel_button.setEnabled(True)
        self.show()

    def show_progress(self, report: Progress) -> None:
        self.stage.setText(report.stage)
        self.bar.setValue(round(report.fraction * 100))
        rss = "—" if report.rss_bytes is None else human_bytes(report.rss_bytes)
        self.detail.setText(f"llama.cpp RSS now {rss} · {report.elapsed_s:.1f} s")

    def finish(self) -> None:
        self._running = False
        self.hide()

    def _cancel(self) -> None:
        if self._running:
            self.stage.setText("cancelling…")
            self.cancel_button.setEnabled(False)
            self.cancelRequested.emit()

    def reject(self) -> None:
        """Escape or the close box: cancel the run rather than hide a live one."""
        self._cancel()
