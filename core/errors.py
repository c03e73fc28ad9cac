"""The one error family of the core's input layer.

Anything that stops a model from loading is a `ModelLoadError` with a one-line message a
person can act on. Malformed bytes are the subclass `GGUFFormatError`, whose message names
the byte offset where reading went wrong. `struct.error`, `OSError`, `OverflowError` and
`UnicodeDecodeError` are wrapped at the edge, so no other exception escapes on bad input.
"""

from __future__ import annotations


class ModelLoadError(ValueError):
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

    def in_file(self, path: str) -> "GGUFFormatError":
        """The same error, now naming the file it came from."""
        return type(self)(self.reason, self.offset, path)


class TruncatedHeaderError(GGUFFormatError):
    """The bytes end inside the header: more of the file would let it be read (a remote prefix, a cut download)."""


class RemoteError(ModelLoadError):
    """A model named by a URL could not be read: the network, the server, or what it sent."""
