"""Help ▸ Glossary: every term the screens use, in plain words.

Rule 1: the text is the core's (`core.views.glossary.glossary_markdown`), the same Markdown
        docs/glossary.md holds; the dialog only renders it.
Rule 2: one dialog per window: the action raises the open one instead of stacking copies; a
        filter box narrows the list to the core's `matching` terms.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLineEdit, QMenu, QTextBrowser, QVBoxLayout, QWidget

from gguf_budget.core.views.glossary import glossary_markdown, matching

from gguf_budget.gui.qt.named import named


class GlossaryDialog(QDialog):
    """The glossary (objectName `glossaryDialog`); Close or Escape dismisses it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("glossaryDialog")
        self.setWindowTitle("Glossary")
        self.filter = named(QLineEdit(self, placeholderText="Find a term…", clearButtonEnabled=True),
                            "glossaryFilter")
        self.text = named(QTextBrowser(self), "glossaryText")
        self.text.setOpenExternalLinks(False)
        self.filter.textChanged.connect(self._filter)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.filter)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
        self._filter("")
        self.resize(640, 560)

    def _filter(self, typed: str) -> None:
        """Rule 2."""
        self.text.setMarkdown(glossary_markdown(matching(typed)))


def add_glossary(help_menu: QMenu) -> QAction:
    """Help ▸ Glossary, first in the menu (Rule 2: one dialog, raised again when open)."""
    action = QAction("&Glossary", help_menu)
    action.setObjectName("glossaryAction")
    action.setToolTip("Every term the screens use, in plain words")
    dialogs: list[GlossaryDialog] = []

    def show() -> None:
        if not dialogs:
            dialog = GlossaryDialog(help_menu.parentWidget())
            dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            dialog.destroyed.connect(dialogs.clear)
            dialogs.append(dialog)
        dialogs[0].show()
        dialogs[0].activateWindow()

    action.triggered.connect(show)
    actions = help_menu.actions()
    if actions:
        help_menu.insertAction(actions[0], action)
    else:
        help_menu.addAction(action)
    return action
