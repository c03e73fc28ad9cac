"""The window's log file, and Help ▸ Show log folder.

Rule 1: the log goes to LOG_NAME in `default_log_folder()`: Qt's StateLocation for the app
        (~/.local/state/gguf-budget on Linux) where this Qt has one, else AppLocalDataLocation.
        Tests and callers may pass any other folder.
Rule 2: the file rotates at MAX_LOG_BYTES and keeps BACKUP_LOGS old files, so it never grows
        without bound. It takes records from INFO up, whatever --log-level says for stderr,
        so an internal error's traceback is always there to send with a bug report.
Rule 3: a folder that cannot be written costs the log file, not the app: one warning (on
        stderr, through the app's logger) and the window opens without it.
Rule 4: Help ▸ "Show log folder" opens that folder in the desktop's file manager through an
        injected opener (`QDesktopServices.openUrl` unless a test passes its own).
"""

from __future__ import annotations

import logging
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QStandardPaths, QUrl
from PySide6.QtGui import QAction, QDesktopServices
from PySide6.QtWidgets import QMenu

APP_LOGGER = "gguf_budget"
LOG_NAME = "gguf-budget.log"
MAX_LOG_BYTES = 1 << 20
BACKUP_LOGS = 3
FILE_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(threadName)s]: %(message)s"
UrlOpener = Callable[[QUrl], object]

log = logging.getLogger(__name__)


def default_log_folder() -> Path:
    """Rule 1: the platform's state folder for this app (the QApplication names it)."""
    locations = QStandardPaths.StandardLocation
    where = getattr(locations, "StateLocation", locations.AppLocalDataLocation)
    return Path(QStandardPaths.writableLocation(where))


def start_log_file(folder: Path) -> RotatingFileHandler | None:
    """Rules 2-3: log from INFO up to `folder`/LOG_NAME; None when the folder cannot be written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handler = RotatingFileHandler(folder / LOG_NAME, maxBytes=MAX_LOG_BYTES, backupCount=BACKUP_LOGS,
                                      encoding="utf-8")
    except OSError as e:
        log.warning("no log file in %s: %s", folder, e.strerror or e)
        return None
    handler.setLevel(logging.INFO)
    handler.setFormatter(logging.Formatter(FILE_FORMAT))
    logger = logging.getLogger(APP_LOGGER)
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    log.info("logging to %s", handler.baseFilename)
    return handler


def stop_log_file(handler: RotatingFileHandler | None) -> None:
    """Detach and close a handler `start_log_file` made (the window has closed)."""
    if handler is not None:
        logging.getLogger(APP_LOGGER).removeHandler(handler)
        handler.close()


def add_show_log_folder(help_menu: QMenu, folder: Path, opener: UrlOpener = QDesktopServices.openUrl) -> QAction:
    """Rule 4: Help ▸ Show log folder, opening `folder` with `opener`."""
    action = QAction("Show &log folder", help_menu)
    action.setObjectName("showLogFolderAction")
    action.setToolTip(str(folder))
    action.triggered.connect(lambda: opener(QUrl.fromLocalFile(str(folder))))
    help_menu.addAction(action)
    return action
