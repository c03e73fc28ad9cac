"""The library scan: every GGUF model in the stores, its header read, its fit judged.

Rule 1: stores are walked by their layout (`discover.py`): Hugging Face snapshot files (links
        into `blobs/`, resolved), Ollama manifests (their GGUF blob), and every `*.gguf` below
        any other folder, at most `MAX_DEPTH` folders deep. Folder links are followed once, as
        Rule 5 allows (a link loop is walked no further); the same file reached twice is listed once.
        Manifests are read like every small file (`core.regular_file`: never a FIFO, at most 1 MiB).
Rule 2: a file that cannot be read — a broken link (an unfinished download), no permission, not a
        GGUF file, a missing shard — is an entry with its one-line reason; it never stops the scan.
Rule 3: `cancelled()` is asked before each folder is listed and before each header is read, and
        headers are read one by one, `progress(done, total)` after each: a cancelled scan returns
        what it has, marked incomplete, within one folder listing or one header read.
Rule 4: judging a model is the caller's (`assess`), so the scan needs no machine or budget.
Rule 5: a tool's store is walked inside itself: a folder link out of it (`snapshots/r1/x -> /`) is
        not followed. A folder the user added is walked through its links too (models kept on
        another disk), but not to the filesystem's root; no walk enters /proc or /sys.
Rule 6: a store is walked through at most MAX_FOLDERS folders; past that the scan lists one
        entry saying the rest was not walked (a store set to `/` or a home folder never walks
        the whole disk).
The one impure module of the library: it lists folders and reads headers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Callable, Generic, Iterator, Sequence, TypeVar

from gguf_budget.core.errors import ModelLoadError, UnreadableFile
from gguf_budget.core.gguf.shards import shard_paths
from gguf_budget.core.library.discover import hf_name, is_listed, ollama_model_blob, ollama_name
from gguf_budget.core.library.stores import StoreKind, StoreRoot
from gguf_budget.core.model.loader import load_model
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.regular_file import KERNEL_FOLDERS, FileKind, read_text
from gguf_budget.core.safe_text import safe_text

MAX_DEPTH = 8
MAX_FOLDERS = 20_000
A = TypeVar("A")


@dataclass(frozen=True)
class Candidate:
    """A file a store says is a model, before its header is read."""

    kind: StoreKind
    name: str
    path: Path
    problem: str | None = None


@dataclass(frozen=True)
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
    for root in roots:
        for candidate in _store_candidates(root, cancelled):
            key = _real(candidate.path)
            if key not in seen:
                seen.add(key)
                found.append(candidate)
    return found


def scan(roots: Sequence[StoreRoot], assess: Callable[[ModelSpec], A],
         progress: Callable[[int, int], None] = lambda done, total: None,
         cancelled: Callable[[], bool] = lambda: False) -> Scan[A]:
    """Rules 2–4: read every candidate's header and judge it."""
    todo = candidates(roots, cancelled)
    entries: list[LibraryEntry[A]] = []
    for i, candidate in enumerate(todo):
        if cancelled():
            return Scan(tuple(entries), tuple(roots), complete=False)
        entries.append(_entry(candidate, assess))
        progress(i + 1, len(todo))
    return Scan(tuple(entries), tuple(roots), complete=not cancelled())


def _entry(candidate: Candidate, assess: Callable[[ModelSpec], A]) -> LibraryEntry[A]:
    path = candidate.path
    if candidate.problem is not None:
        return LibraryEntry(candidate.kind, candidate.name, str(path), 1, None, candidate.problem)
    shards = _shard_count(path)
    size = _size(path, shards)
    if not os.path.isfile(path):
        return LibraryEntry(candidate.kind, candidate.name, str(path), shards, size,
                            f"{safe_text(path.name)}: not a regular file (a FIFO, a device or a folder)")
    try:
        spec = load_model(path)
    except ModelLoadError as e:
        return LibraryEntry(candidate.kind, candidate.name, str(path), shards, size, str(e))
    return LibraryEntry(candidate.kind, candidate.name, str(path), len(spec.shards) or 1, spec.file_bytes, None,
                        spec.architecture, spec.file_type_name, spec.n_params, assess(spec))


class _WalkLimit(Exception):
    """Rule 6: a store has more than MAX_FOLDERS folders."""


def _store_candidates(root: StoreRoot, cancelled: Callable[[], bool]) -> Iterator[Candidate]:
    try:
        yield from _by_layout(root, cancelled)
    except _WalkLimit:
        yield Candidate(root.kind, f"{safe_text(root.path.name)}: the rest", root.path,
                        f"stopped after {MAX_FOLDERS:,} folders: models deeper in {safe_text(root.path)} are not listed")


def _by_layout(root: StoreRoot, cancelled: Callable[[], bool]) -> Iterator[Candidate]:
    if root.kind is StoreKind.HUGGING_FACE:
        yield from _hugging_face(root, cancelled)
    elif root.kind is StoreKind.OLLAMA:
        yield from _ollama(root, cancelled)
    else:
        for path in _gguf_files(root, cancelled):
            yield Candidate(root.kind, path.name, path, _link_problem(path))


def _hugging_face(root: StoreRoot, cancelled: Callable[[], bool]) -> Iterator[Candidate]:
    for path in _gguf_files(root, cancelled):
        names = hf_name(PurePath(os.path.relpath(path, root.path)))
        if names is not None:
            repo, file = names
            yield Candidate(root.kind, f"{repo} · {file}", path, _link_problem(path))


def _ollama(root: StoreRoot, cancelled: Callable[[], bool]) -> Iterator[Candidate]:
    manifests = root.path / "manifests"
    for manifest in _files(StoreRoot(root.kind, manifests), lambda p: True, cancelled):
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


def _gguf_files(root: StoreRoot, cancelled: Callable[[], bool]) -> Iterator[Path]:
    return _files(root, lambda p: is_listed(p.name), cancelled)


def _files(root: StoreRoot, wanted: Callable[[Path], bool], cancelled: Callable[[], bool]) -> Iterator[Path]:
    """Rule 1: files below the root (links followed as Rule 5 allows, loops and unreadable folders
    passed over); Rule 6: at most MAX_FOLDERS folders, then a Candidate-less stop."""
    top = root.path
    inside = _real(top)
    visited: set[str] = set()
    stack = [(top, 0)]
    while stack:
        if cancelled():
            return
        folder, depth = stack.pop()
        real = _real(folder)
        if real in visited or not _may_enter(root.kind, inside, real):
            continue
        if len(visited) >= MAX_FOLDERS:
            raise _WalkLimit()
        visited.add(real)
        try:
            with os.scandir(folder) as listing:
                items = sorted(listing, key=lambda e: e.name)
        except OSError:
            continue
        folders = []
        for item in items:
            path = Path(item.path)
            try:
                is_dir = item.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                folders.append(path)
            elif wanted(path):
                yield path
        if depth < MAX_DEPTH:
            stack.extend((f, depth + 1) for f in reversed(folders))


def _may_enter(kind: StoreKind, inside: str, real: str) -> bool:
    """Rule 5: a tool's store is walked inside itself only; a folder the user added also through its
    links, but never into the kernel's folders or the whole filesystem's root."""
    if any(real == k or real.startswith(k + os.sep) for k in KERNEL_FOLDERS):
        return False
    if real == inside or real.startswith(inside.rstrip(os.sep) + os.sep):
        return True
    return kind is StoreKind.USER and real != os.sep


def _link_problem(path: Path) -> str | None:
    if path.is_symlink() and not path.exists():
        return f"{safe_text(path.name)}: a broken link (an unfinished download?)"
    return None


def _shard_count(path: Path) -> int:
    try:
        return len(shard_paths(path))
    except ModelLoadError:
        return 1


def _size(path: Path, shards: int) -> int | None:
    try:
        return sum(p.stat().st_size for p in shard_paths(path)) if shards > 1 else path.stat().st_size
    except (OSError, ModelLoadError):
        return None


def _real(path: Path) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return str(path)
