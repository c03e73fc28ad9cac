"""The ledger's words on real widgets (issue 17, item 2's leftovers): every legend entry carries its
line's one-sentence tooltip from the core's vocabulary, and no widget says "coarse"."""

from __future__ import annotations

from gui_support import child, open_model
from PySide6.QtWidgets import QWidget

from gguf_budget.core.plan.ledger import LEDGER_LINES
from gguf_budget.core.views.evidence_view import MEASURED_LINES
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
    for sample, label in chart._legend.items:
        assert sample.toolTip() == label.toolTip()


def test_no_widget_is_named_or_worded_coarse(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model())
    qtbot.waitUntil(lambda: window.current_fit() is not None)
    words = [(w.objectName(), w.text() if hasattr(w, "setText") and callable(w.text) else "", w.toolTip())
             for w in window.findChildren(QWidget)]
    assert not [entry for entry in words if any("coarse" in str(part).lower() for part in entry)]
    assert child(window, "weightsByFileShare").text().startswith("GPU ")
