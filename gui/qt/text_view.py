"""A read-only text view given a new text on every tick, redrawn like `setPlainText` at less cost.

`QPlainTextEdit.setPlainText` empties the document and fills it again: the view's scroll bars see an
empty document in between, change their range twice and repaint, though the new text is as long and
as wide as the old (a tick changes a number or two). Replacing the whole text in one edit lets the
document change once, so a scroll bar whose range did not move is not repainted.

Rule 1: what is shown is what `setPlainText` shows: the new text, scrolled to its start, the cursor at
        its start, no selection; the view keeps no undo history (it is read-only).
Rule 2: only the part between what the old and new texts begin and end with alike is replaced (a tick changes a
        few numbers), so the document lays out and the view repaints only the lines that changed.
"""

from __future__ import annotations

from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit


def read_only_view(edit: QPlainTextEdit) -> QPlainTextEdit:
    """`edit` as a read-only view whose text `replace_text` sets (no undo history to grow on each tick)."""
    edit.setReadOnly(True)
    edit.setUndoRedoEnabled(False)
    return edit


def _units(text: str) -> int:
    """The length of `text` in UTF-16 code units: the positions a QTextCursor counts."""
    return len(text.encode("utf-16-le")) // 2


def _alike(old: str, new: str, longest: int, ends: bool) -> int:
    """How many characters the two texts begin (`ends`: end) with alike, at most `longest`: bisected over slices,
    which compare in C."""
    low, high = 0, longest
    while low < high:
        mid = (low + high + 1) // 2
        if (old[len(old) - mid:] == new[len(new) - mid:]) if ends else (old[:mid] == new[:mid]):
            low = mid
        else:
            high = mid - 1
    return low


def _changed(old: str, new: str) -> tuple[int, int]:
    """Rule 2: (the characters the two texts begin with alike, those they end with alike, not overlapping)."""
    head = _alike(old, new, min(len(old), len(new)), ends=False)
    return head, _alike(old, new, min(len(old), len(new)) - head, ends=True)


def replace_text(edit: QPlainTextEdit, text: str) -> None:
    """Rules 1–2: the changed part replaced in one edit; unchanged text is no edit at all."""
    old = edit.toPlainText()
    if text == old:
        return
    head, tail = _changed(old, text)
    cursor = QTextCursor(edit.document())
    cursor.setPosition(_units(old[:head]))
    cursor.setPosition(_units(old[:len(old) - tail]), QTextCursor.MoveMode.KeepAnchor)
    cursor.insertText(text[head:len(text) - tail])
    if edit.toPlainText() != text:  # a separator the document keeps otherwise than it reads (Rule 1 holds either way)
        cursor.select(QTextCursor.SelectionType.Document)
        cursor.insertText(text)
    cursor.movePosition(QTextCursor.MoveOperation.Start)
    edit.setTextCursor(cursor)
    edit.horizontalScrollBar().setValue(0)
    edit.verticalScrollBar().setValue(0)
