"""`open_remote`: a model named by a URL, `hf://…` or `owner/repo:QUANT`, read header-only over HTTP.

Rule 1: each file (each shard) is fetched as a growing prefix until its header reads whole
        (`TruncatedHeaderError` means "more bytes"; any other format error is final), into a
        scratch folder of this read's own, then published to the cache (`cache.publish`).
Rule 2: a cached source is used again when one byte of its first file shows it unchanged — the
        same ETag or Hub commit; without an ETag the same Last-Modified and size — and, for a
        server that gives no validator at all, without asking for a day after it was fetched;
        `refresh` reads it again regardless. It is also used when the network or the server does
        not answer (`Unreachable`: the result says it is offline and when it was fetched); a
        wrong answer (404, not GGUF) is never hidden by it.
Rule 3: the model is loaded from the cache by the one local loader, so remote and local models are
        the same ModelSpec; `RemoteSource` says where it came from and how many bytes moved.
Rule 4: whatever goes wrong is one `RemoteError` line: the network and the server (`http.py`),
        the cache folder that cannot be written, a model that does not load.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Callable
from urllib.parse import unquote, urlsplit

import httpx

from gguf_budget.core.errors import GGUFFormatError, RemoteError, TruncatedHeaderError, Unreachable
from gguf_budget.core.gguf.header import read_header
from gguf_budget.core.model.loader import load_model
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.remote import hub
from gguf_budget.core.remote.cache import CachedFile, CacheEntry, cache_name, default_cache_root, discard, \
    entry_dir, new_scratch, publish, read_entry, write_entry, write_header
from gguf_budget.core.remote.fetch import PrefixReader, Progress
from gguf_budget.core.remote.http import policy_client
from gguf_budget.core.remote.urls import redacted
from gguf_budget.core.remote.limits import DEFAULT_LIMITS, FetchLimits
from gguf_budget.core.remote.refs import HubFile, PlainUrl, RemoteRef
from gguf_budget.core.remote.source import RemoteSource
from gguf_budget.core.safe_text import safe_text

REUSE_UNVALIDATED = timedelta(days=1)
"""Rule 2: how long a header from a server without validators is used again without asking."""


@dataclass(frozen=True)
class _Target:
    name: str
    url: str
    headers: dict[str, str]
    hub: bool


def open_remote(ref: RemoteRef, *, cache_root: Path | None = None, limits: FetchLimits = DEFAULT_LIMITS,
                progress: Progress | None = None, cancelled: Callable[[], bool] | None = None,
                refresh: bool = False) -> tuple[ModelSpec, RemoteSource]:
    """Load the model `ref` names, header-only. Raises `RemoteError`/`ModelLoadError` (one line) only."""
    folder = entry_dir(cache_root or default_cache_root(), ref.describe())
    cached = read_entry(folder)
    reuse = cached is not None and not refresh
    if reuse and cached is not None and _unvalidated(cached) and _age(cached) < REUSE_UNVALIDATED:
        return _load(folder, cached, from_cache=True, offline=False, transferred=0)
    try:
        with policy_client(limits) as client:
            targets = _targets(client, ref, limits)
            if reuse and cached is not None and _still_current(client, targets[0], cached, limits):
                return _load(folder, cached, from_cache=True, offline=False, transferred=0)
            entry, moved = _fetch_all(client, ref, targets, folder, limits, progress, cancelled)
    except Unreachable:
        if cached is None:
            raise
        return _load(folder, cached, from_cache=True, offline=True, transferred=0)
    except OSError as e:
        raise RemoteError(f"cannot write the header cache in {safe_text(str(folder.parent), 200)}: "
                          f"{e.strerror or type(e).__name__}") from None
    return _load(folder, entry, from_cache=False, offline=False, transferred=moved)


def _targets(client: httpx.Client, ref: RemoteRef, limits: FetchLimits) -> tuple[_Target, ...]:
    if isinstance(ref, PlainUrl):
        name = PurePosixPath(unquote(urlsplit(ref.url).path)).name or "model.gguf"
        return (_Target(cache_name(name), ref.url, {}, False),)
    files = (ref,) if isinstance(ref, HubFile) else hub.resolve_quant(client, ref, limits)
    token = hub.headers()
    return tuple(_Target(cache_name(PurePosixPath(f.path).name), hub.file_url(f), token, True) for f in files)


def _unvalidated(entry: CacheEntry) -> bool:
    """Rule 2: the server gave nothing to revalidate by (no ETag, commit or Last-Modified)."""
    return entry.commit is None and all(f.etag is None and f.last_modified is None for f in entry.files)


def _age(entry: CacheEntry) -> timedelta:
    try:
        fetched = datetime.fromisoformat(entry.fetched_at)
        return datetime.now(timezone.utc) - (fetched if fetched.tzinfo else fetched.replace(tzinfo=timezone.utc))
    except ValueError:
        return timedelta.max


def _still_current(client: httpx.Client, target: _Target, cached: CacheEntry, limits: FetchLimits) -> bool:
    """Rule 2: one byte of the first file, to compare its validators with the cached ones."""
    one_byte = replace(limits, first_chunk=1, cap=1, retries=0, min_progress=1)
    reader = PrefixReader(client, target.url, target.headers, one_byte, hub=target.hub)
    prefix = reader.read_until(lambda data, total: True)
    first = cached.files[0]
    if prefix.commit is not None and prefix.commit == cached.commit:
        return True
    if prefix.etag is not None or first.etag is not None:
        return prefix.etag == first.etag
    return prefix.last_modified is not None and prefix.last_modified == first.last_modified \
        and prefix.total_bytes == first.total_bytes


def _fetch_all(client: httpx.Client, ref: RemoteRef, targets: tuple[_Target, ...], folder: Path,
               limits: FetchLimits, progress: Progress | None,
               cancelled: Callable[[], bool] | None) -> tuple[CacheEntry, int]:
    """Rule 1: every file into this read's own scratch folder, then published."""
    scratch = new_scratch(folder)
    files, commit, moved = [], None, 0
    try:
        for target in targets:
            path = scratch / target.name
            reader = PrefixReader(client, target.url, target.headers, limits, progress or (lambda done, total: None),
                                  cancelled or (lambda: False), hub=target.hub)
            prefix = reader.read_until(partial(_prefix_whole, target, path))
            _header_whole(target, path, prefix.data, final=True)
            write_header(path, prefix.data, prefix.total_bytes)
            files.append(CachedFile(target.name, redacted(target.url), prefix.etag, prefix.total_bytes,
                                    len(prefix.data), prefix.last_modified))
            commit = commit or prefix.commit
            moved += reader.transferred
        entry = CacheEntry(ref.describe(), tuple(files), commit,
                           datetime.now(timezone.utc).isoformat(timespec="seconds"))
        write_entry(scratch, entry)
    except BaseException:
        discard(scratch)
        raise
    return publish(folder, scratch, entry), moved


def _prefix_whole(target: _Target, path: Path, data: bytes, total: int | None) -> bool:
    return _header_whole(target, path, data)


def _header_whole(target: _Target, path: Path, data: bytes, final: bool = False) -> bool:
    """Rule 1: does `data` hold a whole header? A cut one says no; a malformed one is an error."""
    path.write_bytes(data)
    where = safe_text(redacted(target.url), 200)
    try:
        read_header(str(path))
    except TruncatedHeaderError as e:
        if final:
            raise RemoteError(f"{where}: the file ends inside its header ({e.reason})") from None
        return False
    except GGUFFormatError as e:
        at = f" at byte {e.offset}" if e.offset is not None else ""
        raise RemoteError(f"{where}: not a GGUF file we can read: {e.reason}{at}") from None
    return True


def _load(folder: Path, entry: CacheEntry, *, from_cache: bool, offline: bool, transferred: int) -> tuple[ModelSpec, RemoteSource]:
    spec = load_model(folder / entry.files[0].name)
    source = RemoteSource(ref=entry.source, urls=tuple(f.url for f in entry.files), fetched_at=entry.fetched_at,
                          header_bytes=entry.header_bytes, total_bytes=entry.total_bytes, transferred=transferred,
                          from_cache=from_cache, offline=offline)
    return spec, source
