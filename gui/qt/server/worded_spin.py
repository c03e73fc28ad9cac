"""A spin box whose special values read as words: `-np` auto, `--cache-ram` -1 (no limit) and 0 (off), checkpoints off.

llama-server spells its automatic and off settings as numbers (-1, 0); a person reads "auto",
"no limit", "off". The words are shown and typed for those values, every other value is a number
(so the box takes no suffix: its row names the unit). The values themselves are the ones the core's settings take.
"""

from __future__ import annotations

from typing import Mapping

from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QSpinBox, QWidget


class WordedSpinBox(QSpinBox):
    """A QSpinBox that shows `words[value]` for the values named there."""

    def __init__(self, low: int, high: int, value: int, words: Mapping[int, str], parent: QWidget | None = None):
        super().__init__(parent)
        self._words = dict(words)
        self._values = {word.lower(): n for n, word in self._words.items()}
        self.setRange(low, high)
        self.setValue(value)

    def textFromValue(self, value: int) -> str:  # noqa: N802 - Qt's name
        return self._words.get(value, super().textFromValue(value))

    def valueFromText(self, text: str) -> int:  # noqa: N802 - Qt's name
        word = self._word(text)
        return word if word is not None else super().valueFromText(text)

    def validate(self, text: str, pos: int) -> tuple[QValidator.State, str, int]:
        if self._word(text) is not None:
            return QValidator.State.Acceptable, text, pos
        return super().validate(text, pos)

    def _word(self, text: str) -> int | None:
        """The value of the one word `text` begins ("auto", "off", "no limit"); None for a number or no word."""
        typed = text.strip().lower()
        if not typed or typed.lstrip("-").isdigit():
            return None
        found = {n for word, n in self._values.items() if word.startswith(typed)}
        return found.pop() if len(found) == 1 else None
