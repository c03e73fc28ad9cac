"""One way to read a file: regular files only, looked at before opening, opened without blocking, size-capped.

Every file the app reads goes through here — a model's header (`open_regular`), and every small
file (`read_bytes`, `read_text`, `read_json`): an Ollama manifest, LM Studio's settings, the
library's folders and its index, the window's settings, a llama.cpp log, a stored evidence
record, a system status file. A named pipe never blocks a reader, a device is never opened, and `/dev/zero`
behind a symlink is never read into memory.

Rule 1: a path is stat-ed (following symlinks) before it is opened; a FIFO, a device, a socket
        or a folder is refused without being opened.
Rule 2: the open itself is non-blocking and the descriptor is fstat-ed again, so a file
        swapped for a FIFO between the two steps is still refused.
Rule 3: a file the kernel makes up as it is read (under /proc or /sys) is refused, since its
        size says nothing and a read can block (`/proc/kmsg`); only `FileKind.SYSTEM`, the fixed
        status files the hardware probe and the launcher ask for, reads them. (Under /dev only devices are
        made up, and they are refused by Rule 1; /dev/shm holds real files.)
Rule 4: each kind of small file has a size cap (`FileKind`): at most cap + 1 bytes are read,
        and a longer file is refused in one line — never a MemoryError.
Rule 5: every `OSError` becomes the caller's error type (`ModelLoadError` for models,
        `UnreadableFile` for the rest) naming the path and the reason in words (`_REASONS`):
        a symlink loop, a name too long, a folder without search permission each say so;
        a missing file is "no such file" (`MissingFile` for the small files). JSON that does not parse, or nests deeper than
        Python's parser can follow, is the same one-line error.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from types import MappingProxyType
from typing import Any, BinaryIO, Mapping

from gguf_budget.core.vocab import TextEnum
from gguf_budget.core.errors import BudgetError, MissingFile, ModelLoadError, UnreadableFile
from gguf_budget.core.safe_text import safe_text

MiB = 1 << 20

_REASONS: dict[int, str] = {
    errno.ENOENT: "no such file",
    errno.ENOTDIR: "a part of the path is not a folder",
    errno.ELOOP: "too many levels of symbolic links (a symlink loop?)",
    errno.ENAMETOOLONG: "file name too long",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EISDIR: "it is a folder, not a file",
    errno.EEXIST: "a file is where a folder should be",
}

_KINDS: tuple[tuple[int, str], ...] = (
    (stat.S_IFDIR, "a folder"),
    (stat.S_IFIFO, "a FIFO (named pipe)"),
    (stat.S_IFCHR, "a character device"),
    (stat.S_IFBLK, "a block device"),
    (stat.S_IFSOCK, "a socket"),
)

_MISSING = (errno.ENOENT, errno.ENOTDIR)
KERNEL_FOLDERS = ("/proc", "/sys")


class FileKind(TextEnum):
    """What a small file is (in words), and the most bytes of it the app reads (Rule 4: `cap`)."""

    MANIFEST = "an Ollama manifest"
    SETTINGS = "a settings file"
    CONFIG = "the library's folder list"
    LOG = "a llama.cpp log"
    RECORD = "an evidence record"
    INDEX = "the library's index"
    SYSTEM = "a system status file"

    @property
    def words(self) -> str:
        return self.value

    @property
    def cap(self) -> int:
        return _CAPS[self]


_CAPS: Mapping[FileKind, int] = MappingProxyType({
    FileKind.MANIFEST: 1 * MiB, FileKind.SETTINGS: 1 * MiB, FileKind.CONFIG: 1 * MiB, FileKind.LOG: 64 * MiB,
    FileKind.RECORD: 1 * MiB, FileKind.INDEX: 512 * MiB, FileKind.SYSTEM: 1 * MiB,
})


def os_error(path: str, error: OSError, kind: type[BudgetError] = ModelLoadError) -> BudgetError:
    """The one-line error for an `OSError` met while looking at or reading `path` (Rule 5)."""
    if kind is UnreadableFile and error.errno in _MISSING:
        return MissingFile(f"no such file: {path}")
    if error.errno == errno.ENOENT:
        return kind(f"no such file: {path}")
    reason = _REASONS.get(error.errno or 0) or error.strerror or type(error).__name__
    return kind(f"cannot read {path}: {reason}")


def os_words(error: OSError) -> str:
    """An `OSError` met outside the readers (a folder to create, a file to write), as one line: why, and where
    (escaped and cut: a path may be 5,000 characters of anything)."""
    reason = _REASONS.get(error.errno or 0) or error.strerror or type(error).__name__
    where = error.filename
    return f"{reason}: {safe_text(os.fsdecode(where), 200)}" if isinstance(where, (str, bytes)) else reason


def is_regular_file(path: str | os.PathLike[str]) -> bool:
    """True when a regular file is at `path`; a path that cannot be looked at (too long, no permission) is none."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def is_folder(path: str | os.PathLike[str]) -> bool:
    """True when a folder is at `path`; a path that cannot be looked at is none."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def is_missing(path: str) -> bool:
    """True when nothing is at `path`; any other trouble looking raises `ModelLoadError`."""
    try:
        os.stat(path)
    except OSError as e:
        if e.errno in _MISSING:
            return True
        raise os_error(path, e) from None
    return False


def _refuse_unless_regular(path: str, mode: int, kind: type[BudgetError]) -> None:
    if stat.S_ISREG(mode):
        return
    what = next((name for bits, name in _KINDS if stat.S_IFMT(mode) == bits), "an unusual kind of file")
    raise kind(f"cannot read {path}: it is {what}, not a regular file")


def _refuse_kernel_files(path: str, kind: type[BudgetError]) -> None:
    """Rule 3."""
    real = os.path.realpath(path)
    if any(real == top or real.startswith(top + os.sep) for top in KERNEL_FOLDERS):
        raise kind(f"cannot read {path}: it is a file the kernel makes up ({real}), not a regular file")


def check_regular(path: str, kind: type[BudgetError] = ModelLoadError, kernel: bool = False) -> os.stat_result:
    """The path's stat when it is a regular file; the `kind` error otherwise (nothing is opened)."""
    try:
        info = os.stat(path)
    except OSError as e:
        raise os_error(path, e, kind) from None
    _refuse_unless_regular(path, info.st_mode, kind)
    if not kernel:
        _refuse_kernel_files(path, kind)
    return info


def open_regular(path: str, kind: type[BudgetError] = ModelLoadError, kernel: bool = False) -> BinaryIO:
    """Open a regular file for binary reading (Rules 1–3); anything else is a `kind` error, never a hang."""
    check_regular(path, kind, kernel)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise os_error(path, e, kind) from None
    try:
        _refuse_unless_regular(path, os.fstat(fd).st_mode, kind)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def _read_upto(f: BinaryIO, most: int) -> bytes:
    """Rule 4: at most `most` bytes, a chunk at a time: one `read(most)` sets aside `most` bytes however
    short the file (512 MiB for the library's index)."""
    chunks: list[bytes] = []
    left = most
    while left > 0:
        chunk = f.read(min(left, MiB))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_bytes(path: str | os.PathLike[str], kind: FileKind) -> bytes:
    """The whole file, at most `kind.cap` bytes of it (Rules 1–5); `UnreadableFile` otherwise."""
    name = os.fspath(path)
    try:
        with open_regular(name, UnreadableFile, kind is FileKind.SYSTEM) as f:
            data = _read_upto(f, kind.cap + 1)
    except OSError as e:
        raise os_error(name, e, UnreadableFile) from None
    if len(data) > kind.cap:
        raise UnreadableFile(f"cannot read {name}: larger than {kind.cap // MiB} MiB, "
                             f"too large for {kind.words}")
    return data


def read_text(path: str | os.PathLike[str], kind: FileKind) -> str:
    """The file as text: UTF-8, a byte that is not written as U+FFFD (Rules 1–5)."""
    return read_bytes(path, kind).decode("utf-8", errors="replace")


def read_json(path: str | os.PathLike[str], kind: FileKind) -> Any:
    """The file's JSON value (Rules 1–5); text that is not JSON is `UnreadableFile` too."""
    data = read_bytes(path, kind)
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as e:
        reason = "nested too deeply" if isinstance(e, RecursionError) else str(e).splitlines()[0][:200]
        raise UnreadableFile(f"{os.fspath(path)}: not valid JSON ({reason})") from None
