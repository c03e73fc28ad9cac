"""View ▸ Speed calibration… and View ▸ Reset speed calibration: what `hw --calibration` lists and
`hw --reset-calibration` does, in the window.

Rule 1: the dialog draws the core's rows (`core.views.calibration_view`: the figures in use, then
        every kept measurement and run with its date, load and whether it is used); it computes
        nothing. It reads the two small kept files (each capped, their entries bounded) when shown.
Rule 2: reset forgets both files (`speed.machine_speed.reset_calibration`); the window then reads
        its figures again (`MainWindow.refresh_speed_figures`), the status bar says what happened,
        and an open dialog shows the defaults.
Rule 3: one dialog per window: the action raises the open one instead of stacking copies.
Rule 4: "Imported runs ran here" is `hw --adopt-imported`: imported logs calibrate this machine
        only when the person says they ran on it (`speed.calibration.adopt_imported`).
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog, QDialogButtonBox, QLabel, QMenu, QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget,
)

from gguf_budget.core.machine.bandwidth_store import host_key
from gguf_budget.core.speed.calibration import adopt_imported
from gguf_budget.core.speed.machine_speed import calibration_state, reset_calibration
from gguf_budget.core.views.calibration_view import RESET_WORDS, calibration_rows
from gguf_budget.core.views.speed_view import machine_speed_rows

from gguf_budget.gui.qt.named import named


class CalibrationDialog(QDialog):
    """Rule 1 (objectName `calibrationDialog`); Reset to the shipped defaults calls `reset`, Close dismisses it."""

    def __init__(self, reset: Callable[[], None], adopt: Callable[[], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("calibrationDialog")
        self.setWindowTitle("Speed calibration")
        self.figures = named(QLabel(self, wordWrap=True), "calibrationFigures")
        self.figures.setTextFormat(Qt.TextFormat.PlainText)
        self.table = named(QTableWidget(self), "calibrationTable")
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.reset = named(QPushButton("Reset to the shipped defaults", self), "resetCalibration")
        self.reset.setToolTip("Forget every kept measurement and run (hw --reset-calibration)")
        buttons.addButton(self.reset, QDialogButtonBox.ButtonRole.ResetRole)
        self.reset.clicked.connect(reset)
        self.adopt = named(QPushButton("Imported runs ran here", self), "adoptImported")
        self.adopt.setToolTip("The imported llama.cpp logs ran on this machine: let them calibrate it "
                              "(hw --adopt-imported)")
        buttons.addButton(self.adopt, QDialogButtonBox.ButtonRole.ActionRole)
        self.adopt.clicked.connect(adopt)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.figures)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.resize(900, 420)
        self.redraw()

    def redraw(self) -> None:
        """Rule 1: the kept files as they are now."""
        state = calibration_state()
        self.figures.setText("\n".join(f"{name}: {text}" for name, text in machine_speed_rows(state.figures)))
        header, *rows = calibration_rows(state)
        self.table.setColumnCount(len(header))
        self.table.setHorizontalHeaderLabels(list(header))
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, cell in enumerate(row):
                self.table.setItem(r, c, QTableWidgetItem(cell))
        self.table.resizeColumnsToContents()


def add_calibration(menu: QMenu, refresh: Callable[[], None], tell: Callable[[str], None]) -> tuple[QAction, QAction]:
    """View ▸ Speed calibration… and ▸ Reset speed calibration (Rules 2–3); `refresh` reads the figures again,
    `tell` shows a status line."""
    show_action = named(QAction("Speed &calibration…", menu), "calibrationAction")
    show_action.setToolTip("Every kept measurement and calibration run, with its date, load and whether it is used")
    reset_action = named(QAction("Reset speed calibration", menu), "resetCalibrationAction")
    reset_action.setToolTip("Forget every kept measurement and run: the shipped defaults stand until measured again")
    dialogs: list[CalibrationDialog] = []

    def changed(message: str) -> None:
        tell(message)
        refresh()
        for dialog in dialogs:
            dialog.redraw()

    def reset() -> None:
        failed = reset_calibration()
        changed("; ".join(failed) if failed else RESET_WORDS)

    def adopt() -> None:
        """Rule 4."""
        changed(f"{adopt_imported(host_key())} imported run(s) now calibrate this machine")

    def show() -> None:
        if not dialogs:
            dialog = CalibrationDialog(reset, adopt, menu.parentWidget())
            dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            dialog.destroyed.connect(dialogs.clear)
            dialogs.append(dialog)
        dialogs[0].redraw()
        dialogs[0].show()
        dialogs[0].activateWindow()

    show_action.triggered.connect(show)
    reset_action.triggered.connect(reset)
    menu.addAction(show_action)
    menu.addAction(reset_action)
    return show_action, reset_action
