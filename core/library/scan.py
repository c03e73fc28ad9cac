"""The library scan: every GGUF model in the stores, its header read, its fit judged.

Rule 1: stores are walked by their layout (`discover.py`): Hugging Face snapshot files (links
        into `blobs/`, resolved), Ollama manifests (their GGUF blob), and every `*.gguf` below
        any other folder, at most `MAX_DEPTH` folders deep. Folder links are followed once
        (a link loop is walked no further); the same file reached twice is listed once.
Rule 2: a file that cannot be read — a broken link (an unfinished download), no permission, not a
        GGUF file, a missing shard — is an entry with its one-line reason; it never stops the scan.
Rule 3: headers are read one by one, `progress(done, total)` after each, and `cancelled()`
        asked before each: a cancelled scan returns what it has, marked incomplete.
Rule 4: judging a model is the caller's (`assess`), so the scan needs no machine or budget.
The one impure module of the library: it lists folders and reads headers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Callable, Generic, Iterator, Sequence, TypeVar

from gguf_budget.core.errors import ModelLoadError
from gguf_budget.core.gguf.shards import shard_paths
from gguf_budget.core.library.discover import hf_name, is_listed, ollama_model_blob, ollama_name
from gguf_budget.core.library.stores import StoreKind, StoreRoot
from gguf_budget.core.model.loader import load_model
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.safe_text import safe_text

MAX_DEPTH = 8
MAX_MANIFEST_BYTES = 1 << 20
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


def candidates(roots: Sequence[StoreRoot]) -> list[Candidate]:
    """Rule 1: every model file of every store, each real file once, in store order."""
    found: list[Candidate] = []
    seen: set[str] = set()
    for root in roots:
        for candidate in _store_candidates(root):
            key = _real(candidate.path)
            if key not in seen:
                seen.add(key)
                found.append(candidate)
    return found


def scan(roots: Sequence[StoreRoot], assess: Callable[[ModelSpec], A],
         progress: Callable[[int, int], None] = lambda done, total: None,
         cancelled: Callable[[], bool] = lambda: False) -> Scan[A]:
    """Rules 2–4: read every candidate's header and judge it."""
    todo = candidates(roots)
    entries: list[LibraryEntry[A]] = []
    for i, candidate in enumerate(todo):
        if cancelled():
            return Scan(tuple(entries), tuple(roots), complete=False)
        entries.append(_entry(candidate, assess))
        progress(i + 1, len(todo))
    return Scan(tuple(entries), tuple(roots), complete=True)


def _entry(candidate: Candidate, assess: Callable[[ModelSpec], A]) -> LibraryEntry[A]:
    path = candidate.path
    shards = _shard_count(path)
    size = _size(path, shards)
    if candidate.problem is not None:
        return LibraryEntry(candidate.kind, candidate.name, str(path), shards, size, candidate.problem)
    if not os.path.isfile(path):
        return LibraryEntry(candidate.kind, candidate.name, str(path), shards, size,
                            f"{safe_text(path.name)}: not a regular file (a FIFO, a device or a folder)")
    try:
        spec = load_model(path)
    except ModelLoadError as e:
        return LibraryEntry(candidate.kind, candidate.name, str(path), shards, size, str(e))
    return LibraryEntry(candidate.kind, candidate.name, str(path), len(spec.shards) or 1, spec.file_bytes, None,
                        spec.architecture, spec.file_type_name, spec.n_params, assess(spec))


def _store_candidates(root: StoreRoot) -> Iterator[Candidate]:
    if root.kind is StoreKind.HUGGING_FACE:
        yield from _hugging_face(root)
    elif root.kind is StoreKind.OLLAMA:
        yield from _ollama(root)
    else:
        for path in _gguf_files(root.path):
            yield Candidate(root.kind, path.name, path, _link_problem(path))


def _hugging_face(root: StoreRoot) -> Iterator[Candidate]:
    for path in _gguf_files(root.path):
        names = hf_name(PurePath(os.path.relpath(path, root.path)))
        if names is not None:
            repo, file = names
            yield Candidate(root.kind, f"{repo} · {file}", path, _link_problem(path))


def _ollama(root: StoreRoot) -> Iterator[Candidate]:
    manifests = root.path / "manifests"
    for manifest in _files(manifests, lambda p: True):
        name = ollama_name(PurePath(os.path.relpath(manifest, manifests)))
        if name is None:
            continue
        try:
            with open(manifest, "rb") as f:
                text = f.read(MAX_MANIFEST_BYTES).decode("utf-8", "replace")
        except OSError as e:
            yield Candidate(root.kind, name, manifest, f"cannot read the manifest: {e.strerror or e}")
            continue
        blob = ollama_model_blob(text)
        if blob is None:
            continue
        path = root.path / "blobs" / blob
        problem = None if path.exists() else f"its model blob {blob[:19]}… is missing"
        yield Candidate(root.kind, name, path, problem)


def _gguf_files(top: Path) -> Iterator[Path]:
    return _files(top, lambda p: is_listed(p.name))


def _files(top: Path, wanted: Callable[[Path], bool]) -> Iterator[Path]:
    """Rule 1: files below `top` (links followed, loops and unreadable folders passed over)."""
    visited: set[str] = set()
    stack = [(top, 0)]
    while stack:
        folder, depth = stack.pop()
        real = _real(folder)
        if real in visited:
            continue
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
