"""The why-they-differ line shows and hides in its own room (`headline_view` Rules 2-3, `row_box` Rules 5-6): where the
window has the room, a budget drag across where the two answers' tiers part lays out neither the window nor its
centre and moves no row under the headline (it laid the whole window out again and repainted it, 14-26 ms of GUI
CPU), and a new tier or line in the headline asks its parent for no layout; a window at its minimum size keeps the
minimum it had without the line, and a line shown there still gets its whole height."""

from __future__ import annotations

from collections import Counter

from gui_support import open_model, settle
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QLabel, QSlider, QVBoxLayout, QWidget

from gguf_budget.core.explorer.headline import Answer, Headline
from gguf_budget.core.fit.load_tier import LoadTier
from gguf_budget.core.views.plan_view import BannerState
from gguf_budget.gui.qt.elided_label import ElidedLabel
from gguf_budget.gui.qt.plan.headline_view import HeadlineView
from gguf_budget.gui.qt.row_box import SpareRow
from gguf_budget.resources import demo_model_path


class Events(QObject):
    """Counts the events of some types each watched widget receives."""

    def __init__(self, *types: QEvent.Type) -> None:
        super().__init__()
        self.types, self.seen = types, Counter[QObject]()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() in self.types:
            self.seen[obj] += 1
        return False


def _drain() -> None:
    for _ in range(3):  # a relayout posts the next one up in a later turn
        QApplication.sendPostedEvents()
        QApplication.processEvents()


def test_a_budget_drag_where_the_answers_part_moves_no_row_under_the_headline(qtbot, make_window):
    window = make_window()
    open_model(qtbot, window, demo_model_path())
    budget = window.findChild(QSlider, "budgetSlider")
    headline = window.findChild(QObject, "headline")
    said: dict[bool, int] = {}
    for value in range(budget.minimum(), budget.maximum() + 1, max(1, (budget.maximum() - budget.minimum()) // 60)):
        budget.setValue(value)
        settle(qtbot, window)
        said.setdefault(bool(headline.differ.text()), value)
    assert set(said) == {True, False}, said  # the drag crosses where the tiers part
    _drain()
    below = [window.findChild(QWidget, name) for name in ("ledgerChart", "reportView", "hardwarePanel", "ctxTiers")]
    where = [(w.size(), w.mapTo(window, w.rect().topLeft())) for w in below]
    moved = Events(QEvent.Type.Move, QEvent.Type.Resize)
    for widget in below:
        widget.installEventFilter(moved)
    requests = Events(QEvent.Type.LayoutRequest)
    for widget in (window, window.centralWidget()):
        widget.installEventFilter(requests)
    for value in (said[True], said[False], said[True], said[False]):
        budget.setValue(value)
        settle(qtbot, window)
        _drain()
        assert headline.differ.isVisible() is (value == said[True])
        assert [(w.size(), w.mapTo(window, w.rect().topLeft())) for w in below] == where
    assert sum(moved.seen.values()) == 0
    assert sum(requests.seen.values()) == 0  # nor the Run it line's font, turning fixed or plain with its command


def _headline(differ: str, tier: LoadTier) -> Headline:
    plan = Answer(tier=tier, title="Budget plan", plain="runs", why="", fix="", flags="", detail="plan",
                  glossary="budget plan")
    load = Answer(tier=LoadTier.FITS, title="Full load", plain="runs", why="", fix="", flags="", detail="load",
                  glossary="full load")
    return Headline(state=BannerState.FEASIBLE, text="plan", full_load="load", plan=plan, load=load, differ=differ)


def test_a_new_tier_or_why_they_differ_line_asks_the_headlines_parent_for_no_layout(qtbot):
    parent = QWidget()
    qtbot.addWidget(parent)
    headline = HeadlineView(parent)
    QVBoxLayout(parent).addWidget(headline)
    parent.resize(900, 200)
    parent.show()
    headline.show_headline(_headline("", LoadTier.FITS))
    _drain()
    height = headline.height()
    requests = Events(QEvent.Type.LayoutRequest)
    parent.installEventFilter(requests)
    for differ, tier in (("Why they differ: the plan streams", LoadTier.TIGHT), ("", LoadTier.FITS)) * 2:
        headline.show_headline(_headline(differ, tier))
        _drain()
        assert headline.differ.isVisible() is bool(differ) and headline.plan.tier() == tier.value
    assert requests.seen[parent] == 0 and headline.height() == height


def test_a_spare_row_at_its_layouts_minimum_claims_its_line_only_while_shown(qtbot):
    """Squeezed to its minimum, the layout is as tall as without the line; a shown line gets its whole height."""
    parent = QWidget()
    qtbot.addWidget(parent)
    top, line = QLabel("above", parent), ElidedLabel(parent)
    layout = QVBoxLayout(parent)
    layout.setSpacing(0)
    layout.addWidget(top)
    row = SpareRow(line, parent, above=2)
    layout.addWidget(row)
    line.hide()
    parent.show()
    _drain()
    bare = layout.minimumSize().height()
    margins = layout.contentsMargins()
    assert bare == top.minimumSizeHint().height() + margins.top() + margins.bottom()
    parent.resize(parent.width(), bare)
    _drain()
    assert row.height() == 0
    line.setText("why they differ")
    line.show()
    _drain()
    assert line.height() == line.sizeHint().height() and layout.minimumSize().height() == bare + 2 + line.height()
    line.hide()
    _drain()
    assert layout.minimumSize().height() == bare
