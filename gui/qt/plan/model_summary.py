"""The model summary: the lines `core.views.model_summary` writes about a file, in a form.

Rule 1: each row is a label in a box of its own (`row_box`), so it measures its own wrapped height at its width:
        narrowed by its side column alone (the column's scroll bar coming in asks no layout of anyone), a row still
        takes the lines its text needs, without another row's relayout to lay it out again.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QLabel, QWidget

from gguf_budget.core import ModelSpec
from gguf_budget.core.remote.source import cached_source
from gguf_budget.core.views.model_summary import SUMMARY_FIELDS, summary_rows
from gguf_budget.gui.qt.plain_text import plain_tooltip
from gguf_budget.gui.qt.row_box import RowBox


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
            form.addRow(f"{key}:", RowBox(label, self))

    def show_model(self, spec: ModelSpec) -> None:
        source = cached_source(spec.path)  # a header read over the network says so, and where from
        for key, text in summary_rows(spec, source).items():
            self._labels[key].setText(text)
        self.setToolTip(plain_tooltip(spec.path if source is None else source.ref))

    def values(self) -> dict[str, str]:
        return {key: label.text() for key, label in self._labels.items()}
