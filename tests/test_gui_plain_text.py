"""Markup in untrusted text is shown, never rendered: labels are plain text and tooltips arrive
escaped, so a file called `<img src=x>.gguf` reads as its name everywhere in the window."""

from __future__ import annotations

from dataclasses import replace

from gui_support import OTHER, child, open_model
from PySide6.QtGui import QTextDocument, Qt
from PySide6.QtWidgets import QLabel

from gguf_budget.core.safe_text import safe_text

MARKUP = "<img src=x><b>bold&amp;"  # no "/": it must fit in a file name


def shown(tooltip: str) -> str:
    """What Qt displays for a tooltip: rich text when it looks like rich text, else as it is."""
    if not Qt.mightBeRichText(tooltip):
        return tooltip
    document = QTextDocument()
    document.setHtml(tooltip)
    return document.toPlainText()


def test_a_file_name_with_markup_reads_as_text_in_tooltips(qtbot, make_window, write_model):
    window = make_window()
    path = write_model(OTHER, name=f"{MARKUP}\u202e.gguf")
    open_model(qtbot, window, path)
    expected = safe_text(str(path), 300)
    assert shown(child(window, "modelSummary").toolTip()) == expected
    recent = child(window, "recentMenu").actions()
    assert [shown(a.toolTip()) for a in recent] == [expected]
    assert recent[0].text().startswith(safe_text(path.name, 80) + " — ")


def test_labels_showing_untrusted_text_are_plain_text(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model(replace(OTHER, name=MARKUP)))
    edit = child(window, "budgetEdit")
    edit.setText(MARKUP)
    edit.setModified(True)
    edit.editingFinished.emit()
    with qtbot.waitSignal(window.loadFailed):
        window.open_path(f"/nonexistent/{MARKUP}.gguf")
    marked = [label for label in window.findChildren(QLabel) if "<img" in label.text()]
    assert {label.objectName() for label in marked} >= {"budgetError", "loadError"}
    assert all(label.textFormat() == Qt.TextFormat.PlainText for label in marked), \
        [label.objectName() for label in marked if label.textFormat() != Qt.TextFormat.PlainText]
    assert MARKUP in child(window, "modelSummary").values()["Name"]
