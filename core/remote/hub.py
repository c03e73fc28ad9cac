"""The Hugging Face Hub: file URLs, repository listings and the user's token.

Rule 1: the endpoint is `HF_ENDPOINT` when set (a mirror, or a test server), else huggingface.co;
        it must be an http(s) URL (`http.checked_url`).
Rule 2: the token is huggingface_hub's (`HF_TOKEN`, else a stored `hf auth login`); it is sent only
        to URLs inside the repository's own path on the endpoint (`inside_repository`), and httpx
        drops it when a redirect leaves for a CDN host.
Rule 3: listing a repository is the only Hub API call: `GET /api/models/{repo}/tree/{rev}?recursive=true`,
        following the `Link: rel=next` pages, through the HTTP policy (deadline per page and for the
        whole listing, at most `listing_pages` pages of at most `listing_cap` bytes). Its answer must
        be JSON lists of entries with a string `path`; anything else (an HTML page, nesting too deep
        to parse) is one line. huggingface_hub's own listing (`HfApi.list_repo_files`) is not used:
        it has no deadline, retried 25 s before failing offline, and let its httpx errors and a
        RecursionError escape.
Rule 4: a missing, private, gated repository or revision is one line (the Hub's `X-Error-Code`).
"""

from __future__ import annotations

import json
import os
import time
from urllib.parse import quote, urljoin, urlsplit

import httpx
from huggingface_hub import hf_hub_url
from huggingface_hub.utils import build_hf_headers  # type: ignore[attr-defined]  # exported lazily

from gguf_budget.core.errors import RemoteError
from gguf_budget.core.remote.http import deadline, identity_body, network_error, too_late
from gguf_budget.core.remote.urls import checked_url, redacted
from gguf_budget.core.remote.limits import FetchLimits
from gguf_budget.core.remote.refs import HubFile, HubQuant, hub_file, pick_quant_files
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.version import __version__

DEFAULT_ENDPOINT = "https://huggingface.co"


def endpoint() -> str:
    """Rule 1."""
    return checked_url((os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/"))


def file_url(ref: HubFile) -> str:
    url = hf_hub_url(ref.repo, ref.path, revision=ref.revision, endpoint=endpoint())
    if not inside_repository(url, ref.repo):
        raise RemoteError(f"hf://{ref.repo}: the file's address leaves the repository: {safe_text(url, 200)}")
    return url


def inside_repository(url: str, repo: str) -> bool:
    """Rule 2: `url`, normalised as httpx sends it, stays on the endpoint and in `/{repo}/resolve/`."""
    target, home = httpx.URL(url), httpx.URL(endpoint())
    prefix = home.path.rstrip("/") + f"/{repo}/resolve/"
    return (target.scheme, target.host, target.port) == (home.scheme, home.host, home.port) and \
        target.path.startswith(prefix) and "/../" not in target.path + "/"


def headers() -> dict[str, str]:
    return build_hf_headers(library_name="gguf-budget", library_version=__version__)


def resolve_quant(client: httpx.Client, ref: HubQuant, limits: FetchLimits) -> tuple[HubFile, ...]:
    """The file, or all shards, `owner/repo:QUANT` names (refs.py Rule 2), from the repository listing."""
    picked = pick_quant_files(list_files(client, ref, limits), ref.quant)
    return tuple(hub_file(ref.repo, path, ref.revision) for path in picked)


def list_files(client: httpx.Client, ref: HubQuant, limits: FetchLimits) -> list[str]:
    """Rule 3: every file path of the repository at the revision."""
    url: str | None = f"{endpoint()}/api/models/{ref.repo}/tree/{quote(ref.revision, safe='')}?recursive=true"
    paths: list[str] = []
    with deadline(limits.file_deadline):
        for _ in range(limits.listing_pages):
            if url is None:
                return paths
            page, url = _page(client, url, ref, limits)
            paths += page
    if url is not None:
        raise RemoteError(f"listing {ref.repo} took more than {limits.listing_pages} pages; stopped there")
    return paths


def _page(client: httpx.Client, url: str, ref: HubQuant, limits: FetchLimits) -> tuple[list[str], str | None]:
    started = time.monotonic()
    try:
        with deadline(limits.request_deadline(limits.listing_cap)), \
                client.stream("GET", url, headers=headers()) as response:
            _raise_for_listing(response, ref)
            body = bytearray()
            for piece in identity_body(response):
                body += piece
                if len(body) > limits.listing_cap:
                    raise RemoteError(f"listing {ref.repo}: the Hub's answer is larger than "
                                      f"{limits.listing_cap:,} bytes")
            following = response.links.get("next", {}).get("url")
    except httpx.TimeoutException:
        raise too_late(f"listing {ref.repo}", limits, limits.listing_cap, started) from None
    except (httpx.HTTPError, httpx.InvalidURL) as e:
        raise network_error(e, url, limits, hub=True) from None
    return _paths(bytes(body), ref), _next_page(url, following)


def _next_page(url: str, following: str | None) -> str | None:
    """The next page's URL, which must stay on the endpoint (the token goes with it)."""
    if following is None:
        return None
    try:
        absolute = urljoin(url, following)
        elsewhere = urlsplit(absolute).hostname != urlsplit(url).hostname
    except ValueError:
        raise RemoteError(f"the Hub's listing points to an address that is not a URL: "
                          f"{safe_text(following, 120)}") from None
    if elsewhere:
        raise RemoteError(f"the Hub's listing points to another host: {safe_text(redacted(absolute), 120)}")
    return checked_url(absolute)


def _paths(body: bytes, ref: HubQuant) -> list[str]:
    """Rule 3: the `path` of each `file` entry of one JSON page."""
    try:
        entries = json.loads(body)
    except (ValueError, RecursionError):
        raise RemoteError(f"listing {ref.repo}: the Hub's answer is not JSON (a proxy's page?)") from None
    if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("path"), str)
                                                for e in entries):
        raise RemoteError(f"listing {ref.repo}: the Hub's answer is not a list of files")
    return [e["path"] for e in entries if e.get("type", "file") == "file"]


def _raise_for_listing(response: httpx.Response, ref: HubQuant) -> None:
    """Rule 4."""
    status = response.status_code
    if status == 200:
        return
    code = response.headers.get("x-error-code", "")
    if code == "GatedRepo":
        raise RemoteError(f"{ref.repo} is gated: accept its terms on the Hub and set HF_TOKEN")
    if code == "RevisionNotFound":
        raise RemoteError(f"{ref.repo} has no revision {safe_text(ref.revision, 80)}")
    if status in (401, 403, 404):
        raise RemoteError(f"no such Hub repository (or it is private: set HF_TOKEN): {ref.repo}")
    raise RemoteError(f"listing {ref.repo} failed: the Hub answered {status}")
