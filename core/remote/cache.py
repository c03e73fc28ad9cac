"""Remote headers kept on disk, so a model read once opens again offline.

Rule 1: one folder per source (a hash of what the user typed, normalised), holding each file's
        header under its own name — shards side by side, so the loader finds the siblings — and
        `source.json`: the URLs, each file's ETag (or the Hub commit), sizes, bytes read, and when.
Rule 2: a cached file holds the header bytes and is extended, sparse, to the remote file's size: the
        loader then sees the size it would see locally (no "header only"), and no data is stored.
Rule 3: an entry is used again when the server still reports the same ETag/commit, or when the
        network cannot be reached (then it says when it was fetched). A damaged entry is ignored.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from gguf_budget.core.paths import cache_dir

SOURCE_FILE = "source.json"


def default_cache_root() -> Path:
    return cache_dir() / "headers"


@dataclass(frozen=True)
class CachedFile:
    """One remote file as cached: where it came from and how much of it was read."""

    name: str
    url: str
    etag: str | None
    total_bytes: int | None
    header_bytes: int


@dataclass(frozen=True)
class CacheEntry:
    """What `source.json` records for one source."""

    source: str
    files: tuple[CachedFile, ...]
    commit: str | None
    fetched_at: str

    @property
    def header_bytes(self) -> int:
        return sum(f.header_bytes for f in self.files)

    @property
    def total_bytes(self) -> int | None:
        sizes = [f.total_bytes for f in self.files]
        return None if None in sizes else sum(s for s in sizes if s is not None)


def entry_dir(root: Path, source: str) -> Path:
    return root / hashlib.sha256(source.encode()).hexdigest()[:24]


def read_entry(folder: Path) -> CacheEntry | None:
    """The entry in `folder`, or None when there is none or it is damaged (Rule 3)."""
    try:
        raw = json.loads((folder / SOURCE_FILE).read_text(encoding="utf-8"))
        files = tuple(CachedFile(**f) for f in raw["files"])
        entry = CacheEntry(str(raw["source"]), files, raw.get("commit"), str(raw["fetched_at"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not files or not all((folder / f.name).is_file() for f in files):
        return None
    return entry


def write_entry(folder: Path, entry: CacheEntry) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    scratch = folder / (SOURCE_FILE + ".tmp")
    scratch.write_text(json.dumps({**asdict(entry), "files": [asdict(f) for f in entry.files]}, indent=2),
                       encoding="utf-8")
    scratch.replace(folder / SOURCE_FILE)


def write_header(path: Path, data: bytes, total_bytes: int | None) -> None:
    """Rule 2: the header bytes, then a sparse extension to the remote size."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
        if total_bytes is not None and total_bytes > len(data):
            f.truncate(total_bytes)
