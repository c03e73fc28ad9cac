"""The folders a user added to the library, kept in one small JSON file the CLI and window share.

Rule 1: the file is `library.json` in the app's config folder (`core.paths.config_dir`); it holds `{"folders": [...]}`.
Rule 2: it is read like every small file (`core.regular_file`: a regular file of at most 1 MiB,
        never a FIFO or a device). A missing file is an empty list; an unreadable or malformed
        one is an empty list too (logged), never an error: a broken settings file must not stop the scan.
Rule 3: adding or removing a folder is a read-modify-write under the file's lock
        (`core.safe_write.locked`), the new list written by atomic replace: concurrent
        `library --add` calls lose nothing, and a reader never sees half a file.
Rule 4: an existing file that cannot be read is moved aside to `library.json.unreadable`
        (once; a later one replaces it) before a change writes a new file, so what the user
        had is kept for them to look at, never silently overwritten.
Rule 5: a folder is a non-empty path: an empty or blank one (`--add ""`) is refused, never
        read as the current folder.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Callable

from gguf_budget.core.errors import MissingFile, RequestError, UnreadableFile
from gguf_budget.core.paths import config_dir
from gguf_budget.core.regular_file import FileKind, read_json
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.safe_write import locked, replace_atomically

log = logging.getLogger(__name__)
MAX_FOLDERS = 256
ASIDE_SUFFIX = ".unreadable"


def config_file() -> Path:
    return config_dir() / "library.json"


def _read(path: Path) -> tuple[Path, ...]:
    """The folders in `path`; `MissingFile` or `UnreadableFile` when there are none to read (Rule 2)."""
    data = read_json(path, FileKind.CONFIG)
    folders = data.get("folders") if isinstance(data, dict) else None
    if not isinstance(folders, list) or not all(isinstance(f, str) for f in folders):
        raise UnreadableFile(f"{path}: 'folders' is not a list of folder names")
    return tuple(Path(f) for f in folders[:MAX_FOLDERS] if f.strip())  # Rule 5: "" is no folder


def read_folders(path: Path | None = None) -> tuple[Path, ...]:
    path = path or config_file()
    try:
        return _read(path)
    except MissingFile:
        return ()
    except UnreadableFile as e:
        log.warning("ignoring the library settings: %s", safe_text(e, 400))
        return ()


def write_folders(folders: tuple[Path, ...], path: Path | None = None) -> None:
    path = path or config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    # ASCII JSON: a folder name that is not UTF-8 is kept as its \udcXX escapes and read back whole.
    replace_atomically(path, json.dumps({"folders": [str(f) for f in folders]}, indent=2).encode("ascii"))


def _change(path: Path | None, change: Callable[[tuple[Path, ...]], tuple[Path, ...]]) -> tuple[Path, ...]:
    """Rules 3–4: read, change and write the list under its lock."""
    path = path or config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(path):
        try:
            current = _read(path)
        except MissingFile:
            current = ()
        except UnreadableFile as e:
            aside = path.with_name(path.name + ASIDE_SUFFIX)
            os.replace(path, aside)
            log.warning("the library settings could not be read (%s); moved aside to %s",
                        safe_text(e, 300), safe_text(aside, 300))
            current = ()
        updated = change(current)[:MAX_FOLDERS]
        write_folders(updated, path)
    return updated


def _folder(folder: Path | str) -> Path:
    """Rule 5 (a `Path("")` is already ".", so callers pass the text they were given)."""
    if not str(folder).strip():
        raise RequestError("a folder name cannot be empty")
    return Path(folder).expanduser().resolve()


def add_folder(folder: Path | str, path: Path | None = None) -> tuple[Path, ...]:
    new = _folder(folder)
    return _change(path, lambda current: current if new in current else (*current, new))


def remove_folder(folder: Path | str, path: Path | None = None) -> tuple[Path, ...]:
    gone = _folder(folder)
    return _change(path, lambda current: tuple(f for f in current if f != gone))
