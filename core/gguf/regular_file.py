"""Only regular files are models: looked at before opening, opened without blocking, refused in one line.

Rule 1: a path is stat-ed (following symlinks) before it is opened; a FIFO, a device, a
        socket or a folder is refused without being opened, so a named pipe can never block
        a reader and a device never sees an `open`.
Rule 2: the open itself is non-blocking and the descriptor is fstat-ed again, so a file
        swapped for a FIFO between the two steps is still refused.
Rule 3: every `OSError` becomes a `ModelLoadError` naming the path and the reason in words
        (`_REASONS`): a symlink loop, a name too long, a folder without search permission
        each say so; a missing file is "no such file".
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

from gguf_budget.core.errors import ModelLoadError

_REASONS: dict[int, str] = {
    errno.ENOENT: "no such file",
    errno.ENOTDIR: "a part of the path is not a folder",
    errno.ELOOP: "too many levels of symbolic links (a symlink loop?)",
    errno.ENAMETOOLONG: "file name too long",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EISDIR: "it is a folder, not a file",
}

_KINDS: tuple[tuple[int, str], ...] = (
    (stat.S_IFDIR, "a folder"),
    (stat.S_IFIFO, "a FIFO (named pipe)"),
    (stat.S_IFCHR, "a character device"),
    (stat.S_IFBLK, "a block device"),
    (stat.S_IFSOCK, "a socket"),
)

_MISSING = (errno.ENOENT, errno.ENOTDIR)


def os_error(path: str, error: OSError) -> ModelLoadError:
    """The one-line `ModelLoadError` for an `OSError` met while looking at or reading `path`."""
    if error.errno == errno.ENOENT:
        return ModelLoadError(f"no such file: {path}")
    reason = _REASONS.get(error.errno or 0) or error.strerror or type(error).__name__
    return ModelLoadError(f"cannot read {path}: {reason}")


def is_missing(path: str) -> bool:
    """True when nothing is at `path`; any other trouble looking raises `ModelLoadError`."""
    try:
        os.stat(path)
    except OSError as e:
        if e.errno in _MISSING:
            return True
        raise os_error(path, e) from None
    return False


def _refuse_unless_regular(path: str, mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    kind = next((name for bits, name in _KINDS if stat.S_IFMT(mode) == bits), "an unusual kind of file")
    raise ModelLoadError(f"cannot read {path}: it is {kind}, not a regular file")


def check_regular(path: str) -> os.stat_result:
    """The path's stat when it is a regular file; `ModelLoadError` otherwise (nothing is opened)."""
    try:
        info = os.stat(path)
    except OSError as e:
        raise os_error(path, e) from None
    _refuse_unless_regular(path, info.st_mode)
    return info


def open_regular(path: str) -> BinaryIO:
    """Open a regular file for binary reading; anything else is a `ModelLoadError`, never a hang."""
    check_regular(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise os_error(path, e) from None
    try:
        _refuse_unless_regular(path, os.fstat(fd).st_mode)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")
