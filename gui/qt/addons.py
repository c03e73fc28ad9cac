"""What extends the window: the add-ons, installed on a built window through its host protocols.

Rule 1: `install_addons` is the one place that knows every add-on: it installs the what-if, library,
        Quants and runtime-evidence add-ons (Quants puts its switch in the what-if View menu), adds
        Help ▸ Glossary, Help ▸ Show log folder and View ▸ calibration, watches the open model's file
        (File ▸ Reload) and reports uncaught errors (`error_report`). Nothing else imports the add-ons.
Rule 2: an add-on installed after a model opened shows that model as if it had been there when it opened
        (the window's first plan is drawn before the add-ons install, `app` Rule 6).
Rule 3: only the composition root (`app`) imports this module, and the interactive run only once its first
        plan is painted: these modules cost ~0.1 s of a launch.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from PySide6.QtGui import QDesktopServices

from gguf_budget.core import ModelSpec, load_model
from gguf_budget.gui.qt.error_report import ErrorReport
from gguf_budget.gui.qt.evidence.evidence_link import EvidenceLink, install_evidence
from gguf_budget.gui.qt.file_watch import install_file_watch
from gguf_budget.gui.qt.glossary_dialog import add_glossary
from gguf_budget.gui.qt.library.wiring import Library, install_library
from gguf_budget.gui.qt.log_file import LOG_NAME, UrlOpener, add_show_log_folder, default_log_folder
from gguf_budget.gui.qt.machine.calibration_dialog import add_calibration
from gguf_budget.gui.qt.main_window import MainWindow
from gguf_budget.gui.qt.quants.wiring import Quants, install_quants
from gguf_budget.gui.qt.whatif.wiring import WhatIf, install_whatif


@dataclass(frozen=True)
class Explorer:
    """The app as it is composed: the window and the add-ons installed on it."""

    window: MainWindow
    whatif: WhatIf
    library: Library
    quants: Quants
    evidence: EvidenceLink
    errors: ErrorReport


def install_addons(
    window: MainWindow,
    *,
    compare_backend: Callable[[str], ModelSpec] = load_model,
    log_folder: Path | None = None,
    open_url: UrlOpener = QDesktopServices.openUrl,
    library_home: Path | None = None,
    library_config: Path | None = None,
    header_cache: Path | None = None,
) -> Explorer:
    """Rule 1: every add-on on `window`; Help ▸ Show log folder opens `log_folder`, or the platform's."""
    whatif = install_whatif(window, compare_backend)
    library = install_library(window, home=library_home, config_file=library_config, cache_root=header_cache)
    quants = install_quants(window, whatif.view_menu)
    evidence = install_evidence(window)
    folder = log_folder or default_log_folder()
    add_show_log_folder(window.help_menu, folder, open_url)
    add_glossary(window.help_menu)
    add_calibration(window.view_menu, window.refresh_speed_figures, window.show_status)
    install_file_watch(window, window.file_menu.menu, window.file_menu.recent_menu.menuAction())
    window.offer_ways_in()
    return Explorer(window, whatif, library, quants, evidence, ErrorReport(window, folder / LOG_NAME))
