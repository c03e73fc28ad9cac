"""What a user may type instead of a local path, and which files of a Hub repository it names.

Rule 1: `https://…` and `http://…` name one file on any server (checked by `http.checked_url`);
        `hf://owner/repo[@rev]/path.gguf` names one file of a Hugging Face repository (a revision
        with slashes is written encoded, `@refs%2Fpr%2F1`, as huggingface_hub writes it); so does a
        Hub page or download link (`https://huggingface.co/owner/repo/resolve|blob/rev/path.gguf`),
        so its token is used.
Rule 2: `owner/repo:QUANT` is llama.cpp's shorthand (`-hf owner/repo:Q4_K_M`): the repository's
        GGUF files whose name carries QUANT as a whole word (case-insensitive), projector files
        (`mmproj`) excluded; of several models the first by path; a split model is all its shards.
Rule 3: a local path wins: anything that exists here, anything whose first folder exists here, and
        a bare `owner/repo` (no `:QUANT`) are local paths — a mistyped `models/llama` never goes to
        the Hub with the user's token. `hub_hint` says how to name a Hub model instead.
Rule 4: every part is checked before use: the repository id as huggingface_hub's
        `validate_repo_id` allows it, a revision of ref-name characters without `..`, a file path
        without `.`/`..`/empty segments or backslashes, a QUANT of at most 64 word characters.
No network and no HTTP client here (the command line imports this module); `hub.py` and `fetch.py`
do the I/O.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Callable, Iterable
from urllib.parse import quote, unquote, urlsplit

from gguf_budget.core.errors import RemoteError
from gguf_budget.core.remote.urls import checked_url, redacted
from gguf_budget.core.safe_text import safe_text

HUB_HOSTS = ("huggingface.co", "hf.co")
MAX_PATH_CHARS = 1024
_SHORTHAND = re.compile(r"^(?P<repo>[^/:\s]+/[^/:\s]+):(?P<quant>.*)$")
_BARE_REPO = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_QUANT = re.compile(r"[\w.-]{1,64}")
_REVISION = re.compile(r"[A-Za-z0-9._][A-Za-z0-9._/+-]{0,254}")
_HUB_PATH = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/(?:resolve|blob)/(?P<rev>[^/]+)/(?P<path>.+\.gguf)$")
_SHARD = re.compile(r"-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf$")


@dataclass(frozen=True)
class PlainUrl:
    """One file on an HTTP(S) server that is not the Hub; `url` may carry credentials, `describe` never."""

    url: str

    def describe(self) -> str:
        return redacted(self.url)


@dataclass(frozen=True)
class HubFile:
    """One file of a Hub repository at a revision."""

    repo: str
    path: str
    revision: str = "main"

    def describe(self) -> str:
        """The `hf://` address, which `parse_ref` reads back (a revision with slashes encoded)."""
        at = "" if self.revision == "main" else "@" + quote(self.revision, safe="")
        return f"hf://{self.repo}{at}/{self.path}"


@dataclass(frozen=True)
class HubQuant:
    """llama.cpp's `owner/repo:QUANT`: the repository's file(s) of that quantization."""

    repo: str
    quant: str
    revision: str = "main"

    def describe(self) -> str:
        return f"{self.repo}:{self.quant}"


RemoteRef = PlainUrl | HubFile | HubQuant


def parse_ref(text: str, exists: Callable[[str], bool] = os.path.exists) -> RemoteRef | None:
    """The remote file `text` names, or None for a local path (Rule 3); a malformed one is a `RemoteError`."""
    if text.startswith("hf://"):
        return _hf_url(text)
    if text.startswith(("https://", "http://")):
        return _web_url(checked_url(text))
    shorthand = _SHORTHAND.match(text)
    if shorthand is None or text.endswith(".gguf") or exists(text) or exists(text.split("/", 1)[0]):
        return None
    return HubQuant(_repo(shorthand["repo"], text), _quant(shorthand["quant"], text))


def names_remote(text: str, exists: Callable[[str], bool] = os.path.exists) -> bool:
    """Whether `text` is meant as a remote model (a malformed URL counts: opening it says what is wrong)."""
    try:
        return parse_ref(text, exists) is not None
    except RemoteError:
        return True


def hub_hint(text: str) -> str | None:
    """For a missing local path that reads like a Hub repository: how to name the Hub model instead."""
    if _BARE_REPO.match(text) and not text.endswith(".gguf"):
        return f"for a Hugging Face model write {text}:QUANT (e.g. {text}:Q4_K_M) or hf://{text}/FILE.gguf"
    return None


def hub_file(repo: str, path: str, revision: str) -> HubFile:
    """A file a repository listing named, checked as a typed one is (Rule 4)."""
    where = f"hf://{repo}/{path}"
    return HubFile(_repo(repo, where), _path(path, where), _revision(revision, where))


def _web_url(url: str) -> PlainUrl | HubFile:
    parts = urlsplit(url)
    match = _HUB_PATH.match(unquote(parts.path))
    if parts.hostname in HUB_HOSTS and match and parts.username is None:
        return HubFile(_repo(match["repo"], url), _path(match["path"], url), _revision(match["rev"], url))
    return PlainUrl(url)


def _hf_url(text: str) -> HubFile:
    shown = safe_text(text, 200)
    rest = text[len("hf://"):]
    parts = rest.split("/")
    if len(parts) < 3 or not parts[-1].endswith(".gguf"):
        raise RemoteError(f"an hf:// address names owner/repo/path/file.gguf: {shown}")
    owner, repo_rev = parts[0], parts[1]
    repo, at, revision = repo_rev.partition("@")
    return HubFile(_repo(f"{owner}/{repo}", text), _path("/".join(parts[2:]), text),
                   _revision(unquote(revision), text) if at else "main")


def _repo(repo: str, text: str) -> str:
    """Rule 4: a repository id the Hub can have (huggingface_hub imported here: only Hub references need it)."""
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id  # type: ignore[attr-defined]  # exported lazily

    try:
        validate_repo_id(repo)
    except HFValidationError:
        raise RemoteError(f"not a Hugging Face repository id ({safe_text(repo, 100)}): {safe_text(text, 200)}") from None
    if "/" not in repo:
        raise RemoteError(f"a Hugging Face repository is owner/name: {safe_text(text, 200)}")
    return repo


def _revision(revision: str, text: str) -> str:
    """Rule 4: a branch, tag or commit; never a path that climbs out of the repository."""
    if not _REVISION.fullmatch(revision) or ".." in revision or "//" in revision or revision.endswith("/"):
        raise RemoteError(f"not a revision (a branch, tag or commit): {safe_text(revision, 80)} in "
                          f"{safe_text(text, 200)}")
    return revision


def _path(path: str, text: str) -> str:
    """Rule 4: a file path inside the repository."""
    segments = path.split("/")
    if len(path) > MAX_PATH_CHARS or "\\" in path or any(s in ("", ".", "..") for s in segments) \
            or any(not c.isprintable() for c in path):
        raise RemoteError(f"not a file path inside the repository: {safe_text(text, 200)}")
    return path


def _quant(quant: str, text: str) -> str:
    if not _QUANT.fullmatch(quant):
        raise RemoteError(f"not a quantization name (like Q4_K_M): {safe_text(quant, 80)} in {safe_text(text, 200)}")
    return quant


def pick_quant_files(paths: Iterable[str], quant: str) -> tuple[str, ...]:
    """Rule 2: the file, or every shard of the split model, that `quant` names in a repository listing."""
    word = re.compile(rf"(?<![A-Za-z0-9]){re.escape(quant)}(?![A-Za-z0-9])", re.IGNORECASE)
    candidates = sorted(p for p in paths if p.endswith(".gguf") and "mmproj" not in PurePosixPath(p).name.lower()
                        and word.search(PurePosixPath(p).name))
    if not candidates:
        raise RemoteError(f"no GGUF file for {quant} in the repository (it has: {_quants_listed(paths)})")
    first = candidates[0]
    shard = _SHARD.search(first)
    if not shard:
        return (first,)
    stem = first[: shard.start()]
    count = int(shard["count"])
    names = tuple(f"{stem}-{i:05d}-of-{count:05d}.gguf" for i in range(1, count + 1))
    listed = set(candidates)
    missing = next((n for n in names if n not in listed), None)
    if missing is not None:
        raise RemoteError(f"the repository lacks shard {safe_text(PurePosixPath(missing).name, 200)} of "
                          f"{safe_text(first, 200)}")
    return names


def _quants_listed(paths: Iterable[str]) -> str:
    names = [safe_text(PurePosixPath(p).name, 100) for p in paths if p.endswith(".gguf")]
    return ", ".join(sorted(names)[:8]) + (" …" if len(names) > 8 else "") if names else "no GGUF files"
