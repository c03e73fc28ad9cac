"""Is the model on screen still the file on disk? Its files' identities when read, against now.

Rule 1: a file's identity is what `stat` says about the file the path names now: device, inode,
        size and modification time (ns). Writing in place changes the size or the time; saving
        by rename (how downloaders and editors replace a file) changes the inode.
Rule 2: a model is all its shards; it is DELETED when any shard's path names no regular file
        (gone, moved, or now a folder or a FIFO), else REPLACED when any identity differs, else
        UNCHANGED.
Rule 3: only `stat` — nothing is opened or read, so checking is cheap enough for every focus
        change and safe on any path.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Sequence

from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.vocab import TextEnum


@dataclass(frozen=True)
class FileIdentity:
    device: int
    inode: int
    size: int
    mtime_ns: int


class FileChange(TextEnum):
    UNCHANGED = "unchanged"
    DELETED = "deleted"
    REPLACED = "replaced"


def file_identity(path: str) -> FileIdentity | None:
    """Rule 1; None when the path names no regular file now."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return FileIdentity(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def model_identity(paths: Sequence[str]) -> tuple[FileIdentity | None, ...]:
    """Every shard's identity, in order."""
    return tuple(file_identity(p) for p in paths)


def model_change(paths: Sequence[str], when_read: tuple[FileIdentity | None, ...]) -> FileChange:
    """Rule 2: how the files at `paths` differ now from their identities `when_read`."""
    now = model_identity(paths)
    if any(identity is None for identity in now):
        return FileChange.DELETED
    return FileChange.UNCHANGED if now == when_read else FileChange.REPLACED


def change_text(path: str, change: FileChange) -> str:
    """What the window says, the path escaped (`safe_text`)."""
    shown = safe_text(path, 300)
    if change is FileChange.DELETED:
        return (f"The open model's file is gone (deleted or moved): {shown}. The plan on screen is of the file as "
                "it was read; File ▸ Reload opens it again once it is back.")
    return (f"The open model's file changed on disk since it was read: {shown}. The plan on screen is of the old "
            "file; File ▸ Reload plans the new one.")
