"""The verdict banner: one line of state (a `BannerState`: the plan's outcome, "error" or "empty") and why.

Its height is fixed at two lines, so a new text never re-lays the window out mid-drag; a text that
needs more at the banner's width shows its first two lines, the second ending in "…", and the
tooltip holds it whole (`text()` is always the whole text).

The `state` dynamic property carries the state for the stylesheet and for tests; the
text comes from the core (`plan_banner`), so the banner shows the core's numbers only.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent, QTextLayout
from PySide6.QtWidgets import QWidget

from gguf_budget.core.views.plan_view import BannerState
from gguf_budget.gui.qt.selectable_label import SelectableLabel
from gguf_budget.gui.qt.theme import banner_style


class Banner(SelectableLabel):
    """A coloured label whose `state` property selects its colour."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("banner")
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setStyleSheet(banner_style())
        self.setFixedHeight(2 * self.fontMetrics().lineSpacing() + 14)  # 2 × 4 px padding, 2 × 3 px for the bold face
        self._whole = ""
        self.show_state(BannerState.EMPTY, "No model loaded")

    def text(self) -> str:
        """The whole text, however much of it fits."""
        return self._whole

    def shown_text(self) -> str:
        return super().text()

    def _fit(self) -> None:
        """At most two lines at the banner's width: the first as laid out, the second elided."""
        width = self.contentsRect().width()
        layout = QTextLayout(self._whole, self.font())
        layout.beginLayout()
        starts: list[int] = []
        while len(starts) < 3:
            line = layout.createLine()
            if not line.isValid():
                break
            line.setLineWidth(width)
            starts.append(line.textStart())
        layout.endLayout()
        shown = self._whole
        if len(starts) == 3:
            rest = self.fontMetrics().elidedText(self._whole[starts[1]:], Qt.TextElideMode.ElideRight, width)
            shown = self._whole[:starts[1]] + rest
        super().setText(shown)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit()

    def state(self) -> str:
        return str(self.property("state"))

    def show_state(self, state: BannerState, text: str) -> None:
        if state not in tuple(BannerState):
            raise ValueError(f"unknown banner state {state!r}")
        word = BannerState(state).value
        self._whole = text
        self.setToolTip(text)
        self._fit()
        self.setAccessibleName(f"Verdict: {word}")
        if self.property("state") != word:
            self.setProperty("state", word)
            self.style().unpolish(self)
            self.style().polish(self)
