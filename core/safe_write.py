"""Writes that cannot lose data: a lock around read-modify-write, atomic replace, exclusive new names.

Rule 1: a read-modify-write of a shared file (the library's folder list, the evidence store)
        runs under `locked(path)`: an exclusive `flock` on `PATH.lock` beside it (on Windows,
        `msvcrt.locking` on its first byte), so two processes never interleave and lose an update.
        The lock file stays; it is empty and harmless.
Rule 2: a file is replaced whole through a temporary file of a unique name in the same folder
        (`mkstemp`), flushed to disk, then `os.replace`d: a reader sees the old file or the new
        one, never half of one, and two writers never share a scratch file.
Rule 3: a new file that must not overwrite another (an evidence log saved in the same second as
        another) is created exclusively (`O_EXCL`), its stem numbered `-2`, `-3`, … until free.
Rule 4: nothing is swallowed: an `OSError` reaches the caller, which says what could not be
        written; a scratch file left by a failed write is removed.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Iterator

MAX_NUMBERED = 10_000
"""Rule 3: a stem already taken this many times means something else is wrong."""


@contextlib.contextmanager
def locked(path: str | os.PathLike[str]) -> Iterator[None]:
    """Rule 1: hold the exclusive lock of `path` (its folder must exist) for the `with` block."""
    lock_path = os.fspath(path) + ".lock"
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        _lock(fd)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _lock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # type: ignore[attr-defined,unused-ignore]
        return
    fcntl.flock(fd, fcntl.LOCK_EX)


def replace_atomically(path: str | os.PathLike[str], data: bytes) -> None:
    """Rule 2: `path` now holds `data`, or (on an `OSError`) still holds what it held."""
    target = Path(path)
    fd, scratch = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(scratch, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(scratch)
        raise


def create_exclusive(folder: Path, stem: str, suffix: str, data: bytes) -> Path:
    """Rule 3: a new file `folder/STEM[-n]SUFFIX` holding `data`; the path it got."""
    for n in range(1, MAX_NUMBERED + 1):
        path = folder / (f"{stem}{suffix}" if n == 1 else f"{stem}-{n}{suffix}")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o644)
        except FileExistsError:
            continue
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(path)
            raise
        return path
    raise FileExistsError(f"{folder / stem}{suffix}: {MAX_NUMBERED} files of that name already")
