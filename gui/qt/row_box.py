"""A label in a box of its own, so that a new text asks for a new layout only when the label's height changes.

QLabel's setText always asks its layout for new room, and Qt then lays out every layout up to the window:
the side panel's dozen word-wrapped rows each take a new text on every ctx tick, and each tick laid the
whole window out again to find every widget where it was. A row's room changes only when its line count
(or its longest word) does.

Rule 1: the label is the box's only child and the box has no layout: the label's request for room reaches
        the box alone, which measures the label at the box's width and asks its own layout for room only
        when the height or the narrowest width it needs changed. Otherwise the new text is painted where
        the old one was, and nothing else moves or repaints.
Rule 2: the box is exactly as tall as the label's lines at the box's width (wrapped, or the label's own
        one-line height, or the height the owner fixed), measured again when its width changes and when it
        is shown (a hidden box hears of no new text); it is never narrower than the label's narrowest width
        (its longest word, wrapped, or its minimum width; QLabel measures it again when the widest word's width changes), so
        no text is clipped.
Rule 3: the box shows and hides with its label, so an owner hides the row as it hid the label.
Rule 4: a word's width is measured once for the label's font (a tick's text is mostly the words of the last one);
        the widths kept are forgotten when the font changes or more than WORDS_KEPT words were met.
Rule 7: a wrapped text's height is measured once for a width and the label's text interaction (QLabel lays the whole
        text out to answer, and keeps nothing; a selectable label lays it out in a text document), and a text's
        widest word is looked up once: a drag back over ctxs met before gives the rows the texts they had, and a
        tick whose GPU layers go back gives the layer rows theirs. What is kept is forgotten with the words' widths
        (Rule 4) and when more than HEIGHTS_KEPT texts were kept.
Rule 5: a line that comes and goes (`SpareRow`: one line of fixed height, an `ElidedLabel`) keeps its room, shown or
        hidden, while its layout has that room to spare: its size hint is the line, its minimum none. Shown, it
        claims the line as its minimum only when squeezed below it (a window at its minimum size), and hidden it
        gives a claimed line back; so where the window has the room, the line shows and hides without moving
        (and repainting) what lies below it, and the window's minimum size is what it was without the line.
Rule 6: a group of rows whose height holds while their content changes (`HintBox`: the headline's cards, the Run it
        line, the tier strip's buttons, the session chart) sits in an inner widget with the layout, filling a box
        that has none: a repolish, a new font or a new text in the group lays out the inner widget alone, and the
        box asks its own layout for room only when the inner heights changed or the inner minimum width grew past
        the box's width. (Qt lays out every layout up to the window whenever a widget's hints may have changed,
        whether or not anything moves.) A box sits in a column as wide as its layout gives, so a width the hints
        gain or lose under that moves nothing: the box keeps the hints it last gave, and asks again when it is made
        narrower than the inner minimum width (a tier joining the tier strip adds a button and 3 px to it).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize
from PySide6.QtGui import QFont, QResizeEvent, QShowEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

WORDS_KEPT = 2048
HEIGHTS_KEPT = 256


class HintBox(QWidget):
    """Rule 6; the owner gives `inner` its layout and rows, then calls `fit`."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.inner = QWidget(self)
        self._hints = (QSize(), QSize())

    def fit(self) -> None:
        """The inner widget fills the box; the box's layout is asked for room only when the inner heights changed or
        the inner minimum width grew past the box's width (Rule 6)."""
        hint, least = self.inner.sizeHint(), self.inner.minimumSizeHint()
        kept_hint, kept_least = self._hints
        if (hint.height(), least.height()) != (kept_hint.height(), kept_least.height()) or (
                least.width() > max(self.width(), kept_least.width())):
            self._hints = (hint, least)
            self.updateGeometry()
        if self.inner.geometry() != self.rect():
            self.inner.setGeometry(self.rect())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return self._hints[0]

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return self._hints[1]

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:  # the inner widget's new hints
            self.fit()
        return super().event(event)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        self.fit()  # the inner widget's requests while the box was hidden reached nothing
        super().showEvent(event)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        self.inner.setGeometry(self.rect())
        if self.width() < self.inner.minimumSizeHint().width():
            self.fit()  # squeezed under a minimum width it kept from its layout
        super().resizeEvent(event)


class SpareRow(QWidget):
    """Rule 5; `label` (one line whose height holds) is reparented into the row, `above` pixels under the row's top
    (the spacing its layout would have put above it), and shows and hides as before."""

    def __init__(self, label: QWidget, parent: QWidget, above: int = 0):
        super().__init__(parent)
        self.label = label
        self._above = above
        label.setParent(self)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self._claimed = 0
        label.installEventFilter(self)

    def _line(self) -> int:
        return self._above + self.label.sizeHint().height()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(self.label.sizeHint().width(), self._line())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(self.label.minimumSizeHint().width(), self._claimed)

    def _claim(self) -> None:
        """Claim the line while the label shows in less room than it, give it back once the label is hidden."""
        claim = self._claimed
        if self.label.isHidden():
            claim = 0
        elif self.height() < self._line():
            claim = self._line()
        if claim != self._claimed:
            self._claimed = claim
            self.updateGeometry()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        self.label.setGeometry(self.rect().adjusted(0, self._above, 0, 0))
        self._claim()
        super().resizeEvent(event)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if watched is self.label and event.type() in (QEvent.Type.ShowToParent, QEvent.Type.HideToParent):
            self._claim()
        return super().eventFilter(watched, event)


class RowBox(QWidget):
    """Rules 1–3; `label` is reparented into the box (its objectName, text and signals stay its own)."""

    def __init__(self, label: QLabel, parent: QWidget):
        super().__init__(parent)
        self.label = label
        label.setParent(self)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self._narrowest = 0
        self._widest, self._least = -1, 0
        self._font, self._advances = QFont(), dict[str, int]()
        self._heights = dict[tuple[int, int, str], int]()
        self._widests = dict[str, int]()
        self.setVisible(not label.isHidden())
        label.installEventFilter(self)
        self._fit()

    def _narrowest_width(self) -> int:
        """The label's narrowest width, asked of QLabel (three text layouts, four times its height's cost) only when
        the widest word changed: a tick's new numbers seldom change it. Each word's width is measured once for the
        label's font (Rule 4), and a tick's words are looked up one by one: the words kept are never copied (a set
        difference with the kept words' keys copied all 2,048 of them, ~20 µs a row and a tick). The look-up is one
        `max` over the kept widths; only a word not met before is measured (a Python `max` a word was most of it)."""
        label = self.label
        font = label.font()
        if font != self._font or len(self._advances) > WORDS_KEPT:
            self._font, self._advances, self._heights, self._widests = font, {}, {}, {}
        text = label.text()
        widest = self._widests.get(text)
        if widest is None:
            widest = self._widest_word(text)
            if len(self._widests) >= HEIGHTS_KEPT:
                self._widests = {}
            self._widests[text] = widest
        if widest != self._widest:
            self._widest = widest
            self._least = max(label.minimumWidth(), label.minimumSizeHint().width())
        return self._least

    def _widest_word(self, text: str) -> int:
        """Rule 4: the width of the text's widest word, measuring only the words not met before."""
        advances, words = self._advances, text.split()
        try:
            return max(map(advances.__getitem__, words), default=0)
        except KeyError:
            measure = self.label.fontMetrics().horizontalAdvance
            for word in words:
                if word not in advances:
                    advances[word] = measure(word)
            return max(map(advances.__getitem__, words), default=0)

    def _needs(self) -> tuple[int, int]:
        """(the narrowest width, the height at this width) the label needs; a height or width the owner fixed
        stays as fixed."""
        label = self.label
        narrowest = self._narrowest_width()
        if label.minimumHeight() == label.maximumHeight():
            return narrowest, label.minimumHeight()
        wrapped = self._wrapped_height(max(self.width(), narrowest)) if label.wordWrap() else -1
        return narrowest, wrapped if wrapped >= 0 else label.sizeHint().height()  # -1: no text to wrap

    def _wrapped_height(self, width: int) -> int:
        """The label's height for `width`, kept for its text, that width and its text interaction (Rule 7)."""
        label = self.label
        key = (width, label.textInteractionFlags().value, label.text())
        height = self._heights.get(key)
        if height is None:
            if len(self._heights) >= HEIGHTS_KEPT:
                self._heights = {}
            height = self._heights[key] = label.heightForWidth(width)
        return height

    def _fit(self) -> None:
        """Rules 1–2: ask the layout for room only when what the label needs changed."""
        narrowest, height = self._needs()
        if narrowest != self._narrowest:
            self._narrowest = narrowest
            self.updateGeometry()
        if height != self.maximumHeight() or height != self.minimumHeight():
            self.setFixedHeight(height)
        if self.label.geometry() != self.rect():  # a hidden box resized in its own resize event hears no second one
            self.label.setGeometry(self.rect())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(self._narrowest, self.minimumHeight())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return self.sizeHint()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:  # the label's new text or font (Rule 1)
            self._fit()
        return super().event(event)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        self._fit()  # a text set while the box was hidden asked nothing of it (Qt posts no request to a hidden box)
        super().showEvent(event)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        if event.size().width() != event.oldSize().width():
            self._fit()
        self.label.setGeometry(self.rect())
        super().resizeEvent(event)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if watched is self.label and event.type() in (QEvent.Type.ShowToParent, QEvent.Type.HideToParent):
            self.setVisible(event.type() == QEvent.Type.ShowToParent)  # Rule 3
        return super().eventFilter(watched, event)
