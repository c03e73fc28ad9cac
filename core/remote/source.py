"""Where a remote model's header came from, as every screen and command says it (no HTTP client here).

Rule 1: a remote model is named by what the user typed (`ref`: the URL without credentials, the
        `hf://` address or `owner/repo:QUANT`), never by the cache file that holds its header.
Rule 2: its size is the remote file's, and what is held is "header read over the network: H of T"
        (H the header bytes kept, T the file's size) — not "on disk", not "complete file".
Rule 3: `cached_source(path)` recognises a file of the header cache (its folder's `source.json`
        lists it), so a model opened from the cache — by the window, from Open Recent — still
        says where it came from; `reopen_name` is what Open Recent keeps: the reference, so the
        next open reads (or revalidates) it as the first did.
Rule 4: the cache's reader is imported only for a path in a cache entry's folder: every printed
        command asks `cached_source` of a local model, which is then answered by the folder's name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from gguf_budget.core.units import human_bytes

_ENTRY_FOLDER = re.compile(r"[0-9a-f]{24}")


@dataclass(frozen=True, kw_only=True)
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

    def held(self) -> str:
        """Rule 2: how much of the remote file is held here."""
        whole = f" of {human_bytes(self.total_bytes)}" if self.total_bytes is not None else ""
        return f"header read over the network: {human_bytes(self.header_bytes)}{whole}"

    def summary(self) -> str:
        """One line for the status bar and stderr: what this open cost."""
        whole = f" of {human_bytes(self.total_bytes)}" if self.total_bytes is not None else ""
        how = (f"cached header (fetched {self.fetched_at}{', offline' if self.offline else ''})" if self.from_cache
               else f"header read over the network: {human_bytes(self.transferred)}{whole}")
        return f"{self.ref}: {how}"


def cached_source(path: str) -> RemoteSource | None:
    """Rule 3: the source of `path` when it is a file of the header cache, else None."""
    file = Path(path)
    if not _ENTRY_FOLDER.fullmatch(file.parent.name):
        return None
    from gguf_budget.core.remote.cache import read_entry  # Rule 4

    entry = read_entry(file.parent)
    if entry is None or file.name not in {f.name for f in entry.files}:
        return None
    return RemoteSource(ref=entry.source, urls=tuple(f.url for f in entry.files), fetched_at=entry.fetched_at,
                        header_bytes=entry.header_bytes, total_bytes=entry.total_bytes, transferred=0, from_cache=True,
                        offline=False)


def reopen_name(path: str) -> str:
    """Rule 3: what to remember to open `path` again: its remote reference, or the path itself."""
    source = cached_source(path)
    return path if source is None else source.ref
