"""The context tier strip: the full load at 4k … 128k tokens and at the largest that fits, one button a tier.

Rule 1: the words and figures are the core's (`core.explorer.ctx_tiers.tier_cells`, the numbers `fit --ctx N`
        prints): each button shows its ctx and peak RAM, its GPU layers and decode speed, coloured by its tier
        (fits, tight, won't); its tooltip adds the GPUs' memory and the first token's time.
Rule 2: the tier at the full load's ctx is checked; clicking a tier emits `ctxChosen(ctx)` — the window sends it
        to the session as `SetCtx`, the same typed change the ctx control sends — and the strip redraws from the
        view that comes back (a click alone checks nothing).
Rule 3: the strip keeps one row of buttons that share the width, so it never widens the window; it is hidden
        while there are no tiers (no model, or no machine yet).
Rule 4: new tiers reuse the buttons there are; a new count of tiers (the largest ctx that fits joins or leaves the
        strip during a ctx drag) makes or deletes only the buttons it adds or drops, and a button is polished again
        only when its tier changed. A new button is polished when shown, and seven new ones were a 70B ctx tick's
        slowest 5 %.
Rule 5: the buttons sit in a row of their own that fills the strip, which has no layout (`row_box.HintBox`): a
        button's new text asks the row for a new layout, and the strip asks the window for room only when the row's
        hints changed. The buttons' width is Ignored, so the hints change only with the buttons' height (their lines
        or font); a new text used to lay the whole window out again, on about a third of a 70B drag's ctx ticks.

Signals:
    ctxChosen(int): a tier was clicked.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QToolButton, QWidget

from gguf_budget.core.explorer.ctx_tiers import TierCell
from gguf_budget.gui.qt.named import named
from gguf_budget.gui.qt.row_box import HintBox
from gguf_budget.gui.qt.theme import tier_style


class TierStrip(HintBox):
    """Rules 1–5 (objectName `ctxTiers`; each button `ctxTier<ctx>`)."""

    ctxChosen = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ctxTiers")
        self._row = self.inner
        self._layout = QHBoxLayout(self._row)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(3)
        self._layout.addWidget(QLabel("Context:", self._row))
        self.setStyleSheet("QToolButton { padding: 1px 3px; border: 2px solid transparent; border-radius: 3px; }\n"
                           "QToolButton:checked { border-color: palette(highlight); }\n" + tier_style("QToolButton"))
        self._cells: tuple[TierCell, ...] = ()
        self.buttons: list[QToolButton] = []
        self.fit()
        self.hide()

    def show_tiers(self, cells: tuple[TierCell, ...]) -> None:
        """Draw `cells`; the same tiers are no change, and new ones reuse the buttons there are (a ctx tick that moves
        the largest ctx that fits used to delete and make every button: seven polished anew)."""
        if cells == self._cells:
            return
        if len(cells) != len(self.buttons):
            self._resize(len(cells))
        self._cells = cells
        for button, cell in zip(self.buttons, cells, strict=True):
            button.setObjectName(f"ctxTier{cell.ctx}")
            button.setText("\n".join(cell.lines))
            button.setToolTip(cell.tip)
            button.setChecked(cell.chosen)
            button.setProperty("ctx", cell.ctx)
            if button.property("tier") != cell.tier:
                button.setProperty("tier", cell.tier)
                button.style().unpolish(button)
                button.style().polish(button)
        self.setVisible(bool(cells))

    def _resize(self, n: int) -> None:
        """`n` buttons: the ones there are stay and only the difference is made or deleted (Rule 4)."""
        for button in self.buttons[n:]:
            self._layout.removeWidget(button)
            button.hide()  # deleted when the event loop next turns: until then it would still be drawn
            button.deleteLater()
        del self.buttons[n:]
        for _ in range(len(self.buttons), n):
            button = named(QToolButton(self._row), "ctxTier")
            button.setCheckable(True)
            button.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            button.clicked.connect(lambda _=False, b=button: self._clicked(b))
            self._layout.addWidget(button, 1)
            self.buttons.append(button)

    def _clicked(self, button: QToolButton) -> None:
        """Rule 2: the view decides what is checked."""
        ctx = int(button.property("ctx"))
        button.setChecked(any(c.chosen and c.ctx == ctx for c in self._cells))
        self.ctxChosen.emit(ctx)
