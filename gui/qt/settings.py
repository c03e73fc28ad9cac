"""What the window remembers between runs (QSettings): the knobs, the recent files, the geometry.

Rule 1: the window's settings object is injected, so tests (and `--screenshot`) use their
        own file and never read or write the user's.
Rule 2: every value restored from disk is validated by the core (`explorer.persist`: sizes
        and counts against the core's ranges, knobs against their words, recent entries as
        short paths) and geometry as bytes Qt accepts; an invalid one falls back to its default
        with a log line. Start-up never fails because of settings. This module only stores.
Rule 3: budget, ctx and ctx cap are remembered per model (`explorer.session` Rule 3), under
        `models/<key>.budget` (`.ctx`, `.ctx_cap`, `.used`: flat keys, so the file keeps one
        group per kind); a model never remembered opens at this machine's usable RAM.
Rule 4: the user's settings file is an INI file at a path we compute, looked at before Qt
        opens it (Qt would block forever reading a FIFO): anything but a regular file (or no
        file), or a path that is not UTF-8 (Qt would drop those bytes and open another file), is
        set aside for this run — settings then live in a scratch file and are not remembered —
        and the log says why.
Rule 5: we read it first, and Qt never reads what it could choke on (`core.ini_screen`): a key
        the app never writes (`WRITTEN`), a typed value (`@Variant(` nested 20,000 deep crashed
        Qt at every start), a line over 256 KiB, a quote left open, or a file over
        MAX_SETTINGS_BYTES. Such a file is repaired once: the valid lines are written back (atomically), the whole original is kept
        beside it as `…conf.refused` (replacing an older one), and one log line says what was
        refused. The next start finds a clean file and changes nothing. Where the folder cannot
        be written, this run uses a scratch file, as in Rule 4.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import stat
import tempfile
from dataclasses import fields
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings, QStandardPaths
from PySide6.QtWidgets import QWidget

from gguf_budget.core.errors import UnreadableFile
from gguf_budget.core.ini_screen import screen_ini
from gguf_budget.core.regular_file import open_regular
from gguf_budget.core.safe_write import replace_atomically
from gguf_budget.core.explorer.persist import (
    MODEL_FIELDS, MODEL_KEY, RECENT_LIMIT, RESTORE, ExplorerSettings, memory_dict, memory_from, settings_dict,
    settings_from,
)
from gguf_budget.core.explorer.session import ModelMemory
from gguf_budget.core.safe_text import safe_text
from gguf_budget.gui.qt.workers.at_end import at_end

MAX_GEOMETRY_BYTES = 4096
MAX_SETTINGS_BYTES = 1 << 20
REPAIR_READ_BYTES = 16 << 20
"""Rule 5: an oversized file is repaired from its first 16 MiB (the whole original is kept aside)."""
REFUSED_SUFFIX = ".refused"
APP_FOLDER = "gguf-budget"
SETTINGS_FILE = "gguf-budget.conf"
GEOMETRY_KEY = "window/geometry"
_GROUP = "explorer"
_MODELS = "models"
LEGACY_KEYS = ("budget_bytes", "unlimited", "ctx", "ctx_cap")
"""Rule 3: kept globally before budget, ctx and cap were remembered per model; read by nothing, removed on save."""
log = logging.getLogger(__name__)


def _refused(key: str, raw: Any, default: Any) -> None:
    log.warning("settings: %s=%s is not valid; using %r instead", key, safe_text(repr(raw), 80), default)


def load_settings(store: QSettings) -> ExplorerSettings:
    """The global knobs in `store`, each validated (Rule 2)."""
    store.beginGroup(_GROUP)
    raw = {key: store.value(key) for key in RESTORE}
    store.endGroup()
    settings, refused = settings_from(raw)
    for r in refused:
        _refused(f"{_GROUP}/{r.key}", r.raw, r.default)
    return settings


def load_memory(store: QSettings) -> ModelMemory:
    """The budget, ctx and cap remembered per model (Rule 3), each row validated."""
    store.beginGroup(_MODELS)
    raw: dict[str, dict[str, Any]] = {}
    for name in store.childKeys():
        key, _, field = name.partition(".")
        raw.setdefault(key, {})[field] = store.value(name)
    store.endGroup()
    memory, refused = memory_from(raw)
    for r in refused:
        _refused(r.key, r.raw, "nothing remembered for that model")
    return memory


def restore_geometry(store: QSettings, window: QWidget) -> None:
    """Put the window where it was; bytes Qt cannot read leave it where it is (Rule 2)."""
    raw = store.value(GEOMETRY_KEY)
    if raw is None:
        return
    geometry = raw if isinstance(raw, QByteArray) else QByteArray(raw) if isinstance(raw, bytes) else None
    if geometry is None or geometry.size() > MAX_GEOMETRY_BYTES or not window.restoreGeometry(geometry):
        _refused(GEOMETRY_KEY, raw, "the default size")


def settings_path() -> Path:
    """Where the user's settings live: `<config>/gguf-budget/gguf-budget.conf` (XDG on Linux)."""
    config = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericConfigLocation)
    return Path(config) / APP_FOLDER / SETTINGS_FILE


WRITTEN: tuple[re.Pattern[str], ...] = (
    re.compile(rf"{_GROUP}/(?:{'|'.join((*(f.name for f in fields(ExplorerSettings)), *LEGACY_KEYS))})"),
    re.compile(rf"{_MODELS}/{MODEL_KEY.pattern}\.(?:{'|'.join(MODEL_FIELDS)})"),
    re.compile(re.escape(GEOMETRY_KEY)),
    re.compile(r"measure/llama_path"),  # gui.qt.evidence.evidence_link: the llama.cpp the user chose
    re.compile(r"dialogs/[a-z_]{1,32}"),  # gui.qt.file_dialogs: the last folder per kind of file
)
"""Rule 5: every key the app writes. A module that writes a new key adds its pattern here
(tests/test_hostile_settings.py holds the window's own keys to this list)."""
TYPED = {GEOMETRY_KEY: ("@ByteArray(",)}


def is_written(key: str) -> bool:
    return any(p.fullmatch(key) for p in WRITTEN)


def _unusable(path: Path) -> str | None:
    """Why Qt must not open `path` (Rule 4), or None when it may."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        return e.strerror or type(e).__name__
    if not stat.S_ISREG(info.st_mode):
        return "it is not a regular file"
    return None


def _qt_can_name(path: Path) -> bool:
    """Rule 4: Qt takes paths as text; a byte that is not UTF-8 (a lone surrogate here) would be dropped."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _scratch(path: Path, why: str) -> QSettings:
    log.warning("settings: %s cannot be used (%s); settings are not remembered this run", safe_text(path, 300), why)
    scratch = tempfile.mkdtemp(prefix="gguf-budget-settings-")
    at_end(partial(shutil.rmtree, scratch, True))
    return QSettings(str(Path(scratch) / SETTINGS_FILE), QSettings.Format.IniFormat)


def _in_qts_own_words(path: Path) -> tuple[str, ...]:
    """Rule 5: the repaired file as Qt writes what it read from it (its quoting, `@String(…)` for text with
    control characters, longer escapes), screened again, so the next start finds nothing to repair.

    Qt reads only screened text here. Returns the lines refused in Qt's own form (dropped too)."""
    store = QSettings(str(path), QSettings.Format.IniFormat)
    for key in store.allKeys():
        store.setValue(key, store.value(key))
    store.sync()
    del store
    with open_regular(str(path), UnreadableFile) as f:
        again = screen_ini(f.read(REPAIR_READ_BYTES).decode("utf-8", errors="replace"), is_written, TYPED)
    if again.refused:
        replace_atomically(path, again.text.encode("utf-8"))
    return again.refused


def _repaired(path: Path) -> str | None:
    """Rule 5: screen the file and repair it once; None when Qt may read it now, else why it cannot be used."""
    try:
        with open_regular(str(path), UnreadableFile) as f:
            data = f.read(REPAIR_READ_BYTES + 1)
    except UnreadableFile as e:
        return None if not os.path.lexists(path) else str(e)
    except OSError as e:
        return e.strerror or type(e).__name__
    oversized = len(data) > MAX_SETTINGS_BYTES
    if len(data) > REPAIR_READ_BYTES:
        data = data[:data.rfind(b"\n", 0, REPAIR_READ_BYTES) + 1]  # never a value cut in half
    screened = screen_ini(data.decode("utf-8", errors="replace"), is_written, TYPED)
    if not screened.refused and not oversized:
        return None
    aside = path.with_name(path.name + REFUSED_SUFFIX)
    try:
        os.replace(path, aside)
        replace_atomically(path, screened.text.encode("utf-8"))
        refused = (*screened.refused, *_in_qts_own_words(path))
    except OSError as e:
        return f"it needs repair, and {path.parent} cannot be written: {e.strerror or e}"
    reasons = [*(["it was larger than 1 MiB"] if oversized else []), *refused]
    log.warning("settings: %s repaired — %d line(s) refused (%s); the original is kept in %s",
                safe_text(path, 300), len(refused), safe_text("; ".join(reasons[:3]), 300),
                safe_text(aside, 300))
    return None


def user_settings(path: Path | None = None) -> QSettings:
    """The user's settings, repaired when Rule 5 asks, or a scratch store for this run when unusable (Rule 4)."""
    path = path or settings_path()
    if not _qt_can_name(path):
        return _scratch(path, "its path is not UTF-8, and Qt would open another file")
    for candidate in (path, path.with_name(path.name + ".lock")):
        why = _unusable(candidate)
        if why is not None:
            return _scratch(candidate, why)
    why = _repaired(path)
    if why is not None:
        return _scratch(path, why)
    return QSettings(str(path), QSettings.Format.IniFormat)


def save_settings(store: QSettings, settings: ExplorerSettings, memory: ModelMemory) -> None:
    """The global knobs and the per-model memory (Rule 3); the keys older versions kept globally go."""
    store.beginGroup(_GROUP)
    for key in LEGACY_KEYS:
        store.remove(key)
    for key, value in settings_dict(settings).items():
        if value is None:
            store.remove(key)
        else:
            store.setValue(key, list(value) if isinstance(value, tuple) else value)
    store.endGroup()
    store.remove(_MODELS)
    store.beginGroup(_MODELS)
    for key, row in memory_dict(memory).items():
        for name, value in row.items():
            store.setValue(f"{key}.{name}", value)
    store.endGroup()
    store.sync()


def save_geometry(store: QSettings, window: QWidget) -> None:
    store.setValue(GEOMETRY_KEY, window.saveGeometry())


def with_recent(recent: tuple[str, ...], path: str) -> tuple[str, ...]:
    """`path` first, no duplicates, at most RECENT_LIMIT entries."""
    return (path, *(p for p in recent if p != path))[:RECENT_LIMIT]
