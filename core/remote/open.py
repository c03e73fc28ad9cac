"""`open_remote`: a model named by a URL, `hf://…` or `owner/repo:QUANT`, read header-only over HTTP.

Rule 1: each file (each shard) is fetched as a growing prefix until its header reads whole
        (`TruncatedHeaderError` means "more bytes"; any other format error is final), then cached.
Rule 2: a cached source is used when the server reports the same ETag/commit for its first file,
        and whenever the network fails (the result says it is offline and when it was fetched).
Rule 3: the model is loaded from the cache by the one local loader, so remote and local models are
        the same ModelSpec; `RemoteSource` says where it came from and how many bytes moved.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Callable
from urllib.parse import unquote, urlsplit

import httpx

from gguf_budget.core.errors import GGUFFormatError, RemoteError, TruncatedHeaderError
from gguf_budget.core.gguf.header import read_header
from gguf_budget.core.model.loader import load_model
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.remote import hub
from gguf_budget.core.remote.cache import CachedFile, CacheEntry, default_cache_root, entry_dir, read_entry, \
    write_entry, write_header
from gguf_budget.core.remote.fetch import FetchCancelled, PrefixReader, Progress, http_client
from gguf_budget.core.remote.limits import FetchLimits
from gguf_budget.core.remote.refs import HubFile, PlainUrl, RemoteRef
from gguf_budget.core.units import human_bytes


DEFAULT_LIMITS = FetchLimits()


@dataclass(frozen=True)
class RemoteSource:
    """Where a remote model's header came from, and what reading it cost."""

    ref: str
    urls: tuple[str, ...]
    fetched_at: str
    header_bytes: int
    total_bytes: int | None
    transferred: int
    from_cache: bool
    offline: bool

    def summary(self) -> str:
        whole = f" of {human_bytes(self.total_bytes)}" if self.total_bytes is not None else ""
        how = (f"cached header (fetched {self.fetched_at}{', offline' if self.offline else ''})" if self.from_cache
               else f"header read over the network: {human_bytes(self.transferred)}{whole}")
        return f"{self.ref}: {how}"


@dataclass(frozen=True)
class _Target:
    name: str
    url: str
    headers: dict[str, str]


def open_remote(ref: RemoteRef, *, cache_root: Path | None = None, limits: FetchLimits = DEFAULT_LIMITS,
                progress: Progress | None = None, cancelled: Callable[[], bool] | None = None) -> tuple[ModelSpec, RemoteSource]:
    """Load the model `ref` names, header-only. Raises `RemoteError`/`ModelLoadError` (one line) only."""
    folder = entry_dir(cache_root or default_cache_root(), ref.describe())
    cached = read_entry(folder)
    try:
        with http_client(limits) as client:
            targets = _targets(ref, limits)
            if cached is not None and _still_current(client, targets[0], cached, limits):
                return _load(folder, cached, from_cache=True, offline=False, transferred=0)
            entry, moved = _fetch_all(client, ref, targets, folder, limits, progress, cancelled)
    except FetchCancelled:
        raise
    except RemoteError:
        if cached is None:
            raise
        return _load(folder, cached, from_cache=True, offline=True, transferred=0)
    return _load(folder, entry, from_cache=False, offline=False, transferred=moved)


def _targets(ref: RemoteRef, limits: FetchLimits) -> tuple[_Target, ...]:
    if isinstance(ref, PlainUrl):
        name = PurePosixPath(unquote(urlsplit(ref.url).path)).name or "model.gguf"
        return (_Target(_safe_name(name), ref.url, {}),)
    files = (ref,) if isinstance(ref, HubFile) else hub.resolve_quant(ref, limits.timeout_s)
    headers = hub.headers()
    return tuple(_Target(_safe_name(PurePosixPath(f.path).name), hub.file_url(f), headers) for f in files)


def _safe_name(name: str) -> str:
    """A remote file name fit for the cache folder: no separators, no leading dot."""
    cleaned = "".join(c if c.isalnum() or c in "-_." else "_" for c in name).lstrip(".")
    return cleaned or "model.gguf"


def _still_current(client: httpx.Client, target: _Target, cached: CacheEntry, limits: FetchLimits) -> bool:
    """Rule 2: one byte of the first file, to compare its ETag/commit with the cached one."""
    reader = PrefixReader(client, target.url, target.headers, FetchLimits(1, 1, limits.timeout_s, 0, 0))
    prefix = reader.read_until(lambda data, total: True)
    first = cached.files[0]
    same_etag = prefix.etag is not None and prefix.etag == first.etag
    same_commit = prefix.commit is not None and prefix.commit == cached.commit
    return same_etag or same_commit


def _fetch_all(client: httpx.Client, ref: RemoteRef, targets: tuple[_Target, ...], folder: Path,
               limits: FetchLimits, progress: Progress | None,
               cancelled: Callable[[], bool] | None) -> tuple[CacheEntry, int]:
    scratch = folder.with_name(folder.name + ".partial")
    shutil.rmtree(scratch, ignore_errors=True)
    files, commit, moved = [], None, 0
    try:
        for target in targets:
            path = scratch / target.name
            reader = PrefixReader(client, target.url, target.headers, limits,
                                  progress or (lambda done, total: None), cancelled or (lambda: False))
            prefix = reader.read_until(partial(_prefix_whole, target, path))
            _header_whole(target, path, prefix.data, final=True)
            write_header(path, prefix.data, prefix.total_bytes)
            files.append(CachedFile(target.name, target.url, prefix.etag, prefix.total_bytes, len(prefix.data)))
            commit = commit or prefix.commit
            moved += reader.transferred
        entry = CacheEntry(ref.describe(), tuple(files), commit,
                           datetime.now(timezone.utc).isoformat(timespec="seconds"))
        write_entry(scratch, entry)
        shutil.rmtree(folder, ignore_errors=True)
        scratch.replace(folder)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return entry, moved


def _prefix_whole(target: _Target, path: Path, data: bytes, total: int | None) -> bool:
    return _header_whole(target, path, data)


def _header_whole(target: _Target, path: Path, data: bytes, final: bool = False) -> bool:
    """Rule 1: does `data` hold a whole header? A cut one says no; a malformed one is an error."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    try:
        read_header(str(path))
    except TruncatedHeaderError as e:
        if final:
            raise RemoteError(f"{target.url}: the file ends inside its header ({e.reason})") from None
        return False
    except GGUFFormatError as e:
        where = f" at byte {e.offset}" if e.offset is not None else ""
        raise RemoteError(f"{target.url}: not a GGUF file we can read: {e.reason}{where}") from None
    return True


def _load(folder: Path, entry: CacheEntry, *, from_cache: bool, offline: bool, transferred: int) -> tuple[ModelSpec, RemoteSource]:
    spec = load_model(folder / entry.files[0].name)
    source = RemoteSource(entry.source, tuple(f.url for f in entry.files), entry.fetched_at, entry.header_bytes,
                          entry.total_bytes, transferred, from_cache, offline)
    return spec, source
