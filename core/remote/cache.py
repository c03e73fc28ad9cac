"""Remote headers kept on disk, so a model read once opens again offline.

Rule 1: one folder per source (a hash of what the user typed, normalised, credentials removed),
        holding each file's header under a hashed name (`cache_name`: a short readable stem, a
        hash of the remote name, and the shard suffix, so the loader still finds the siblings of
        a split model) and `source.json`: the URLs (without credentials), each file's ETag,
        Last-Modified (or the Hub commit), sizes, bytes read, and when.
Rule 2: a cached file holds the header bytes and is extended, sparse, to the remote file's size: the
        loader then sees the size it would see locally (no "header only"), and no data is stored.
        Where the file system cannot hold a file that large, the header alone is kept.
Rule 3: every read writes into its own scratch folder, then `publish` moves it into place unless
        the folder already holds an entry at least as new (the same validators, or fetched
        later): six concurrent reads of one URL all succeed and agree.
Rule 4: a damaged entry — missing files, a `source.json` that is not a regular file, larger than
        `MAX_SOURCE_BYTES`, not JSON or not the expected record — is ignored, never an error.
Rule 5: a scratch folder carries the pid of the process reading into it; one whose process is gone
        (killed, or a window that ended before its read saw the cancel) is removed by the next read
        of that source, so a download stopped any way leaves no `.partial` folder for long.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from glob import escape as glob_escape
from dataclasses import asdict, dataclass
from pathlib import Path

from gguf_budget.core.paths import cache_dir

SOURCE_FILE = "source.json"
MAX_SOURCE_BYTES = 1 << 20
READABLE_CHARS = 48
_SHARD = re.compile(r"-\d{5}-of-\d{5}\.gguf$")


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
    last_modified: str | None = None


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

    def same_as(self, other: CacheEntry) -> bool:
        """The same remote bytes: equal commit and, file by file, equal validators and sizes."""
        def validators(e: CacheEntry) -> tuple[object, ...]:
            return e.commit, tuple((f.url, f.etag, f.last_modified, f.total_bytes, f.header_bytes) for f in e.files)
        return validators(self) == validators(other)


def entry_dir(root: Path, source: str) -> Path:
    return root / hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def cache_name(remote_name: str) -> str:
    """Rule 1: a bounded, safe file name for a remote file, its shard suffix kept."""
    shard = _SHARD.search(remote_name)
    stem = remote_name[:shard.start()] if shard else remote_name.removesuffix(".gguf")
    readable = "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in stem)
    digest = hashlib.sha256(stem.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{readable.strip('._-')[:READABLE_CHARS] or 'model'}-{digest}{shard.group(0) if shard else '.gguf'}"


def read_entry(folder: Path) -> CacheEntry | None:
    """The entry in `folder`, or None when there is none or it is damaged (Rule 4)."""
    path = folder / SOURCE_FILE
    try:
        if not path.is_file() or path.stat().st_size > MAX_SOURCE_BYTES:
            return None
        raw = json.loads(path.read_text(encoding="utf-8"))
        files = tuple(CachedFile(**f) for f in raw["files"])
        entry = CacheEntry(str(raw["source"]), files, raw.get("commit"), str(raw["fetched_at"]))
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None
    if not files or not all(_one_name(f.name) and (folder / f.name).is_file() for f in files):
        return None
    return entry


def _one_name(name: object) -> bool:
    """A file name inside the entry's folder: one path component, no leading dot."""
    return isinstance(name, str) and 0 < len(name) <= 255 and "/" not in name and "\\" not in name \
        and not name.startswith(".")


def new_scratch(folder: Path) -> Path:
    """Rule 3: a folder of this read's own beside the entry's, named by this process; Rule 5 first."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    for stale in folder.parent.glob(f"{glob_escape(folder.name)}.partial-*"):
        if not _alive(stale.name.rsplit(".partial-", 1)[1].split("-", 1)[0]):
            discard(stale)
    return Path(tempfile.mkdtemp(prefix=f"{folder.name}.partial-{os.getpid()}-", dir=folder.parent))


def _alive(pid: str) -> bool:
    """Rule 5: whether the process that named a scratch folder still runs (a name without a pid: yes, leave it)."""
    if not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True
    return True


def discard(scratch: Path) -> None:
    """A read that failed or was cancelled leaves nothing behind."""
    shutil.rmtree(scratch, ignore_errors=True)


def write_entry(folder: Path, entry: CacheEntry) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    scratch = folder / (SOURCE_FILE + ".tmp")
    scratch.write_text(json.dumps({**asdict(entry), "files": [asdict(f) for f in entry.files]}, indent=2),
                       encoding="utf-8")
    scratch.replace(folder / SOURCE_FILE)


def write_header(path: Path, data: bytes, total_bytes: int | None) -> None:
    """Rule 2: the header bytes, then a sparse extension to the remote size where the file system allows it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
        if total_bytes is not None and total_bytes > len(data):
            try:
                f.truncate(total_bytes)
            except (OSError, OverflowError):
                f.truncate(len(data))


def publish(folder: Path, scratch: Path, entry: CacheEntry) -> CacheEntry:
    """Rule 3: move `scratch` (holding `entry`) to `folder` unless `folder` holds one as new; the entry now there."""
    try:
        for _ in range(8):
            current = read_entry(folder)
            if current is not None and (current.same_as(entry) or current.fetched_at > entry.fetched_at):
                return current
            trash = Path(tempfile.mkdtemp(prefix=f"{folder.name}.old-", dir=folder.parent))
            try:
                if folder.exists():
                    os.replace(folder, trash)
                os.replace(scratch, folder)
                return entry
            except OSError:
                continue  # another read published first: look at what it left
            finally:
                shutil.rmtree(trash, ignore_errors=True)
        return read_entry(folder) or entry
    finally:
        discard(scratch)
