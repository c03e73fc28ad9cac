"""The ledger's words on real widgets (issue 17, item 2's leftovers): every legend entry carries its
line's one-sentence tooltip from the core's vocabulary, and no widget says "coarse". Plain words
(issue 25): every term the screens use is in Help ▸ Glossary, and no screen says "seed"."""

from __future__ import annotations

import re

import pytest
from gui_support import child, open_model
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton, QAbstractItemView, QDialog, QDockWidget, QGroupBox, QLabel, QLineEdit, QMenu, QPlainTextEdit,
    QTextEdit, QWidget,
)

from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.core.plan.ledger import LEDGER_LINES
from gguf_budget.core.views.glossary import GLOSSARY
from gguf_budget.core.views.ledger_names import MEASURED_LINES
from gguf_budget.core.views.ledger_names import line_name, line_tooltip


def test_each_legend_entry_has_its_own_tooltip_from_the_core(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model())
    chart = child(window, "ledgerChart")
    shown = chart.legend_lines()
    lines = [line for line in reversed(LEDGER_LINES + MEASURED_LINES) if line_name(line) in shown]
    assert [line_name(line) for line in lines] == list(shown) and len(lines) == len(LEDGER_LINES)
    assert chart.legend_tooltips() == tuple(line_tooltip(line) for line in lines)
    assert len(set(chart.legend_tooltips())) == len(lines)
    for swatch, label in chart.legend.entries:
        assert swatch.toolTip() == label.toolTip()


def test_no_widget_is_named_or_worded_coarse(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model())
    qtbot.waitUntil(lambda: window.session.view.fit is not None)
    words = [(w.objectName(), w.text() if hasattr(w, "setText") and callable(w.text) else "", w.toolTip())
             for w in window.findChildren(QWidget)]
    assert not [entry for entry in words if any("coarse" in str(part).lower() for part in entry)]
    assert child(window, "weightsByFileShare").text().startswith("GPU ")


def _screen_words(explorer) -> str:
    """Every word the window shows or hints: labels, buttons, boxes, titles, tooltips, menus, table headers
    and cells, and the report panes."""
    parts: list[str] = []
    for w in explorer.window.findChildren(QWidget):
        parts += [w.toolTip(), w.windowTitle() if isinstance(w, QDockWidget) else ""]
        if isinstance(w, (QLabel, QAbstractButton, QLineEdit)):
            parts.append(w.text())
        if isinstance(w, QLineEdit):
            parts.append(w.placeholderText())
        if isinstance(w, QGroupBox):
            parts.append(w.title())
        if isinstance(w, (QPlainTextEdit, QTextEdit)):
            parts.append(w.toPlainText())
        if isinstance(w, QMenu):
            parts += [f"{a.text()} {a.toolTip()}" for a in w.actions()]
        if isinstance(w, QAbstractItemView) and w.model() is not None:
            model = w.model()
            parts += [str(model.headerData(c, Qt.Orientation.Horizontal) or "") for c in range(model.columnCount())]
            parts += [str(model.index(r, c).data() or "") for r in range(model.rowCount())
                      for c in range(model.columnCount())]
    return "\n".join(parts)


@pytest.fixture
def busy_screen(qtbot, make_explorer):
    """The 8B skeleton opened, the Quants and sweep docks showing, the report on screen."""
    explorer = make_explorer()
    window = explorer.window
    open_model(qtbot, window, catalogue_path(find_entry("llama-3.1-8b-instruct")))
    explorer.quants.dock.show()
    explorer.quants.dock.raise_()
    qtbot.waitUntil(lambda: explorer.quants.follower.ladder() is not None and not explorer.quants.follower.busy(),
                    timeout=30000)
    explorer.whatif.sweep_dock.show()
    explorer.whatif.sweep_dock.raise_()
    qtbot.waitUntil(lambda: explorer.whatif.sweep.result() is not None, timeout=30000)
    return explorer


# The words a newcomer meets on these screens that need a definition (issue 25: "pinned", "streaming ring",
# "weight ceiling", "admission", "mandatory memory", "residual stream" were undefined).
SCREEN_TERMS = ("Budget plan", "Full load", "pinned", "Streaming ring", "Weight ceiling", "Admission",
                "Mandatory memory", "Residual stream", "KV cache", "Minimum configuration", "Decode", "Best fit",
                "recommended", "priced, not downloaded", "Runtime evidence", "usable", "reserve",
                "hypothetical", "Bits/weight", "heavy quality loss", "Output head", "Scratch buffers", "Logits",
                "Attention scores", "Embedding rows", "Output norm", "Process overhead", "GPU layers",
                "Tensor split", "cap", "bandwidth", "Ledger", "FEASIBLE", "File size")


def test_every_term_the_screens_use_is_in_help_glossary(qtbot, busy_screen):
    words = _screen_words(busy_screen).casefold()
    glossary = {t.term.casefold() for t in GLOSSARY}
    for term in SCREEN_TERMS:
        assert term.casefold() in words, f"{term!r} is no longer on screen: drop it from SCREEN_TERMS"
        defined = [g for g in glossary if term.casefold().replace("/", " per ") in g]
        assert defined, f"{term!r} is on screen but not in the glossary"


def test_no_screen_says_seed_or_cites_a_design_document(qtbot, busy_screen):
    words = _screen_words(busy_screen)
    assert not re.search(r"\bseeds?\b|DESIGN(\.md| §)", words, re.IGNORECASE)


def test_help_glossary_shows_the_cores_glossary_and_finds_a_term(qtbot, make_explorer):
    window = make_explorer().window
    action = child(window, "glossaryAction")
    assert window.help_menu.actions()[0] is action and action.text() == "&Glossary"
    action.trigger()
    dialog = child(window, "glossaryDialog")
    qtbot.waitExposed(dialog)
    text = child(window, "glossaryText").toPlainText()
    assert all(t.term in text for t in GLOSSARY)
    assert "Weight ceiling" in text and "Streaming ring" in text
    qtbot.keyClicks(child(window, "glossaryFilter"), "ceiling")
    assert child(window, "glossaryText").toPlainText().startswith("Weight ceiling")
    action.trigger()                                              # one dialog, raised again
    assert len(window.findChildren(QDialog, "glossaryDialog")) == 1
