"""Help ▸ About: what the app is, its version, and the licences of everything it ships with.

Rule 1: the version comes from `gguf_budget.core.version`, the one place it is written.
Rule 2: every runtime dependency — the closure of the wheel's requirements, which is also what
        the desktop bundle freezes — is listed with its licence (SPDX); a test fails when a
        new dependency is missing from `COMPONENTS`.
Rule 3: Qt and PySide6 are used under the LGPL-3.0 as shared libraries; the dialog says so
        and says where their source is.
Rule 4: versions shown are the installed ones (`importlib.metadata`); a missing record reads
        "not recorded" instead of failing. `importlib.metadata` (with the email package, ~9 ms) is
        imported when the dialog asks, not with the window that offers it.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass

from PySide6.QtCore import Qt, qVersion
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gguf_budget.core.version import __version__

from gguf_budget.gui.qt.app_icon import app_icon

APP_NAME = "GGUF Budget Explorer"
DESCRIPTION = (
    "Reads only the header of a GGUF model file and tells you whether the model fits a RAM "
    "budget or your machine, with an itemized ledger of every byte. File size, admission "
    "estimates and runtime evidence are kept apart: an estimate is never shown as evidence."
)
QT_NOTICE = (
    "Qt and PySide6 are used under the GNU LGPL v3 as shared libraries, which you may replace "
    'with your own build. Source: <a href="https://code.qt.io">code.qt.io</a>. '
    "Running on Qt {qt}."
)


@dataclass(frozen=True)
class Component:
    """A shipped third-party component; `distribution` None means the Python runtime itself."""

    name: str
    distribution: str | None
    licence: str


COMPONENTS: tuple[Component, ...] = (
    Component("Qt 6 / PySide6", "PySide6-Essentials", "LGPL-3.0-only"),
    Component("Shiboken 6", "shiboken6", "LGPL-3.0-only"),
    Component("pyqtgraph", "pyqtgraph", "MIT"),
    Component("gguf (llama.cpp gguf-py)", "gguf", "MIT"),
    Component("psutil", "psutil", "BSD-3-Clause"),
    Component("nvidia-ml-py (pynvml)", "nvidia-ml-py", "BSD-3-Clause"),
    Component("NumPy", "numpy", "BSD-3-Clause"),
    Component("PyYAML", "PyYAML", "MIT"),
    Component("tqdm", "tqdm", "MPL-2.0 AND MIT"),
    Component("Requests", "requests", "Apache-2.0"),
    Component("urllib3", "urllib3", "MIT"),
    Component("idna", "idna", "BSD-3-Clause"),
    Component("charset-normalizer", "charset-normalizer", "MIT"),
    Component("certifi", "certifi", "MPL-2.0"),
    Component("colorama", "colorama", "BSD-3-Clause"),
    Component("HTTPX", "httpx", "BSD-3-Clause"),
    Component("HTTPX 2 (huggingface_hub's client)", "httpx2", "BSD-3-Clause"),
    Component("HTTP Core", "httpcore", "BSD-3-Clause"),
    Component("HTTP Core 2", "httpcore2", "BSD-3-Clause"),
    Component("h11", "h11", "MIT"),
    Component("AnyIO", "anyio", "MIT"),
    Component("truststore", "truststore", "MIT"),
    Component("huggingface_hub", "huggingface-hub", "Apache-2.0"),
    Component("hf-xet", "hf-xet", "Apache-2.0"),
    Component("fsspec", "fsspec", "BSD-3-Clause"),
    Component("filelock", "filelock", "MIT"),
    Component("Click", "click", "BSD-3-Clause"),
    Component("packaging", "packaging", "Apache-2.0 OR BSD-2-Clause"),
    Component("platformdirs", "platformdirs", "MIT"),
    Component("typing_extensions", "typing-extensions", "PSF-2.0"),
    Component("Python", None, "PSF-2.0"),
)


def installed_version(component: Component) -> str:
    from importlib import metadata  # Rule 4

    if component.distribution is None:
        return platform.python_version()
    try:
        return metadata.version(component.distribution)
    except metadata.PackageNotFoundError:
        return "not recorded"


def _licence_table() -> QTableWidget:
    table = QTableWidget(len(COMPONENTS), 3)
    table.setObjectName("aboutLicences")
    table.setHorizontalHeaderLabels(["Component", "Version", "Licence"])
    table.verticalHeader().setVisible(False)
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 8)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
    for row, component in enumerate(COMPONENTS):
        for col, text in enumerate((component.name, installed_version(component), component.licence)):
            table.setItem(row, col, QTableWidgetItem(text))
    table.resizeColumnsToContents()
    table.horizontalHeader().setStretchLastSection(True)
    return table


def _label(text: str, name: str, *, rich: bool = False) -> QLabel:
    label = QLabel(text)
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
    label.setOpenExternalLinks(rich)
    return label


class AboutDialog(QDialog):
    """The About box (objectName `aboutDialog`); Close or Escape dismisses it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("aboutDialog")
        self.setWindowTitle(f"About {APP_NAME}")
        self.setWindowIcon(app_icon())
        layout = QVBoxLayout(self)
        layout.addLayout(self._header())
        layout.addWidget(_label(DESCRIPTION, "aboutDescription"))
        layout.addWidget(_label(f"{APP_NAME} is released under the MIT licence. It ships with:", "aboutLicence"))
        layout.addWidget(_licence_table())
        layout.addWidget(_label(QT_NOTICE.format(qt=qVersion()), "aboutQtNotice", rich=True))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(560, 620)

    def _header(self) -> QHBoxLayout:
        icon = QLabel()
        icon.setObjectName("aboutIcon")
        icon.setPixmap(app_icon().pixmap(64, 64))
        title = _label(f"<b style='font-size: 16pt'>{APP_NAME}</b>", "aboutTitle", rich=True)
        version = _label(f"Version {__version__}", "aboutVersion")
        column = QVBoxLayout()
        column.addWidget(title)
        column.addWidget(version)
        row = QHBoxLayout()
        row.addWidget(icon)
        row.addLayout(column, 1)
        return row


def show_about(parent: QWidget | None = None) -> AboutDialog:
    """Open the About box window-modally without blocking; it deletes itself when closed."""
    dialog = AboutDialog(parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog
