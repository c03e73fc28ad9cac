"""Untrusted metadata strings made safe to show: control characters escaped, length capped.

A GGUF file's name or chat template is written by whoever made the file; printing it raw
could move a terminal's cursor or flood a label. Both CLI and GUI show text through here.
"""

from __future__ import annotations

DEFAULT_LIMIT = 120


def safe_text(value: object, limit: int = DEFAULT_LIMIT) -> str:
    text = str(value)
    out = []
    for ch in text[: limit + 1]:
        code = ord(ch)
        if code < 0x20 or 0x7F <= code < 0xA0 or code in (0x2028, 0x2029, 0x202E):
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    escaped = "".join(out)
    if len(text) > limit:
        return escaped[:limit] + f"… (+{len(text) - limit} chars)"
    return escaped
