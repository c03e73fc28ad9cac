"""A model file as a menu shows it: its name, then its folder (home as ~), so two files of one
name in different folders can be told apart (Open Recent).

Rule 1: "name — folder", the folder under the user's home written as ~/…; both through
        `safe_text` (a file name is untrusted text).
"""

from __future__ import annotations

from pathlib import PurePath

from gguf_budget.core.safe_text import safe_text

NAME_LIMIT, FOLDER_LIMIT = 80, 120


def file_label(path: str, home: str) -> str:
    """Rule 1."""
    p = PurePath(path)
    folder = p.parent
    try:
        shown = "~/" + folder.relative_to(home).as_posix() if folder != PurePath(home) else "~"
    except ValueError:
        shown = folder.as_posix()
    shown = shown.removesuffix("/.")
    return f"{safe_text(p.name, NAME_LIMIT)} — {safe_text(shown, FOLDER_LIMIT)}"
