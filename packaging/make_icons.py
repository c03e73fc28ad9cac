"""Render the app icon's PNG sizes from `resources/icons/gguf-budget.svg` with Qt's SVG renderer.

The SVG is the drawing; the PNGs (`gguf-budget-16.png` … `-256.png`) are committed renders of
it, so the window icon, the desktop entry and the About dialog need no SVG support at runtime.
`tests/test_packaging_desktop.py` re-renders the SVG and fails when a committed PNG is stale.

Run after editing the SVG:  python packaging/make_icons.py
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QGuiApplication, QImage, QPainter  # noqa: E402
from PySide6.QtSvg import QSvgRenderer  # noqa: E402

from gguf_budget.resources import ICON_SIZES, icon_path  # noqa: E402


def render(size: int) -> QImage:
    """The SVG drawn antialiased onto a transparent size×size image."""
    renderer = QSvgRenderer(str(icon_path()))
    if not renderer.isValid():
        raise ValueError(f"{icon_path()} is not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return image


def main() -> int:
    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # QPainter wants one alive
    for size in ICON_SIZES:
        out = icon_path(size)
        if not render(size).save(str(out), "PNG"):
            print(f"make_icons: could not write {out}", file=sys.stderr)
            return 1
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
