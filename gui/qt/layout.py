"""Where the widgets sit: knobs and model on the left, the plan in the centre, the machine on the right.

Every column fits 1280 × 720 with a bottom dock open: the side columns scroll, the centre
holds the controls, the ledger chart and the report at their minimum heights.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QGroupBox, QScrollArea, QSplitter, QVBoxLayout, QWidget

from gguf_budget.gui.qt.machine.machine_panel import HardwarePanel
from gguf_budget.gui.qt.plan.goal_control import GoalControl
from gguf_budget.gui.qt.plan.knobs import Knobs
from gguf_budget.gui.qt.plan.model_summary import ModelSummary
from gguf_budget.gui.qt.plan.plan_panel import PlanPanel

SIDE_WIDTH = 330


@dataclass(frozen=True)
class Body:
    splitter: QSplitter
    summary: ModelSummary
    knobs: Knobs
    plan: PlanPanel
    hardware: HardwarePanel
    goal: GoalControl


def _group(title: str, child: QWidget, parent: QWidget) -> QGroupBox:
    box = QGroupBox(title, parent)
    QVBoxLayout(box).addWidget(child)
    return box


class SideColumn(QScrollArea):
    """A side column: scrolls vertically only, and gives its contents the height their wrapped lines need at
    the viewport's width. QScrollArea sizes its widget by the widget's minimum size hint, which a form of
    word-wrapped labels computes at no particular width, so at 1280 × 720 the rows were squeezed onto each
    other; here the widget's height is its height-for-width, recomputed on every resize and relayout. A relayout's
    height is set as the contents' layout request arrives, before they lay themselves out: a row that grew a line
    costs one layout and one paint of the column (set a turn later, it cost a second of each, in the next tick)."""

    def __init__(self, child: QWidget, parent: QWidget):
        super().__init__(parent)
        self.setWidget(child)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setMinimumWidth(SIDE_WIDTH - 40)
        child.installEventFilter(self)

    def fit_contents(self) -> None:
        child = self.widget()
        if child is None or not child.hasHeightForWidth():
            return
        wanted = child.heightForWidth(self.viewport().width())
        if wanted > 0 and wanted != child.minimumHeight():
            child.setMinimumHeight(wanted)  # a taller one is resized at once; a shorter one...
            height = max(wanted, self.viewport().height())
            if child.height() != height:  # ...now too, not a turn later when the scroll area hears of it
                child.resize(child.width(), height)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self.fit_contents()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self.fit_contents()  # the height for the new rows, before the contents lay them out: one pass, not two
        return super().eventFilter(watched, event)


def build_body(parent: QWidget) -> Body:
    splitter = QSplitter(Qt.Orientation.Horizontal, parent)
    left = QWidget(splitter)
    summary, knobs, goal = ModelSummary(left), Knobs(left), GoalControl(left)
    column = QVBoxLayout(left)
    column.setContentsMargins(0, 0, 0, 0)
    column.addWidget(_group("Knobs", knobs, left))  # the controls first: at 1280 × 720 the facts scroll, not the knobs
    column.addWidget(_group("Goal", goal, left))  # sets the knobs above it and the llama.cpp options from tune's answer
    column.addWidget(_group("Model", summary, left))
    column.addStretch(1)
    plan = PlanPanel(splitter)
    hardware = HardwarePanel(splitter)
    splitter.addWidget(SideColumn(left, splitter))
    splitter.addWidget(plan)
    splitter.addWidget(SideColumn(hardware, splitter))
    splitter.setStretchFactor(1, 1)
    splitter.setSizes([SIDE_WIDTH, 1440 - 2 * SIDE_WIDTH - 40, SIDE_WIDTH + 40])
    splitter.setChildrenCollapsible(False)
    return Body(splitter, summary, knobs, plan, hardware, goal)
