"""The plan's report (Execution Plan or "RAM budget impossible") as copyable monospace text."""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from gguf_budget.gui.qt.text_view import read_only_view, replace_text


MIN_HEIGHT = 48
"""Three lines: at 1280 × 720 with a dock open the report yields its height to the chart and scrolls."""


class ReportView(QWidget):
    """Read-only text with a Copy button; `text()` is exactly what the core reported."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._edit = read_only_view(QPlainTextEdit(self))
        self._edit.setObjectName("reportView")
        self._edit.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self._edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self._edit.setMinimumHeight(MIN_HEIGHT)
        copy = QPushButton("Copy", self)
        copy.setToolTip("Copy the report")
        copy.setObjectName("copyReport")
        copy.clicked.connect(self.copy)
        column = QVBoxLayout()
        column.addWidget(copy)
        column.addStretch(1)
        layout = QHBoxLayout(self)  # the button beside the text: no row of its own at 1280 × 720
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._edit, 1)
        layout.addLayout(column)

    def set_text(self, text: str) -> None:
        replace_text(self._edit, text)

    def text(self) -> str:
        return self._edit.toPlainText()

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text())
