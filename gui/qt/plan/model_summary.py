"""The model summary: what the file says, each untrusted string escaped and truncated."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QLabel, QWidget

from gguf_budget.core import ModelSpec
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.units import human_bytes

FIELDS = ("Name", "Architecture", "Parameters", "File type", "File size", "Storage", "Layers",
          "Context", "Embeddings")
_NAME_LIMIT = 60


def count_text(n: int) -> str:
    """1_100_048_384 → '1.10 B' (parameter counts are decimal, as model cards print them)."""
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return str(n)


def summary_rows(spec: ModelSpec) -> dict[str, str]:
    shards = f", {len(spec.shards)} shards" if len(spec.shards) > 1 else ""
    return {
        "Name": safe_text(spec.name or "(unnamed)", _NAME_LIMIT),
        "Architecture": safe_text(spec.architecture, _NAME_LIMIT),
        "Parameters": count_text(spec.n_params),
        "File type": safe_text(spec.file_type_name or "unknown", _NAME_LIMIT),
        "File size": f"{human_bytes(spec.file_bytes)} on disk{shards}",
        "Storage": (f"header only — the complete file is {human_bytes(spec.complete_file_bytes)}"
                    if spec.header_only else "complete file"),
        "Layers": f"{spec.n_layer} blocks, largest {human_bytes(spec.largest_layer_bytes)}",
        "Context": "unknown" if spec.context_length is None else f"{spec.context_length:,} tokens",
        "Embeddings": "tied (the head reuses token_embd)" if spec.tied_embeddings else "separate output table",
    }


class ModelSummary(QWidget):
    """A form of the model's facts; `values()` returns what is on screen."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("modelSummary")
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        self._labels: dict[str, QLabel] = {}
        for key in FIELDS:
            label = QLabel("—", self, wordWrap=True)
            label.setTextFormat(Qt.TextFormat.PlainText)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self._labels[key] = label
            form.addRow(f"{key}:", label)

    def show_model(self, spec: ModelSpec) -> None:
        for key, text in summary_rows(spec).items():
            self._labels[key].setText(text)
        self.setToolTip(safe_text(spec.path, 300))

    def values(self) -> dict[str, str]:
        return {key: label.text() for key, label in self._labels.items()}
