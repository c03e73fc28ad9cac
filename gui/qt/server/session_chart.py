"""The small chart under the side panel's server lines: llama-server's resident memory after each request.

Fed a `views.server_report.SessionChart`; draws it and computes nothing: one step per request,
a gap where llama-server refuses one, and the worst case (every cache and checkpoint full) as a
dashed line at the top when it is in range.

Rule 1: hidden until a chart comes. Once one was drawn, a fit whose session has no chart (a ctx so small that
        llama-server refuses every request: a drag to the slider's low end) leaves the chart's room blank rather than
        hiding it, until the panel shows another model (`forget`); a fit with no session at all (another program
        than llama-server) hides it. So a ctx drag does not move the rows under the chart, nor lay out and repaint
        the side panel from the chart down twice a drag (12-16 ms of GUI CPU each). The plot and its caption sit in
        a box (`row_box.HintBox`) that keeps their room while they are hidden, and asks for room only when it
        changes (a caption of a new line count).
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from gguf_budget.core.views.server_report import SessionChart

from gguf_budget.gui.qt.named import named
from gguf_budget.gui.qt.row_box import HintBox, RowBox

HEADROOM = 1.05


class _Plot(QWidget):
    def __init__(self, parent: QWidget):
        super().__init__(parent)
        self.chart: SessionChart | None = None
        self.setMinimumHeight(48)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        return QSize(240, 56)

    def paintEvent(self, event: QPaintEvent) -> None:
        chart = self.chart
        if chart is None:
            return
        values = [r for r in chart.rss if r is not None]
        top = max([*values, chart.worst or 0]) * HEADROOM
        low = min(values) * 0.9
        w, h, n = self.width(), self.height(), len(chart.rss)
        painter = QPainter(self)
        colour = self.palette().color(QPalette.ColorRole.WindowText)

        def y(v: int) -> float:
            return h - 2 - (v - low) / max(top - low, 1) * (h - 4)

        if chart.worst is not None:
            painter.setPen(QPen(colour, 1, Qt.PenStyle.DashLine))
            painter.drawLine(QPointF(0, y(chart.worst)), QPointF(w, y(chart.worst)))
        painter.setPen(QPen(self.palette().color(QPalette.ColorRole.Highlight), 2))
        for i, r in enumerate(chart.rss):
            if r is not None:
                painter.drawLine(QPointF(i * w / n, y(r)), QPointF((i + 1) * w / n, y(r)))
        painter.end()


class SessionChartView(HintBox):
    """The plot and its caption (Rule 1)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        inner = self.inner
        self.plot = named(_Plot(inner), "sessionPlot")
        self.caption = named(QLabel(inner, wordWrap=True), "sessionCaption")
        self.caption.setTextFormat(Qt.TextFormat.PlainText)
        caption = RowBox(self.caption, inner)  # a new caption of as many lines lays nothing out
        for widget in (self.plot, caption):
            policy = widget.sizePolicy()
            policy.setRetainSizeWhenHidden(True)  # a blank chart keeps its room (Rule 1)
            widget.setSizePolicy(policy)
        layout = QVBoxLayout(inner)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)
        layout.addWidget(caption)
        self._held = False
        self.fit()
        self.hide()

    def set_chart(self, chart: SessionChart | None, session: bool = False) -> None:
        """Draw `chart`; without one, a blank room once a chart was drawn while there is a `session` (Rule 1)."""
        self.plot.chart = chart
        if chart is not None:
            self.caption.setText(chart.caption)
        self._held = chart is not None or (self._held and session)
        self.plot.setVisible(chart is not None)
        self.caption.setVisible(chart is not None)
        self.setVisible(self._held)
        self.plot.update()

    def forget(self) -> None:
        """Another model: a fit without a chart hides the view again (Rule 1)."""
        self._held = False
