"""The small chart under the side panel's server lines: llama-server's resident memory after each request.

Fed a `views.server_report.SessionChart`; draws it and computes nothing: one step per request,
a gap where llama-server refuses one, and the worst case (every cache and checkpoint full) as a
dashed line at the top when it is in range.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from gguf_budget.core.views.server_report import SessionChart

from gguf_budget.gui.qt.named import named
from gguf_budget.gui.qt.row_box import RowBox

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


class SessionChartView(QWidget):
    """The plot and its caption; hidden without a session."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.plot = named(_Plot(self), "sessionPlot")
        self.caption = named(QLabel(self, wordWrap=True), "sessionCaption")
        self.caption.setTextFormat(Qt.TextFormat.PlainText)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)
        layout.addWidget(RowBox(self.caption, self))  # a new caption of as many lines lays nothing out
        self.hide()

    def set_chart(self, chart: SessionChart | None) -> None:
        self.plot.chart = chart
        self.caption.setText("" if chart is None else chart.caption)
        self.setVisible(chart is not None)
        self.plot.update()
