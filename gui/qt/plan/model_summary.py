"""The model summary: the lines `core.views.model_summary` writes about a file, in a form."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QLabel, QWidget

from gguf_budget.core import ModelSpec
from gguf_budget.core.remote.source import cached_source
from gguf_budget.core.views.model_summary import SUMMARY_FIELDS, summary_rows
from gguf_budget.gui.qt.plain_text import plain_tooltip


class ModelSummary(QWidget):
    """A form of the model's facts; `values()` returns what is on screen."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("modelSummary")
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        self._labels: dict[str, QLabel] = {}
        for key in SUMMARY_FIELDS:
            label = QLabel("—", self, wordWrap=True)
            label.setTextFormat(Qt.TextFormat.PlainText)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self._labels[key] = label
            form.addRow(f"{key}:", label)

    def show_model(self, spec: ModelSpec) -> None:
        source = cached_source(spec.path)  # a header read over the network says so, and where from
        for key, text in summary_rows(spec, source).items():
            self._labels[key].setText(text)
        self.setToolTip(plain_tooltip(spec.path if source is None else source.ref))

    def values(self) -> dict[str, str]:
        return {key: label.text() for key, label in self._labels.items()}
