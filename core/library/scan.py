"""The library scan: every GGUF model in the stores, its header read, its fit judged.

Rule 1: stores are walked by their layout (`discover.py`): Hugging Face snapshot files (links
        into `blobs/`, resolved), Ollama manifests (their GGUF blob), and every `*.gguf` below
        any other folder, at most `MAX_DEPTH` folders deep. Folder links are followed once, as
        Rule 5 allows (a link loop is walked no further); the same file reached twice is listed once.
        Manifests are read like every small file (`core.regular_file`: never a FIFO, at most 1 MiB).
Rule 2: a file that cannot be read — a broken link (an unfinished download), no permission, not a
        GGUF file, a missing shard — is an entry with its one-line reason; it never stops the scan.
Rule 3: `cancelled()` is asked before each folder is listed and before each header is read (or
        between the workers' results), `progress(done, total)` after each file: a cancelled scan
        returns what it has, marked incomplete, within one folder listing or one header read.
Rule 4: judging a model is the caller's (`assess`), so the scan needs no machine or budget.
        A caller that names its settings (`assess_key`) gets the kept verdict of an unchanged
        file back for the same key, without judging it again.
Rule 5: a tool's store is walked inside itself: a folder link out of it (`snapshots/r1/x -> /`) is
        not followed. A folder the user added is walked through its links too (models kept on
        another disk), but not to the filesystem's root; no walk enters /proc or /sys.
Rule 6: a store is walked through at most MAX_FOLDERS folders; past that the scan lists one
        entry saying the rest was not walked (a store set to `/` or a home folder never walks
        the whole disk).
Rule 7: a file unchanged since the last scan is not read: its facts and spec come from the
        persistent index (`index.py`). The files to read are read in a pool of worker processes
        when there are at least `POOL_MIN` of them (a header walk is CPU work, so threads would
        queue on the interpreter lock), else in this process; either way in candidate order.
        The index is then written back with what this scan saw (a cancelled scan keeps the rest).
Rule 8: the walk knows the real path of every folder it lists, so it resolves only the links it
        crosses (`os.path.realpath` on every path costs an lstat per path component: most of a
        rescan's time before).
Rule 9: the workers die with the process that scans (`core.family`): a scan ended by a signal, or a
        window that ends without waiting for its pool, leaves none behind.
Rule 10: a caller that shows only some entries at a time (the Library window) scans with `judge=False`:
        an entry gets the verdict kept for `assess_key`, or none and stays `unjudged()` — nothing is
        judged by the scan — and `judged(entry, assess)` judges one later, from the kept header (no
        file is read), when it is shown.
The one impure module of the library: it lists folders and reads headers.
"""

from __future__ import annotations

import multiprocessing
import os
import stat
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import Any, Callable, Generic, Iterator, Sequence, TypeVar

from gguf_budget.core.errors import ModelLoadError, UnreadableFile
from gguf_budget.core.family import die_with_parent
from gguf_budget.core.gguf.shards import read_shards, shard_paths
from gguf_budget.core.library.discover import hf_name, is_listed, ollama_model_blob, ollama_name
from gguf_budget.core.library.index import (FileKey, IndexedFile, file_key, index_file, kept_headers, load_index,
                                            save_index)
from gguf_budget.core.library.stores import StoreKind, StoreRoot
from gguf_budget.core.model.loader import model_of
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.regular_file import KERNEL_FOLDERS, FileKind, read_text
from gguf_budget.core.safe_text import safe_text

MAX_DEPTH = 8
MAX_FOLDERS = 20_000
POOL_MIN = 16
"""Rule 7: fewer files than this are read in this process (starting workers costs more)."""
MAX_WORKERS = 8
A = TypeVar("A")


@dataclass(frozen=True)
class Candidate:
    """A file a store says is a model, before its header is read."""

    kind: StoreKind
    name: str
    path: Path
    problem: str | None = None
    real: str | None = None
    """Its real path when the walk knows it (else it is resolved when needed)."""


@dataclass(frozen=True, kw_only=True)
class LibraryEntry(Generic[A]):
    """One model of the library: where it is, what its header says, and the caller's judgement."""

    kind: StoreKind
    name: str
    path: str
    shards: int
    size_bytes: int | None
    error: str | None
    architecture: str | None = None
    file_type: str | None = None
    n_params: int | None = None
    assessment: A | None = None
    kept: IndexedFile[Any] | None = field(default=None, compare=False, repr=False)
    """Rule 10: what the index keeps of the file, while its verdict is still to be judged."""

    def unjudged(self) -> bool:
        """Rule 10: a readable entry whose verdict was left to its caller."""
        return self.kept is not None


@dataclass(frozen=True)
class Scan(Generic[A]):
    entries: tuple[LibraryEntry[A], ...]
    roots: tuple[StoreRoot, ...]
    complete: bool


def candidates(roots: Sequence[StoreRoot], cancelled: Callable[[], bool] = lambda: False) -> list[Candidate]:
    """Rule 1: every model file of every store, each real file once, in store order (Rule 3: `cancelled`
    is asked before each folder is listed; a cancelled walk returns what it found)."""
    found: list[Candidate] = []
    seen: set[str] = set()
    real = _RealPaths()
    for root in roots:
        for candidate in _store_candidates(root, cancelled, real):
            key = candidate.real or _real(candidate.path)
            if key not in seen:
                seen.add(key)
                found.append(candidate)
    return found


def scan(roots: Sequence[StoreRoot], assess: Callable[[ModelSpec], A],
         progress: Callable[[int, int], None] = lambda done, total: None,
         cancelled: Callable[[], bool] = lambda: False, *, assess_key: str | None = None,
         index: Path | None = None, workers: int | None = None, judge: bool = True) -> Scan[A]:
    """Rules 2–7 and 10: every candidate's entry, its header read only when the index does not know it.

    `index` is the index file (default `index.index_file()`); `workers` the most worker
    processes (default: one per CPU, at most `MAX_WORKERS`; 1 reads in this process). Workers
    are spawned, so a program that scans must keep its `__main__` import-safe (the usual
    `if __name__ == "__main__":` guard), as every multiprocessing program must.
    """
    todo = candidates(roots, cancelled)
    index_path = index if index is not None else index_file()
    known: dict[str, IndexedFile[Any]] = load_index(index_path)
    kept: dict[str, IndexedFile[Any]] = {}
    entries: dict[int, LibraryEntry[A]] = {}
    to_read: list[tuple[int, Candidate, FileKey | None]] = []
    for i, candidate in enumerate(todo):
        shards = _shard_paths(candidate.path)
        first = _stat(candidate.path) if candidate.problem is None else None
        if first is None or not stat.S_ISREG(first.st_mode):
            entries[i] = _unreadable(candidate, shards)
            continue
        key = file_key(shards, first)
        old = known.get(str(candidate.path))
        indexed = _judged(old, assess, assess_key, judge) if key is not None and old is not None and old.key == key \
            else None
        if indexed is None:
            to_read.append((i, candidate, key))
            continue
        kept[str(candidate.path)] = indexed
        entries[i] = _entry(candidate, indexed, assess_key)
    done = len(entries)
    if todo:
        progress(done, len(todo))
    complete = True
    for i, candidate, read in _read_all(to_read, _workers(workers, len(to_read)), cancelled):
        if read is None:
            complete = False
            break
        indexed = _judged(read, assess, assess_key, judge) or replace(read, error="its header could not be kept", key=())
        if indexed.key:
            kept[str(candidate.path)] = indexed
        entries[i] = _entry(candidate, indexed, assess_key)
        done += 1
        progress(done, len(todo))
    new = kept if complete else {**known, **kept}
    if new.keys() != known.keys() or any(new[p] is not known[p] for p in new):
        save_index(index_path, new)
    return Scan(tuple(entries[i] for i in sorted(entries)), tuple(roots), complete=complete and not cancelled())


def _workers(asked: int | None, files: int) -> int:
    if asked is not None:
        return max(asked, 1)
    return min(os.cpu_count() or 1, MAX_WORKERS) if files >= POOL_MIN else 1


def _read_all(to_read: list[tuple[int, Candidate, FileKey | None]], workers: int,
              cancelled: Callable[[], bool]) -> Iterator[tuple[int, Candidate, IndexedFile[Any] | None]]:
    """Rule 5: (position, candidate, what its header gave) for each file, in candidate order;
    `None` once `cancelled()` says so (and nothing after it)."""
    if workers <= 1 or len(to_read) < 2:
        for i, candidate, key in to_read:
            if cancelled():
                yield i, candidate, None
                return
            yield i, candidate, read_file(candidate.path, key)
        return
    pool = ProcessPoolExecutor(min(workers, len(to_read)), mp_context=multiprocessing.get_context("spawn"),
                               initializer=die_with_parent, initargs=(os.getpid(),))
    stopped = False
    try:
        futures: dict[Future[IndexedFile[Any]], int] = {
            pool.submit(read_file, candidate.path, key): n for n, (_, candidate, key) in enumerate(to_read)}
        results: dict[int, IndexedFile[Any]] = {}
        next_up = 0
        for future in as_completed(futures):
            if cancelled():
                stopped = True
                i, candidate, _ = to_read[next_up]
                yield i, candidate, None
                return
            results[futures[future]] = future.result()
            while next_up in results:
                i, candidate, _ = to_read[next_up]
                yield i, candidate, results.pop(next_up)
                next_up += 1
    finally:
        pool.shutdown(wait=not stopped, cancel_futures=True)


def read_file(path: Path, key: FileKey | None) -> IndexedFile[Any]:
    """Read one model's header(s) into an index entry (run in a worker process, so it takes and returns plain data)."""
    shards = _shard_paths(path)
    try:
        headers = read_shards(path)
        spec = model_of(headers, path)
    except ModelLoadError as e:
        return IndexedFile(key=key or (), shards=len(shards), size_bytes=_size(shards), error=str(e))
    return IndexedFile(key=key or (), shards=len(spec.shards) or 1, size_bytes=spec.file_bytes, error=None,
                       architecture=spec.architecture, file_type=spec.file_type_name, n_params=spec.n_params,
                       headers=kept_headers(headers))


def _judged(indexed: IndexedFile[Any], assess: Callable[[ModelSpec], A],
            assess_key: str | None, judge: bool = True) -> IndexedFile[Any] | None:
    """Rule 4: the entry with its verdict for `assess_key` — kept from before, or made now from the
    kept spec (Rule 10: left as it is without `judge`); None when the kept spec cannot be read back (the
    file is then read again)."""
    if indexed.error is not None or (assess_key is not None and indexed.assess_key == assess_key):
        return indexed
    if not judge:
        return indexed if indexed.headers is not None else None
    spec = indexed.spec()
    if spec is None:
        return None
    return replace(indexed, assess_key=assess_key, assessment=assess(spec))


def judged(entry: LibraryEntry[A], assess: Callable[[ModelSpec], A],
           known: dict[tuple[str, FileKey], A] | None = None) -> LibraryEntry[A]:
    """Rule 10: `entry` with its verdict, judged now from the kept header — or taken from `known` (the verdicts
    judged before on the same settings, by path and file key), which keeps what is judged; an entry whose
    kept header cannot be read back stays without one (the next scan reads the file again)."""
    if entry.kept is None:
        return entry
    key = (entry.path, entry.kept.key)
    if known is not None and key in known:
        return replace(entry, kept=None, assessment=known[key])
    spec = entry.kept.spec()
    if spec is None:
        return replace(entry, kept=None)
    verdict = assess(spec)
    if known is not None:
        known[key] = verdict
    return replace(entry, kept=None, assessment=verdict)


def _entry(candidate: Candidate, indexed: IndexedFile[Any], assess_key: str | None) -> LibraryEntry[A]:
    fresh = indexed.error is not None or assess_key is None or indexed.assess_key == assess_key
    return LibraryEntry(kind=candidate.kind, name=candidate.name, path=str(candidate.path), shards=indexed.shards,
                        size_bytes=indexed.size_bytes, error=indexed.error, architecture=indexed.architecture,
                        file_type=indexed.file_type, n_params=indexed.n_params,
                        assessment=indexed.assessment if fresh else None, kept=None if fresh else indexed)


def _unreadable(candidate: Candidate, shards: list[Path]) -> LibraryEntry[A]:
    """Rule 2: a candidate whose problem is known before any read (a broken link, not a regular file)."""
    if candidate.problem is not None:
        return LibraryEntry(kind=candidate.kind, name=candidate.name, path=str(candidate.path), shards=1,
                            size_bytes=None, error=candidate.problem)
    problem = f"{safe_text(candidate.path.name)}: not a regular file (a FIFO, a device or a folder)"
    return LibraryEntry(kind=candidate.kind, name=candidate.name, path=str(candidate.path), shards=len(shards),
                        size_bytes=_size(shards), error=problem)


class _WalkLimit(Exception):
    """Rule 6: a store has more than MAX_FOLDERS folders."""


def _store_candidates(root: StoreRoot, cancelled: Callable[[], bool], real: _RealPaths) -> Iterator[Candidate]:
    try:
        yield from _by_layout(root, cancelled, real)
    except _WalkLimit:
        yield Candidate(root.kind, f"{safe_text(root.path.name)}: the rest", root.path,
                        f"stopped after {MAX_FOLDERS:,} folders: models deeper in {safe_text(root.path)} are not listed")


def _by_layout(root: StoreRoot, cancelled: Callable[[], bool], real: _RealPaths) -> Iterator[Candidate]:
    if root.kind is StoreKind.HUGGING_FACE:
        yield from _hugging_face(root, cancelled, real)
    elif root.kind is StoreKind.OLLAMA:
        yield from _ollama(root, cancelled, real)
    else:
        for found in _gguf_files(root, cancelled, real):
            yield Candidate(root.kind, found.path.name, found.path, _link_problem(found), found.real)


def _hugging_face(root: StoreRoot, cancelled: Callable[[], bool], real: _RealPaths) -> Iterator[Candidate]:
    for found in _gguf_files(root, cancelled, real):
        names = hf_name(PurePath(os.path.relpath(found.path, root.path)))
        if names is not None:
            repo, file = names
            yield Candidate(root.kind, f"{repo} · {file}", found.path, _link_problem(found), found.real)


def _ollama(root: StoreRoot, cancelled: Callable[[], bool], real: _RealPaths) -> Iterator[Candidate]:
    manifests = root.path / "manifests"
    for found in _files(StoreRoot(root.kind, manifests), lambda name: True, cancelled, real):
        manifest = found.path
        name = ollama_name(PurePath(os.path.relpath(manifest, manifests)))
        if name is None:
            continue
        try:
            text = read_text(manifest, FileKind.MANIFEST)
        except UnreadableFile as e:
            yield Candidate(root.kind, name, manifest, f"cannot read the manifest: {e}")
            continue
        blob = ollama_model_blob(text)
        if blob is None:
            continue
        path = root.path / "blobs" / blob
        problem = None if path.exists() else f"its model blob {blob[:19]}… is missing"
        yield Candidate(root.kind, name, path, problem)


@dataclass(frozen=True)
class _Found:
    """A file the walk met: its path as reached, its real path, and whether the path itself is a link."""

    path: Path
    real: str
    is_link: bool


class _RealPaths:
    """Rule 8: real paths of what the walk meets, resolving only the links it crosses.

    A child of a real folder that is not a link is real; a link's target is joined to the real
    folder it sits in, and the folder the target lands in is resolved once for every link into it.
    """

    def __init__(self) -> None:
        self._folders: dict[str, str] = {}

    def folder(self, path: str) -> str:
        real = self._folders.get(path)
        if real is None:
            real = self._folders[path] = _real(Path(path))
        return real

    def child(self, real_parent: str, name: str, is_link: bool) -> str:
        path = os.path.join(real_parent, name)
        if not is_link:
            return path
        try:
            target = os.readlink(path)
        except (OSError, ValueError):
            return _real(Path(path))
        head, tail = os.path.split(os.path.normpath(os.path.join(real_parent, target)))
        resolved = os.path.join(self.folder(head), tail)
        return _real(Path(resolved)) if os.path.islink(resolved) else resolved


def _gguf_files(root: StoreRoot, cancelled: Callable[[], bool], real: _RealPaths) -> Iterator[_Found]:
    return _files(root, is_listed, cancelled, real)


def _files(root: StoreRoot, wanted: Callable[[str], bool], cancelled: Callable[[], bool],
           real: _RealPaths) -> Iterator[_Found]:
    """Rule 1: files below the root whose name is `wanted` (links followed as Rule 5 allows, loops
    and unreadable folders passed over); Rule 6: at most MAX_FOLDERS folders, then a Candidate-less stop."""
    top = root.path
    inside = real.folder(str(top))
    visited: set[str] = set()
    stack = [(top, inside, 0)]
    while stack:
        if cancelled():
            return
        folder, real_folder, depth = stack.pop()
        if real_folder in visited or not _may_enter(root.kind, inside, real_folder):
            continue
        if len(visited) >= MAX_FOLDERS:
            raise _WalkLimit()
        visited.add(real_folder)
        try:
            with os.scandir(folder) as listing:
                items = sorted(listing, key=lambda e: e.name)
        except OSError:
            continue
        folders = []
        for item in items:
            try:
                is_dir = item.is_dir()
                is_link = item.is_symlink()
            except OSError:
                is_dir, is_link = False, False
            if is_dir:
                folders.append((Path(item.path), real.child(real_folder, item.name, is_link), depth + 1))
            elif wanted(item.name):
                yield _Found(Path(item.path), real.child(real_folder, item.name, is_link), is_link)
        if depth < MAX_DEPTH:
            stack.extend(reversed(folders))


def _may_enter(kind: StoreKind, inside: str, real: str) -> bool:
    """Rule 5: a tool's store is walked inside itself only; a folder the user added also through its
    links, but never into the kernel's folders or the whole filesystem's root."""
    if any(real == k or real.startswith(k + os.sep) for k in KERNEL_FOLDERS):
        return False
    if real == inside or real.startswith(inside.rstrip(os.sep) + os.sep):
        return True
    return kind is StoreKind.USER and real != os.sep


def _link_problem(found: _Found) -> str | None:
    if found.is_link and not found.path.exists():
        return f"{safe_text(found.path.name)}: a broken link (an unfinished download?)"
    return None


def _shard_paths(path: Path) -> list[Path]:
    try:
        return shard_paths(path)
    except ModelLoadError:
        return [path]


def _stat(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def _size(shards: list[Path]) -> int | None:
    try:
        return sum(p.stat().st_size for p in shards)
    except OSError:
        return None


def _real(path: Path) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return str(path)
