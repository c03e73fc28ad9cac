"""The application icon, built from the committed PNG renders in `resources/icons/`.

Rule: one pixmap per rendered size (16 … 256 px), so Qt picks a hand-checked render for
title bars, task bars and the About dialog without needing the SVG icon-engine plugin.
"""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtGui import QIcon

from gguf_budget.resources import ICON_SIZES, icon_path


def app_icon() -> QIcon:
    """The window icon; call `QApplication.setWindowIcon(app_icon())` once at start-up."""
    icon = QIcon()
    for size in ICON_SIZES:
        icon.addFile(str(icon_path(size)), QSize(size, size))
    return icon
