"""The headline: two answers side by side with equal weight — the Budget plan and llama.cpp's full load.

Rule 1: every word is the core's (`core.explorer.headline.Answer`): each card shows its tier and title on a bar in
        the tier's colour (fits green, tight amber, won't red) — for the plan, its runtime's flags with exact sizes
        after the title — then the answer in plain words, then why and the cheapest fix: three lines a card. The jargon — the banner's and the
        full-load line's whole texts — is the card's tooltip, which names the glossary entry that explains it.
Rule 2: when the two answers' tiers differ, one line under them says why (`Headline.differ`); hidden otherwise, its
        room kept while the window has it to spare (`row_box.SpareRow`): a drag across where the tiers part moves no
        row under the headline (it laid out and repainted the whole window, 14-26 ms), and a window at its minimum
        size (1280 x 720 with a dock open) has no line more to find.
Rule 4: under them, the goal last applied and whether it still holds (`Headline.goal`, `headlineGoal`); hidden
        when no goal was applied.
Rule 3: each line is elided at the card's width with its whole text in the tooltip, so the headline keeps its
        height while a slider moves and never widens the window.

The plan card keeps the plan's banner state in its `state` dynamic property (feasible, slow, impossible, …).
"""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QHBoxLayout, QVBoxLayout, QWidget

from gguf_budget.core.explorer.headline import Answer, Headline
from gguf_budget.gui.qt.elided_label import ElidedLabel
from gguf_budget.gui.qt.named import named
from gguf_budget.gui.qt.row_box import HintBox, SpareRow
from gguf_budget.gui.qt.theme import tier_style

GLOSSARY_HINT = "Help ▸ Glossary: “{term}”"
LINE_SPACING = 2  # above each line under the cards


def _repolish(widget: QWidget, name: str, value: str) -> None:
    if widget.property(name) != value:
        widget.setProperty(name, value)
        widget.style().unpolish(widget)
        widget.style().polish(widget)


class AnswerCard(QFrame):
    """One runtime's answer (Rule 1)."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.heading = named(ElidedLabel(self, min_chars=20), f"{name}Tier")
        self.heading.setStyleSheet("QLabel { padding: 2px 6px; border-radius: 3px; font-weight: bold; }\n"
                                   + tier_style("QLabel"))
        self.plain = named(ElidedLabel(self, min_chars=20), f"{name}Plain")
        font = self.plain.font()
        font.setBold(True)
        self.plain.setFont(font)
        self.note = named(ElidedLabel(self, min_chars=20), f"{name}Note")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(3, 2, 3, 2)
        layout.setSpacing(0)
        for label in (self.heading, self.plain, self.note):
            layout.addWidget(label)
        self._detail = ""

    def show_answer(self, answer: Answer | None, placeholder: str = "") -> None:
        """Draw `answer`; without one, `placeholder` alone (no model yet, or waiting for the machine)."""
        self._detail = placeholder if answer is None else answer.detail
        tier = "unknown" if answer is None or answer.tier is None else answer.tier.value
        _repolish(self.heading, "tier", tier)
        if answer is None:
            self.heading.setText(placeholder)
            for label in (self.plain, self.note):
                label.setText("")
            self.setToolTip(placeholder)
            return
        word = "—" if answer.tier is None else answer.tier.value.upper()
        tip = f"{answer.detail}\n\n{GLOSSARY_HINT.format(term=answer.glossary)}"
        flags = f" · {answer.flags}" if answer.flags else ""
        self.heading.setText(f"{word} · {answer.title}{flags}", f"{word} · {answer.title}{flags}\n\n{tip}")
        self.plain.setText(answer.plain, f"{answer.plain}\n\n{tip}")
        self.note.setText(" · ".join(part for part in (answer.why, answer.fix) if part and part != "fits"))
        self.setToolTip(tip)
        self.setAccessibleName(f"{answer.title}: {word}")

    def text(self) -> str:
        """The whole jargon text behind the card (its tooltip's): the banner's or the full-load line's."""
        return self._detail

    def tier(self) -> str:
        return str(self.heading.property("tier"))


class HeadlineView(HintBox):
    """Both cards side by side (objectNames `banner` for the Budget plan and `fullLoadLine` for the full load, as
    the lines they replace were named) and the why-they-differ line (`headlineDiffer`). Its lines sit in a box
    (`row_box.HintBox`, its Rule 6): a card's new tier repolishes it and lays out the headline alone."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("headline")
        inner = self.inner
        self.plan = AnswerCard("banner", inner)
        self.load = AnswerCard("fullLoadLine", inner)
        self.differ = named(ElidedLabel(inner, min_chars=40), "headlineDiffer")
        self.goal = named(ElidedLabel(inner, min_chars=40), "headlineGoal")
        cards = QHBoxLayout()
        cards.setSpacing(6)
        cards.addWidget(self.plan, 1)
        cards.addWidget(self.load, 1)
        layout = QVBoxLayout(inner)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)  # each line keeps the 2 px above it itself: an empty line's room takes none
        layout.addLayout(cards)
        layout.addWidget(SpareRow(self.differ, inner, above=LINE_SPACING))
        self.goal.setContentsMargins(0, LINE_SPACING, 0, 0)
        layout.addWidget(self.goal)
        self.differ.hide()
        self.goal.hide()
        self.plan.show_answer(None, "No model loaded")
        self.load.show_answer(None, "")
        _repolish(self.plan, "state", "empty")
        self.fit()

    def show_headline(self, headline: Headline) -> None:
        self.plan.show_answer(headline.plan, headline.text)
        self.load.show_answer(headline.load, headline.full_load)
        _repolish(self.plan, "state", headline.state.value)
        self.differ.setText(headline.differ)
        self.differ.setVisible(bool(headline.differ))
        self.goal.setText(headline.goal)
        self.goal.setVisible(bool(headline.goal))
