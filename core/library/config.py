"""The folders a user added to the library, kept in one small JSON file the CLI and window share.

Rule 1: the file is `library.json` in the app's config folder (`core.paths.config_dir`); it holds `{"folders": [...]}`.
Rule 2: a missing, unreadable or malformed file is an empty list (logged), never an error: a broken
        settings file must not stop the scan. Writes replace the file whole.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from gguf_budget.core.paths import config_dir

log = logging.getLogger(__name__)
MAX_FOLDERS = 256


def config_file() -> Path:
    return config_dir() / "library.json"


def read_folders(path: Path | None = None) -> tuple[Path, ...]:
    path = path or config_file()
    try:
        folders = json.loads(path.read_text(encoding="utf-8"))["folders"]
    except FileNotFoundError:
        return ()
    except (OSError, ValueError, KeyError, TypeError) as e:
        log.warning("ignoring the library settings in %s: %s", path, e)
        return ()
    if not isinstance(folders, list) or not all(isinstance(f, str) for f in folders):
        log.warning("ignoring the library settings in %s: folders is not a list of strings", path)
        return ()
    return tuple(Path(f) for f in folders[:MAX_FOLDERS])


def write_folders(folders: tuple[Path, ...], path: Path | None = None) -> None:
    path = path or config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(path.name + ".tmp")
    scratch.write_text(json.dumps({"folders": [str(f) for f in folders]}, indent=2), encoding="utf-8")
    scratch.replace(path)


def add_folder(folder: Path, path: Path | None = None) -> tuple[Path, ...]:
    current = read_folders(path)
    folder = folder.expanduser().resolve()
    updated = current if folder in current else (*current, folder)
    write_folders(updated, path)
    return updated


def remove_folder(folder: Path, path: Path | None = None) -> tuple[Path, ...]:
    folder = folder.expanduser().resolve()
    updated = tuple(f for f in read_folders(path) if f != folder)
    write_folders(updated, path)
    return updated
