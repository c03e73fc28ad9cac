"""What a user may type instead of a local path, and which files of a Hub repository it names.

Rule 1: `https://…` and `http://…` name one file on any server; `hf://owner/repo[@rev]/path.gguf`
        names one file of a Hugging Face repository; so does a Hub page or download link
        (`https://huggingface.co/owner/repo/resolve|blob/rev/path.gguf`), so its token is used.
Rule 2: `owner/repo:QUANT` is llama.cpp's shorthand (`-hf owner/repo:Q4_K_M`): the repository's
        GGUF files whose name carries QUANT as a whole word (case-insensitive), projector files
        (`mmproj`) excluded; of several models the first by path; a split model is all its shards.
        A bare `owner/repo` means Q4_K_M, as llama.cpp does.
Rule 3: anything else is a local path — and an existing local file always wins over Rule 2.
Pure: no network here; `hub.py` and `fetch.py` do the I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Iterable
from urllib.parse import unquote, urlsplit

from gguf_budget.core.errors import RemoteError

DEFAULT_QUANT = "Q4_K_M"
HUB_HOSTS = ("huggingface.co", "hf.co")
_REPO = r"[A-Za-z0-9][\w.-]*/[\w.-]+"
_SHORTHAND = re.compile(rf"^(?P<repo>{_REPO})(?::(?P<quant>[\w.-]+))?$")
_HUB_PATH = re.compile(rf"^/(?P<repo>{_REPO})/(?:resolve|blob)/(?P<rev>[^/]+)/(?P<path>.+\.gguf)$")
_SHARD = re.compile(r"-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf$")


@dataclass(frozen=True)
class PlainUrl:
    """One file on an HTTP(S) server that is not the Hub."""

    url: str

    def describe(self) -> str:
        return self.url


@dataclass(frozen=True)
class HubFile:
    """One file of a Hub repository at a revision."""

    repo: str
    path: str
    revision: str = "main"

    def describe(self) -> str:
        return f"hf://{self.repo}/{self.path}" + ("" if self.revision == "main" else f" @ {self.revision}")


@dataclass(frozen=True)
class HubQuant:
    """llama.cpp's `owner/repo:QUANT`: the repository's file(s) of that quantization."""

    repo: str
    quant: str
    revision: str = "main"

    def describe(self) -> str:
        return f"{self.repo}:{self.quant}"


RemoteRef = PlainUrl | HubFile | HubQuant


def parse_ref(text: str, local_exists: bool = False) -> RemoteRef | None:
    """The remote file `text` names, or None for a local path (Rule 3)."""
    if local_exists:
        return None
    if text.startswith("hf://"):
        return _hf_url(text)
    if text.startswith(("https://", "http://")):
        parts = urlsplit(text)
        match = _HUB_PATH.match(unquote(parts.path))
        if parts.hostname in HUB_HOSTS and match:
            return HubFile(match["repo"], match["path"], match["rev"])
        if not parts.hostname:
            raise RemoteError(f"not a URL with a host: {text}")
        return PlainUrl(text)
    match = _SHORTHAND.match(text)
    if match and not text.endswith(".gguf") and not text.startswith((".", "/")):
        return HubQuant(match["repo"], match["quant"] or DEFAULT_QUANT)
    return None


def _hf_url(text: str) -> HubFile:
    rest = text[len("hf://"):]
    parts = rest.split("/")
    if len(parts) < 3 or not parts[-1].endswith(".gguf"):
        raise RemoteError(f"an hf:// address names owner/repo/path/file.gguf: {text}")
    owner, repo_rev = parts[0], parts[1]
    repo, _, revision = repo_rev.partition("@")
    return HubFile(f"{owner}/{repo}", "/".join(parts[2:]), revision or "main")


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
    missing = [n for n in names if n not in set(candidates)]
    if missing:
        raise RemoteError(f"the repository lacks shard {PurePosixPath(missing[0]).name} of {first}")
    return names


def _quants_listed(paths: Iterable[str]) -> str:
    names = [PurePosixPath(p).name for p in paths if p.endswith(".gguf")]
    return ", ".join(sorted(names)[:8]) + (" …" if len(names) > 8 else "") if names else "no GGUF files"
