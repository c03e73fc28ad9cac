"""Where the widgets sit: knobs and model on the left, the plan in the centre, the machine on the right.

Every column fits 1280 × 720 with a bottom dock open: the side columns scroll, the centre
holds the controls, the ledger chart and the report at their minimum heights.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGroupBox, QScrollArea, QSplitter, QVBoxLayout, QWidget

from gguf_budget.gui.qt.machine.machine_panel import HardwarePanel
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


def _group(title: str, child: QWidget, parent: QWidget) -> QGroupBox:
    box = QGroupBox(title, parent)
    QVBoxLayout(box).addWidget(child)
    return box


def _scrolling(child: QWidget, parent: QWidget) -> QScrollArea:
    area = QScrollArea(parent)
    area.setWidget(child)
    area.setWidgetResizable(True)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    area.setMinimumWidth(SIDE_WIDTH - 40)
    return area


def build_body(parent: QWidget) -> Body:
    splitter = QSplitter(Qt.Orientation.Horizontal, parent)
    left = QWidget(splitter)
    summary, knobs = ModelSummary(left), Knobs(left)
    column = QVBoxLayout(left)
    column.setContentsMargins(0, 0, 0, 0)
    column.addWidget(_group("Knobs", knobs, left))  # the controls first: at 1280 × 720 the facts scroll, not the knobs
    column.addWidget(_group("Model", summary, left))
    column.addStretch(1)
    plan = PlanPanel(splitter)
    hardware = HardwarePanel(splitter)
    splitter.addWidget(_scrolling(left, splitter))
    splitter.addWidget(plan)
    splitter.addWidget(_scrolling(hardware, splitter))
    splitter.setStretchFactor(1, 1)
    splitter.setSizes([SIDE_WIDTH, 1440 - 2 * SIDE_WIDTH - 40, SIDE_WIDTH + 40])
    splitter.setChildrenCollapsible(False)
    return Body(splitter, summary, knobs, plan, hardware)
