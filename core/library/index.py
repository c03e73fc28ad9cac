"""The library's persistent index: what each model file's header said, kept between scans, so a rescan reads no header.

Rule 1: a file is known by what changes when it is replaced or edited: for every shard its path,
        size, modification time (ns), inode and device (`FileKey`). A file whose key is unchanged
        since the last scan is not read again; any difference, or a file that cannot be stat'ed,
        means reading it.
Rule 2: an entry keeps what the header gave — shards, size, architecture, file type, parameters,
        or the one-line reason it could not be read — and the header itself, as GGUF bytes
        (`core.gguf.kept`), plus the last verdict with the key of the settings it was made with:
        a scan with the same settings reuses it, other settings judge the model again, read back
        from the kept header by the header reader with every check a file gets — a kept header
        the reader refuses means reading the file again.
Rule 3: the index is one file in the app's cache folder (`core.paths.cache_dir()`), replaced whole:
        written to a temporary file beside it, then renamed over it, so no reader sees half an
        index. It is read like every file (`core.regular_file`: never a FIFO or a device, at most
        512 MiB). A missing, damaged or foreign index (another format, app version or reader code)
        is ignored — one log line, no traceback — and the headers are read again; the scan then
        replaces it. A failure to write it is logged. Neither is ever an error: the index only saves time.
        It is the stamp's pickle, then one pickle per `CHUNK` entries, so neither writing nor reading it
        holds the interpreter lock for long in one call (a scan runs beside the window's thread).
Rule 4: it is pickled (no second description of every record to keep in step) and read back as
        data anyone may have written: its opcodes are walked first (`kept_pickle`: bounded depth and
        references, no callable that takes a size or an iterable, only the core's own records, enums
        and `FrozenMap`s), and an entry whose fields do not hold their annotations
        (`core.typed_record`: a NaN, a string for a count) is absent, as is one whose header is not
        kept for each of its shards.
Rule 5: the stamp that makes an index foreign includes a digest of the reader's source (the
        `core/gguf` and `core/model` packages), so a changed reader never serves facts it would no
        longer produce; where the source cannot be read (a frozen bundle) the app version stands in.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import pickle
import tempfile
from dataclasses import dataclass
from enum import Enum
from importlib import import_module
from pathlib import Path
from typing import Any, Generic, Mapping, Sequence, TypeVar

from gguf_budget.core.errors import MissingFile, ModelLoadError, UnreadableFile
from gguf_budget.core.frozen import FrozenMap
from gguf_budget.core.gguf.header import GGUFHeader
from gguf_budget.core.gguf.kept import keep, read_kept
from gguf_budget.core.gguf.shards import MAX_SHARDS, check_shards
from gguf_budget.core.library import kept_pickle
from gguf_budget.core.model.loader import model_of
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.paths import cache_dir
from gguf_budget.core.regular_file import FileKind, read_bytes
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.typed_record import holds
from gguf_budget.core.version import __version__

log = logging.getLogger(__name__)

INDEX_FORMAT = 2
INDEX_NAME = f"library-index-{INDEX_FORMAT}.pickle"
READER_PACKAGES = ("gguf_budget.core.gguf", "gguf_budget.core.model")
ALLOWED_MODULES = ("gguf_budget.core.", "gguf.constants")
CHUNK = 1000
"""Rule 3: entries per pickle in the file (`kept_pickle` Rule 5)."""
DAMAGED = (pickle.UnpicklingError, EOFError, AttributeError, ImportError, IndexError, KeyError, TypeError,
           ValueError, MemoryError, RecursionError, OverflowError)
"""What reading a damaged index may raise (Rule 3): each means "read the headers again"."""

A = TypeVar("A")
FileKey = tuple[tuple[str, int, int, int, int], ...]
"""Rule 1: (path, size, mtime_ns, inode, device) for every shard."""
KeptHeaders = tuple[tuple[int, bytes], ...]
"""Rule 2: for every shard, where its data starts and its header's bytes (`core.gguf.kept.keep`)."""


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
    headers: KeptHeaders | None = None
    assess_key: str | None = None
    assessment: A | None = None

    def spec(self) -> ModelSpec | None:
        """Rule 2: the model read back from the kept headers, or None when they are not a model the reader accepts."""
        if self.headers is None:
            return None
        try:
            kept = [read_kept(header, path, size) for header, (path, size, *_) in zip(self.headers, self.key, strict=True)]
            return model_of(check_shards(kept), self.key[0][0])
        except ModelLoadError as e:
            log.warning("a model in the library index is damaged (%s); the file will be read again", e)
            return None

    def well_formed(self) -> bool:
        """Rule 4: every field holds its annotation, and a header is kept for every shard or for none."""
        return (holds(self) and 1 <= self.shards <= MAX_SHARDS
                and (self.headers is None or len(self.headers) == len(self.key) >= 1))


def kept_headers(headers: list[GGUFHeader]) -> KeptHeaders:
    return tuple(keep(h) for h in headers)


def _allowed(module: str, name: str) -> type | None:
    """Rule 4: the classes the index may name: the core's records, enums and FrozenMaps, gguf-py's enums."""
    if module.startswith(ALLOWED_MODULES):
        found = getattr(import_module(module), name, None)
        if isinstance(found, type) and (dataclasses.is_dataclass(found) or issubclass(found, (Enum, FrozenMap))):
            return found
    return None


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
        stamp, *chunks = kept_pickle.loads_each(data, _allowed)
    except DAMAGED as e:
        log.warning("the library index %s is damaged (%s: %s); reading every header again", path,
                    type(e).__name__, safe_text(e))
        return {}
    if stamp != _stamp() or not all(isinstance(chunk, dict) for chunk in chunks):
        log.info("the library index %s is from another version; reading every header again", path)
        return {}
    return {k: v for chunk in chunks for k, v in chunk.items()
            if isinstance(k, str) and isinstance(v, IndexedFile) and v.well_formed()}


def save_index(path: Path, entries: Mapping[str, IndexedFile[Any]]) -> None:
    """Rule 3: replace the index at `path` whole; a failure is logged, never raised."""
    try:
        items = list(entries.items())
        data = b"".join([pickle.dumps(_stamp(), protocol=pickle.HIGHEST_PROTOCOL),
                         *(pickle.dumps(dict(items[at:at + CHUNK]), protocol=pickle.HIGHEST_PROTOCOL)
                           for at in range(0, len(items), CHUNK))])
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
