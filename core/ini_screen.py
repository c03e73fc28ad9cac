"""A settings file in Qt's INI format, screened before Qt reads it: what Qt would choke on never reaches it.

Qt reads a value that starts with `@Type(` as a typed value: `@Variant(…)` is deserialized by
QDataStream, recursively — a value nested 20,000 deep (340 KB) crashes the process with SIGSEGV,
at every start, since the file is read at every start. Pure: text in, the lines to keep out.

Rule 1: a line is kept only when it is a `[group]` header or a `key=value` line whose
        `group/key` the app writes (`written`, a predicate), at most MAX_LINE_CHARS long.
Rule 2: a value is kept only when Qt reads it as text: it does not start with `@` (Qt writes a
        leading `@` of a string as `@@`), and no element of it does, Qt splitting a list at its
        top-level commas, quoted or not — except the typed values the app itself writes (`typed`:
        `@ByteArray(` for the window's geometry) and the forms Qt writes for text (`TEXT_FORMS`).
Rule 3: everything else — comments, keys of other programs, typed values, over-long lines, text
        that is not a line — is refused, each with its reason, never silently.
Rule 4: a value that leaves a quote open, or ends in a backslash, is refused: Qt's reader would go
        on into the lines after it (a line-by-line screen would then not be what Qt reads).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Mapping

MAX_LINE_CHARS = 256 * 1024
"""Rule 1: eight recent paths of 4,096 characters, every character escaped as Qt writes it (`\\xNN`), fit."""
TEXT_FORMS = ("@Invalid()", "@String(")
"""Rule 2: typed forms Qt itself writes for plain text (a string with control characters is `@String(…)`)
and reads back without QDataStream."""
_GROUP = re.compile(r"\[([^\[\]]{1,256})\]")
_KEY = re.compile(r"[A-Za-z0-9_./%-]{1,256}")


@dataclass(frozen=True)
class Screened:
    """The file as Qt may read it, and why each refused line was refused (line number: reason)."""

    text: str
    refused: tuple[str, ...]


def list_elements(value: str) -> list[str] | None:
    """Rule 2: the elements Qt's INI reader makes of `value` (split at commas outside quotes), unquoted;
    None when a quote is left open or the line ends in a backslash (Rule 4)."""
    elements, current, quoted, escaped = [], [], False, False
    for c in value:
        if escaped:
            current.append(c)
            escaped = False
        elif c == "\\":
            current.append(c)
            escaped = True
        elif c == '"':
            quoted = not quoted
        elif c == "," and not quoted:
            elements.append("".join(current).strip())
            current = []
        else:
            current.append(c)
    elements.append("".join(current).strip())
    return None if quoted or escaped else elements


def _typed_ok(value: str, allowed: tuple[str, ...]) -> bool:
    """Rule 2."""
    elements = list_elements(value.strip())
    if elements is None:
        return False
    return all(not e.startswith("@") or e.startswith(("@@", *TEXT_FORMS, *allowed)) for e in elements)


def screen_ini(text: str, written: Callable[[str], bool],
               typed: Mapping[str, tuple[str, ...]] | None = None) -> Screened:
    """Rules 1–3 over a whole file's text."""
    typed = typed or {}
    kept: list[str] = []
    refused: list[str] = []
    group = "General"
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        if len(line) > MAX_LINE_CHARS:
            refused.append(f"line {number}: {len(line):,} characters long")
            continue
        header = _GROUP.fullmatch(stripped)
        if header:
            group = header[1]
            kept.append(stripped)
            continue
        key, sep, value = line.partition("=")
        name = f"{group}/{key.strip()}"
        if not sep or not _KEY.fullmatch(key.strip()):
            refused.append(f"line {number}: not a key=value line")
        elif not written(name):
            refused.append(f"line {number}: {name[:80]} is not a key this app writes")
        elif list_elements(value.strip()) is None:
            refused.append(f"line {number}: {name} leaves a quote open or ends in a backslash (Qt would read on "
                           "into the lines after it)")
        elif not _typed_ok(value, typed.get(name, ())):
            refused.append(f"line {number}: {name} holds a typed value ({value.strip()[:20]}…) the app never writes")
        else:
            kept.append(f"{key.strip()}={value.strip()}")
    return Screened(_without_empty_groups(kept), tuple(refused))


def _without_empty_groups(lines: list[str]) -> str:
    out: list[str] = []
    for i, line in enumerate(lines):
        is_header = _GROUP.fullmatch(line) is not None
        if is_header and (i + 1 == len(lines) or _GROUP.fullmatch(lines[i + 1]) is not None):
            continue
        out.append(("\n" if is_header and out else "") + line)
    return "\n".join(out) + ("\n" if out else "")
