"""A read-only text view given a new text on every tick, redrawn like `setPlainText` at less cost.

`QPlainTextEdit.setPlainText` empties the document and fills it again: the view's scroll bars see an
empty document in between, change their range twice and repaint, though the new text is as long and
as wide as the old (a tick changes a number or two). Replacing the whole text in one edit lets the
document change once, so a scroll bar whose range did not move is not repainted.

Rule 1: what is shown is what `setPlainText` shows: the new text, scrolled to its start, the cursor at
        its start, no selection; the view keeps no undo history (it is read-only).
"""

from __future__ import annotations

from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit


def read_only_view(edit: QPlainTextEdit) -> QPlainTextEdit:
    """`edit` as a read-only view whose text `replace_text` sets (no undo history to grow on each tick)."""
    edit.setReadOnly(True)
    edit.setUndoRedoEnabled(False)
    return edit


def replace_text(edit: QPlainTextEdit, text: str) -> None:
    """Rule 1: the whole text replaced in one edit; unchanged text is no edit at all."""
    if text == edit.toPlainText():
        return
    cursor = QTextCursor(edit.document())
    cursor.select(QTextCursor.SelectionType.Document)
    cursor.insertText(text)
    cursor.movePosition(QTextCursor.MoveOperation.Start)
    edit.setTextCursor(cursor)
    edit.horizontalScrollBar().setValue(0)
    edit.verticalScrollBar().setValue(0)
