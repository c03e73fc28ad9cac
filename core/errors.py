"""The one error family of the app: every failure a person can act on is a `BudgetError`.

Rule 1: `BudgetError` is the root. Its message is one line a person can act on; the CLI
        prints it and exits 2, the window shows it. Anything that is not a `BudgetError`
        (or an `OSError` from the disk) is a bug: the window says "internal error" and the
        log keeps the traceback.
Rule 2: the root subclasses `ValueError`, so callers that caught `ValueError` before the
        family existed still catch every member of it.
Rule 3: the members say who is at fault:
        `ModelLoadError`   the model cannot be loaded: missing file or shard, unreadable;
          `GGUFFormatError`  its bytes are not GGUF we can read (names the byte offset);
            `TruncatedHeaderError`  they end inside the header (more bytes would help);
          `RemoteError`      a model named by a URL: the network, the server, what it sent;
        `UnreadableFile`   a small file the app reads (a manifest, a settings file, a log, a
                           stored record) is not a regular file, too large, or unreadable;
        `RequestError`     a request, size, range or machine figure is out of bounds;
        `PlanError`        the model cannot be planned as asked (missing facts, a head mode
                           it cannot honour).
Rule 4: `struct.error`, `OSError`, `OverflowError` and `UnicodeDecodeError` met while reading
        a model are wrapped at the edge (`core.gguf`), so no other exception escapes on bad input.
"""

from __future__ import annotations


class BudgetError(ValueError):
    """The root: a one-line reason a person can act on (CLI exit 2)."""


class ModelLoadError(BudgetError):
    """A model could not be loaded: missing file or shard, unreadable, or malformed."""


class GGUFFormatError(ModelLoadError):
    """The bytes are not a GGUF file we can read; `offset` says where it went wrong."""

    def __init__(self, message: str, offset: int | None = None, path: str | None = None):
        self.reason = message
        self.offset = offset
        self.path = path
        where = f" at byte {offset}" if offset is not None else ""
        prefix = f"{path}: " if path else ""
        super().__init__(f"{prefix}{message}{where}")

    def in_file(self, path: str) -> GGUFFormatError:
        """The same error, now naming the file it came from."""
        return type(self)(self.reason, self.offset, path)


class TruncatedHeaderError(GGUFFormatError):
    """The bytes end inside the header: more of the file would let it be read (a remote prefix, a cut download)."""


class RemoteError(ModelLoadError):
    """A model named by a URL could not be read: the network, the server, or what it sent."""


class UnreadableFile(BudgetError):
    """A file that is not a model could not be read: not a regular file, over its size cap, unreadable, not JSON."""


class RequestError(BudgetError):
    """A value given to the core is out of bounds: a request knob, a size, a range, a machine figure."""


class PlanError(BudgetError):
    """The model cannot be planned as asked (missing facts, a head mode it cannot honour)."""


def one_line(error: BaseException) -> str:
    """The first line of the error's message, or its type's name when it has none."""
    lines = str(error).splitlines()
    return lines[0] if lines and lines[0].strip() else type(error).__name__
