"""Addresses checked and shown before any request: no HTTP client here (the command line imports this).

Rule 1: a URL is checked before use: http or https, a host that is a valid name or address of at
        most 253 characters (labels of at most 63), a port in range, no whitespace or control
        characters, at most `MAX_URL_CHARS` characters; the HTTP client checks it once more as it
        sends (`http.py`).
Rule 2: credentials written into a URL (`https://user:pass@host/…`) are used for the request but
        `redacted` out of every text shown or stored.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from gguf_budget.core.errors import RemoteError
from gguf_budget.core.safe_text import safe_text

MAX_URL_CHARS = 4096
MAX_HOST_CHARS = 253
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")


def checked_url(text: str) -> str:
    """Rule 1: `text` as a URL fit to request, or a one-line `RemoteError` saying what is wrong."""
    shown = safe_text(redacted(text), 120)
    if len(text) > MAX_URL_CHARS:
        raise RemoteError(f"the URL is {len(text):,} characters long (at most {MAX_URL_CHARS:,}): {shown}")
    if any(c.isspace() or not c.isprintable() for c in text):
        raise RemoteError(f"the URL holds spaces or control characters: {shown}")
    try:
        parts = urlsplit(text)
        port = parts.port
        host = parts.hostname
    except ValueError as e:
        raise RemoteError(f"not a valid URL ({safe_text(str(e), 80)}): {shown}") from None
    if parts.scheme not in ("http", "https"):
        raise RemoteError(f"only http and https URLs can be read: {shown}")
    if not host:
        raise RemoteError(f"not a URL with a host: {shown}")
    if len(host) > MAX_HOST_CHARS or any(len(label) > 63 for label in host.split(".")):
        raise RemoteError(f"the host name is too long to be a host: {shown}")
    if port == 0:
        raise RemoteError(f"port 0 is not a port to connect to: {shown}")
    try:
        host.encode("idna")
    except UnicodeError:
        raise RemoteError(f"not a host name: {shown}") from None
    return text


def redacted(url: str) -> str:
    """Rule 2: the URL without the user name and password written into it (if any), parseable or not."""
    return _USERINFO.sub(r"\1", url, count=1)


def host_of(url: str) -> str:
    try:
        return urlsplit(url).hostname or "the server"
    except ValueError:
        return "the server"
