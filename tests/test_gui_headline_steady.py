"""The headline keeps its height while a slider moves (`headline_view` Rules 2–3): the why-they-differ line keeps its
room when the two answers agree, so a budget drag across where their tiers part moves no row under it (it moved
the whole window by a line: 68 → 52 px on the demo)."""

from __future__ import annotations

from gui_support import open_model, settle
from PySide6.QtCore import QObject
from PySide6.QtWidgets import QSlider, QWidget

from gguf_budget.resources import demo_model_path


def test_a_budget_tick_where_the_answers_part_or_agree_moves_no_row(qtbot, make_window):
    window = make_window()
    window.show()
    open_model(qtbot, window, demo_model_path())
    budget = window.findChild(QSlider, "budgetSlider")
    headline = window.findChild(QObject, "headline")
    said = {}
    for value in range(budget.minimum(), budget.maximum() + 1, max(1, (budget.maximum() - budget.minimum()) // 60)):
        budget.setValue(value)
        settle(qtbot, window)
        said.setdefault(bool(headline.differ.text()), value)
    assert set(said) == {True, False}, said  # the drag crosses where the tiers part
    below = window.findChild(QWidget, "ledgerChart")
    where = headline.height(), below.mapTo(window, below.rect().topLeft())
    for value in (said[True], said[False], said[True], said[False]):
        budget.setValue(value)
        settle(qtbot, window)
        assert bool(headline.differ.text()) is (value == said[True])
        assert (headline.height(), below.mapTo(window, below.rect().topLeft())) == where
