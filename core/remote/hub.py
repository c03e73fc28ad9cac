"""The Hugging Face Hub through `huggingface_hub`: file URLs, repository listings and the user's token.

Rule 1: the endpoint is `HF_ENDPOINT` when set (a mirror, or a test server), else huggingface.co.
Rule 2: the token is the library's: `HF_TOKEN`, else a stored `hf auth login`; it goes only to the
        Hub (httpx drops it when a redirect leaves for a CDN host).
Rule 3: listing a repository is the only Hub API call; a missing or gated repository is one line.
"""

from __future__ import annotations

import os

from huggingface_hub import HfApi, hf_hub_url
from huggingface_hub.errors import GatedRepoError, HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError
from huggingface_hub.utils import build_hf_headers  # type: ignore[attr-defined]  # exported lazily

from gguf_budget.core.errors import RemoteError
from gguf_budget.core.remote.refs import HubFile, HubQuant, pick_quant_files
from gguf_budget.core.version import __version__

DEFAULT_ENDPOINT = "https://huggingface.co"


def endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def file_url(ref: HubFile) -> str:
    return hf_hub_url(ref.repo, ref.path, revision=ref.revision, endpoint=endpoint())


def headers() -> dict[str, str]:
    return build_hf_headers(library_name="gguf-budget", library_version=__version__)


def resolve_quant(ref: HubQuant, timeout_s: float) -> tuple[HubFile, ...]:
    """The file, or all shards, `owner/repo:QUANT` names (refs.py Rule 2), from the repository listing."""
    try:
        listing = HfApi(endpoint=endpoint()).list_repo_files(ref.repo, revision=ref.revision)
    except GatedRepoError:
        raise RemoteError(f"{ref.repo} is gated: accept its terms on the Hub and set HF_TOKEN") from None
    except RepositoryNotFoundError:
        raise RemoteError(f"no such Hub repository (or it is private: set HF_TOKEN): {ref.repo}") from None
    except RevisionNotFoundError:
        raise RemoteError(f"{ref.repo} has no revision {ref.revision}") from None
    except HfHubHTTPError as e:
        status = e.response.status_code if e.response is not None else None
        if status in (401, 404):
            raise RemoteError(f"no such Hub repository (or it is private: set HF_TOKEN): {ref.repo}") from None
        raise RemoteError(f"listing {ref.repo} failed: the Hub answered {status}") from None
    except OSError as e:
        raise RemoteError(f"listing {ref.repo} failed: {type(e).__name__}") from None
    return tuple(HubFile(ref.repo, path, ref.revision) for path in pick_quant_files(listing, ref.quant))
