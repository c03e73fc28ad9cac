"""The library's persistent index: what each model file's header said, kept between scans, so a rescan reads no header.

Rule 1: a file is known by what changes when it is replaced or edited: for every shard its path,
        size, modification time (ns), inode and device (`FileKey`). A file whose key is unchanged
        since the last scan is not read again; any difference, or a file that cannot be stat'ed,
        means reading it.
Rule 2: an entry keeps what the header gave — shards, size, architecture, file type, parameters,
        or the one-line reason it could not be read — and the `ModelSpec` every verdict is computed
        from (compressed), plus the last verdict with the key of the settings it was made with:
        a scan with the same settings reuses it, other settings judge the kept spec again.
Rule 3: the index is one file in the app's cache folder (`core.paths.cache_dir()`), replaced whole:
        written to a temporary file beside it, then renamed over it, so no reader sees half an
        index. It is read like every file (`core.regular_file`: never a FIFO or a device, at most
        512 MiB). A missing, damaged or foreign index (another format, app version or reader code)
        is ignored and the headers are read again; a failure to write it is logged. Neither is
        ever an error: the index only saves time.
Rule 4: it is pickled (a `ModelSpec` holds ~300 tensor records; pickle round-trips them in
        ~0.3 ms, with no second description of every record to keep in step), and read back with
        a restricted unpickler: only the core's own records (dataclasses, enums, `FrozenMap`),
        gguf-py's enums and plain builtins can be built from it; anything else marks it damaged.
Rule 5: the stamp that makes an index foreign includes a digest of the reader's source (the
        `core/gguf` and `core/model` packages), so a changed reader never serves facts it would no
        longer produce; where the source cannot be read (a frozen bundle) the app version stands in.
"""

from __future__ import annotations

import builtins
import dataclasses
import hashlib
import io
import logging
import os
import pickle
import tempfile
import zlib
from dataclasses import dataclass
from enum import Enum
from importlib import import_module
from pathlib import Path
from typing import Any, Generic, Mapping, Sequence, TypeVar

from gguf_budget.core.errors import MissingFile, UnreadableFile
from gguf_budget.core.frozen import FrozenMap
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.paths import cache_dir
from gguf_budget.core.regular_file import FileKind, read_bytes
from gguf_budget.core.version import __version__

log = logging.getLogger(__name__)

INDEX_FORMAT = 1
INDEX_NAME = f"library-index-{INDEX_FORMAT}.pickle"
READER_PACKAGES = ("gguf_budget.core.gguf", "gguf_budget.core.model")
ALLOWED_MODULES = ("gguf_budget.core.", "gguf.constants")
ALLOWED_BUILTINS = frozenset({"frozenset", "set", "complex", "bytearray", "slice", "range"})
DAMAGED = (pickle.UnpicklingError, EOFError, AttributeError, ImportError, IndexError, KeyError, TypeError,
           ValueError, zlib.error, MemoryError, RecursionError, OverflowError)
"""What reading a damaged index may raise (Rule 3): each means "read the headers again"."""

A = TypeVar("A")
FileKey = tuple[tuple[str, int, int, int, int], ...]
"""Rule 1: (path, size, mtime_ns, inode, device) for every shard."""


def index_file() -> Path:
    return cache_dir() / INDEX_NAME


def file_key(paths: Sequence[Path], first: os.stat_result | None = None) -> FileKey | None:
    """Rule 1: the key of a model made of `paths` (`first`: the first one's stat, when known); None
    when one cannot be stat'ed (it is then read)."""
    stats = []
    for n, path in enumerate(paths):
        try:
            st = first if n == 0 and first is not None else os.stat(path)
        except (OSError, ValueError):
            return None
        stats.append((str(path), st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev))
    return tuple(stats)


@dataclass(frozen=True, kw_only=True)
class IndexedFile(Generic[A]):
    """Rule 2: one model file as its header described it, and its last verdict."""

    key: FileKey
    shards: int
    size_bytes: int | None
    error: str | None
    architecture: str | None = None
    file_type: str | None = None
    n_params: int | None = None
    spec_blob: bytes | None = None
    assess_key: str | None = None
    assessment: A | None = None

    def spec(self) -> ModelSpec | None:
        """The kept `ModelSpec`, or None when the file could not be read or the blob is damaged."""
        if self.spec_blob is None:
            return None
        try:
            spec = _loads(zlib.decompress(self.spec_blob))
        except DAMAGED:
            log.warning("a damaged model in the library index; the file will be read again", exc_info=True)
            return None
        return spec if isinstance(spec, ModelSpec) else None


def pack_spec(spec: ModelSpec) -> bytes:
    return zlib.compress(pickle.dumps(spec, protocol=pickle.HIGHEST_PROTOCOL), 1)


class _Unpickler(pickle.Unpickler):
    """Rule 4: builds only the core's records, gguf-py's enums and plain builtins."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in ALLOWED_BUILTINS:
            return getattr(builtins, name)
        if module.startswith(ALLOWED_MODULES):
            found = getattr(import_module(module), name, None)
            if isinstance(found, type) and (dataclasses.is_dataclass(found) or issubclass(found, (Enum, FrozenMap))):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} does not belong in the library index")


def _loads(data: bytes) -> Any:
    return _Unpickler(io.BytesIO(data)).load()


def _reader_digest() -> str:
    """Rule 5: a digest of the reader's source, or the app version where it cannot be read."""
    digest = hashlib.sha256(__version__.encode())
    for package in READER_PACKAGES:
        folder = Path(import_module(package).__file__ or "").parent
        try:
            for source in sorted(folder.glob("*.py")):
                digest.update(source.name.encode() + source.read_bytes())
        except OSError:
            return __version__
    return digest.hexdigest()


def _stamp() -> tuple[int, str]:
    return INDEX_FORMAT, _reader_digest()


def load_index(path: Path) -> dict[str, IndexedFile[Any]]:
    """Rule 3: the entries of the index at `path` by model path; empty when it is missing, damaged or foreign."""
    try:
        data = read_bytes(path, FileKind.INDEX)
    except MissingFile:
        return {}
    except UnreadableFile as e:  # a FIFO, a device, past its cap: read every header again
        log.warning("cannot read the library index: %s", e)
        return {}
    try:
        stamp, entries = _loads(data)
    except DAMAGED:
        log.warning("the library index %s is damaged; reading every header again", path, exc_info=True)
        return {}
    if stamp != _stamp() or not isinstance(entries, dict):
        log.info("the library index %s is from another version; reading every header again", path)
        return {}
    return {k: v for k, v in entries.items() if isinstance(k, str) and isinstance(v, IndexedFile)}


def save_index(path: Path, entries: Mapping[str, IndexedFile[Any]]) -> None:
    """Rule 3: replace the index at `path` whole; a failure is logged, never raised."""
    try:
        data = pickle.dumps((_stamp(), dict(entries)), protocol=pickle.HIGHEST_PROTOCOL)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except (OSError, pickle.PicklingError, TypeError, AttributeError) as e:
        log.warning("cannot write the library index %s: %s", path, e)
