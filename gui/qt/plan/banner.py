"""The verdict banner: one line of state (a `BannerState`: the plan's outcome, "error" or "empty") and why.

Its height is fixed at two lines, so a new text never re-lays the window out mid-drag.

The `state` dynamic property carries the state for the stylesheet and for tests; the
text comes from the core (`plan_banner`), so the banner shows the core's numbers only.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from gguf_budget.core.views.plan_view import BannerState
from gguf_budget.gui.qt.theme import banner_style


class Banner(QLabel):
    """A coloured label whose `state` property selects its colour."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("banner")
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setStyleSheet(banner_style())
        self.setFixedHeight(2 * self.fontMetrics().lineSpacing() + 14)  # 2 × 4 px padding, 2 × 3 px for the bold face
        self.show_state(BannerState.EMPTY, "No model loaded")

    def state(self) -> str:
        return str(self.property("state"))

    def show_state(self, state: BannerState, text: str) -> None:
        if state not in tuple(BannerState):
            raise ValueError(f"unknown banner state {state!r}")
        word = BannerState(state).value
        self.setText(text)
        self.setAccessibleName(f"Verdict: {word}")
        if self.property("state") != word:
            self.setProperty("state", word)
            self.style().unpolish(self)
            self.style().polish(self)
