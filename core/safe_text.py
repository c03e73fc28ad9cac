"""Untrusted text made safe to show: the one escaping function for every terminal line and widget.

A GGUF file's name, architecture or chat template is written by whoever made the file, and a
file name may not even be UTF-8; printed raw they could clear a terminal, plant a link, turn
text around or crash the print. CLI and GUI show such text only through `safe_text`.

Rule 1: control characters (C0, DEL, C1), the line and paragraph separators, every bidi
        control (U+061C, U+200E/F, U+202A–202E, U+2066–2069) and lone surrogates (what a
        non-UTF-8 file name decodes to) are written as visible escapes: `\\x1b`, `\\u202e`,
        `\\udcff`. Everything else, other scripts and emoji included, is shown as it is.
Rule 2: text longer than `limit` characters is cut and says how many were cut; `limit=None`
        keeps it all.
Rule 3: escapes are plain ASCII, so escaping escaped text changes nothing.
Rule 4: `safe_lines` keeps the line breaks of a text the program itself laid out (a report)
        and escapes inside each line.
"""

from __future__ import annotations

import re

DEFAULT_LIMIT = 120

_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_text(value: object, limit: int | None = DEFAULT_LIMIT) -> str:
    """`value` as one line of visible characters, at most about `limit` of them (Rules 1–3)."""
    text = str(value)
    if limit is None or len(text) <= limit:
        return _UNSAFE.sub(_escape, text)
    escaped = _UNSAFE.sub(_escape, text[: limit + 1])
    return escaped[:limit] + f"… (+{len(text) - limit} chars)"


def safe_lines(text: str) -> str:
    """A multi-line text the program laid out, each line escaped and none cut (Rule 4)."""
    return "\n".join(safe_text(line, None) for line in text.split("\n"))
