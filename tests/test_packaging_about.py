"""The About dialog: the one version, the app icon, and a licence for every shipped component."""

from __future__ import annotations

import re
from importlib import metadata

from packaging.requirements import Requirement
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QTableWidget

from gguf_budget.core.version import __version__
from gguf_budget.gui.qt.about_dialog import COMPONENTS, AboutDialog, show_about
from gguf_budget.gui.qt.app_icon import app_icon
from gguf_budget.resources import ICON_SIZES

REQUIRED_LICENCES = {
    "PySide6-Essentials": "LGPL-3.0-only",
    "pyqtgraph": "MIT",
    "gguf": "MIT",
    "psutil": "BSD-3-Clause",
    "nvidia-ml-py": "BSD-3-Clause",
    "numpy": "BSD-3-Clause",
}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_closure(dist: str) -> set[str]:
    """Every distribution `dist` needs at run time (no extras), by normalized name."""
    seen: set[str] = set()
    todo = [dist]
    while todo:
        for text in metadata.requires(todo.pop()) or []:
            req = Requirement(text)
            name = _normal(req.name)
            if (req.marker is None or req.marker.evaluate({"extra": ""})) and name not in seen:
                seen.add(name)
                todo.append(name)
    return seen


def table_rows(dialog: AboutDialog) -> list[tuple[str, str, str]]:
    table = dialog.findChild(QTableWidget, "aboutLicences")
    return [tuple(table.item(r, c).text() for c in range(3)) for r in range(table.rowCount())]


def test_dialog_shows_the_one_version_and_the_icon(qtbot):
    dialog = AboutDialog()
    qtbot.addWidget(dialog)
    assert dialog.objectName() == "aboutDialog"
    assert dialog.findChild(QLabel, "aboutVersion").text() == f"Version {__version__}"
    assert not dialog.findChild(QLabel, "aboutIcon").pixmap().isNull()


def test_every_runtime_dependency_is_listed_with_a_licence():
    listed = {_normal(c.distribution) for c in COMPONENTS if c.distribution}
    missing = runtime_closure("gguf-budget") - listed
    assert not missing, f"add to about_dialog.COMPONENTS: {sorted(missing)}"
    assert all(c.licence for c in COMPONENTS)


def test_the_named_licences_are_the_ones_shown(qtbot):
    dialog = AboutDialog()
    qtbot.addWidget(dialog)
    by_dist = {c.distribution: row for c, row in zip(COMPONENTS, table_rows(dialog), strict=True)}
    for dist, licence in REQUIRED_LICENCES.items():
        name, version, shown = by_dist[dist]
        assert shown == licence
        assert version == metadata.version(dist)
    assert "LGPL v3" in dialog.findChild(QLabel, "aboutQtNotice").text()


def test_close_button_dismisses_the_non_blocking_dialog(qtbot):
    dialog = show_about()
    qtbot.addWidget(dialog)
    qtbot.waitExposed(dialog)
    close = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Close)
    with qtbot.waitSignal(dialog.finished) as finished:
        qtbot.mouseClick(close, Qt.MouseButton.LeftButton)
    assert finished.args == [QDialog.DialogCode.Rejected]
    assert not dialog.isVisible()


def test_app_icon_has_every_committed_size(qtbot):
    sizes = {(s.width(), s.height()) for s in app_icon().availableSizes()}
    assert sizes == {(n, n) for n in ICON_SIZES}
