"""Qt started before the window's modules are imported, with the font database filled on a thread of its own.

Rule 1: `application()` makes the one `QApplication` (or returns the one there is) with the app's names and
        icon; a new one starts filling Qt's font database (fontconfig's list of every font installed) on a
        thread of its own, so the window's first text measure finds it filled instead of filling it then, on
        the GUI thread (Qt's font database is guarded by its own lock: a measure that comes first waits for
        the filling, never fills it again). The launcher calls it before it imports the window's ~300
        modules, which the filling overlaps.
Rule 2: this module imports only Qt, so the launcher can start Qt without the window.
Rule 3: the wheel guard (`wheel_guard` Rule 4) is the new application's style from the start, before any
        widget is polished, so installing it re-polishes nothing.
"""

from __future__ import annotations

import sys
import threading

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QApplication

from gguf_budget.gui.qt.app_icon import app_icon
from gguf_budget.gui.qt.wheel_guard import install_wheel_guard

FONT_THREAD = "font-database"


def application() -> QApplication:
    """Rule 1: the application, made once."""
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication([sys.argv[0]])
    if existing is None:
        threading.Thread(target=QFontDatabase.families, name=FONT_THREAD, daemon=True).start()
        install_wheel_guard()
    app.setOrganizationName("gguf-budget")
    app.setApplicationName("gguf-budget")
    app.setApplicationDisplayName("GGUF Budget Explorer")
    app.setWindowIcon(app_icon())
    return app
